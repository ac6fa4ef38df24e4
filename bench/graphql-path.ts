// The GraphQL execution path against the REST shim: the same service process, the three GraphQL operations of the
// load bench and the two REST paths that run the same resolvers (the shim's direct graphql-js runner), alternating,
// medians of --repeat runs. With --profile=DIR the service runs under `node --cpu-prof` and each target gets a
// service of its own, so each .cpuprofile holds one target's load (summarise with bench/cpu-profile-summary.ts).
//   npm run build && node dist/bench/graphql-path.js [--repeat=3] [--seconds=10] [--profile=/tmp/prof]
import { mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "./table.js";
import { cpuMs, createBenchDb } from "./proc.js";
import { createTenant } from "./tenant.js";
import { seed, targets, type Target } from "./load-targets.js";
import { cannon, startServers } from "./load.js";
import { ADMIN_TOKEN } from "./support/service.js";

const NAMES = [
  "POST /qr/generate",
  "GraphQL generateQr",
  "POST /qr/check",
  "GraphQL qrTransaction",
  "GraphQL transactions(first: 20)",
];

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const repeat = Number(arg("repeat") ?? 3);
const seconds = Number(arg("seconds") ?? 10);
const profileDir = arg("profile");

interface Row {
  rps: number[];
  cpu: number[];
}

/** One service (and database) for `chosen`; each target `repeat` times, alternating. */
async function measure(chosenNames: string[], rows: Map<string, Row>, profileAs?: string): Promise<void> {
  const db = await createBenchDb();
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-gqlpath-"));
  const profTmp = profileDir === undefined ? undefined : mkdtempSync(join(tmpdir(), "pqr-prof-"));
  if (profTmp !== undefined) process.env.BENCH_SERVICE_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${profTmp}`;
  const servers = await startServers(db.url, dataDir);
  const dir = mkdtempSync(join(tmpdir(), "pqr-cannon-"));
  try {
    const tenant = await createTenant(servers.service, ADMIN_TOKEN, servers.sim);
    const seeded = await seed(servers.service, servers.sim, tenant, { qr: 200, gateway: 1, link: 0 });
    const all = targets(tenant, seeded, { connections: 1, amount: 1 });
    const chosen = chosenNames.map((n) => all.find((t) => t.name === n) as Target);
    for (let r = 0; r < repeat; r++)
      for (const t of chosen) {
        const before = cpuMs(servers.pids.service);
        const res = await cannon(
          {
            url: servers.service,
            path: t.path,
            headers: t.headers,
            bodies: t.bodies,
            expect: t.expect,
            connections: 64,
            durationS: seconds,
            warmupS: 2,
          },
          dir,
        );
        const answered = Math.max(1, res.requests + res.warmupRequests);
        const failed = res.non2xx + res.errors + res.badBodies;
        const row = rows.get(t.name) ?? { rps: [], cpu: [] };
        row.rps.push(res.rps);
        row.cpu.push((cpuMs(servers.pids.service) - before) / answered);
        rows.set(t.name, row);
        console.error(
          `${t.name}: ${Math.round(res.rps)} req/s, CPU ${row.cpu.at(-1)?.toFixed(3)} ms/req, failed ${failed}${failed ? ` (${res.sample})` : ""}`,
        );
      }
  } finally {
    for (const c of servers.children.reverse()) await c.stop();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    if (profTmp !== undefined && profileDir !== undefined && profileAs !== undefined) {
      const file = readdirSync(profTmp).find((f) => f.endsWith(".cpuprofile"));
      if (file !== undefined) renameSync(join(profTmp, file), join(profileDir, `${profileAs}.cpuprofile`));
      rmSync(profTmp, { recursive: true, force: true });
    }
  }
}

const rows = new Map<string, Row>();
if (profileDir === undefined) await measure(NAMES, rows);
else
  for (const name of NAMES)
    await measure(
      [name],
      rows,
      name
        .replace(/[^A-Za-z0-9]+/g, "-")
        .replace(/^-|-$/g, "")
        .toLowerCase(),
    );
console.log("| target | req/s (median) | runs | CPU ms/req (median) |");
console.log("| --- | ---: | --- | ---: |");
for (const name of NAMES) {
  const r = rows.get(name);
  if (r === undefined) continue;
  console.log(
    `| ${name} | ${Math.round(median(r.rps))} | ${r.rps.map((x) => Math.round(x)).join(", ")} | ${median(r.cpu).toFixed(3)} |`,
  );
}
