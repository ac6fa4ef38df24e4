// The GraphQL execution path against the REST shim: the same service process, the three GraphQL operations of the
// load bench and the two REST paths that run the same resolvers (the shim's direct graphql-js runner), alternating,
// medians of --repeat runs. With --before=PATH/dist/src/main.js a second service runs another build (the code
// before a change), and each target runs on both, one after the other, in every round: a before/after comparison
// that the machine's load drifts on alike. With --profile=DIR the service runs under `node --cpu-prof` and each
// target gets a service of its own, so each .cpuprofile holds one target's load (bench/cpu-profile-summary.ts).
// --only=NAME[,NAME…] keeps the targets whose name contains one of them (e.g. --only=transactions).
//   npm run build && node dist/bench/graphql-path.js [--repeat=3] [--seconds=10] [--before=…/main.js] [--profile=DIR] [--only=…]
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "./table.js";
import { cpuMs, createBenchDb } from "./proc.js";
import { createTenant } from "./tenant.js";
import { seed, targets, type Target } from "./load-targets.js";
import { cannon, startServers } from "./load.js";
import { ADMIN_TOKEN } from "./support/service.js";

const ALL_NAMES = [
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
const only = arg("only")?.split(",");
const NAMES = ALL_NAMES.filter((n) => only === undefined || only.some((o) => n.includes(o)));

interface Row {
  rps: number[];
  cpu: number[];
}

interface Service {
  label: string;
  servers: Awaited<ReturnType<typeof startServers>>;
  chosen: Target[];
  drop: () => Promise<void>;
}

/** A service (with its simulators and database) of the build at `main` (this build when undefined), seeded. */
async function start(label: string, chosenNames: string[], main?: string, profTmp?: string): Promise<Service> {
  const db = await createBenchDb();
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-gqlpath-"));
  process.env.BENCH_SERVICE_NODE_ARGS = profTmp === undefined ? "" : `--cpu-prof --cpu-prof-dir=${profTmp}`;
  if (main === undefined) delete process.env.BENCH_SERVICE_MAIN;
  else process.env.BENCH_SERVICE_MAIN = main;
  const servers = await startServers(db.url, dataDir);
  const tenant = await createTenant(servers.service, ADMIN_TOKEN, servers.sim);
  const seeded = await seed(servers.service, servers.sim, tenant, { qr: 200, gateway: 1, link: 0 });
  const all = targets(tenant, seeded, { connections: 1, amount: 1 });
  return {
    label,
    servers,
    chosen: chosenNames.map((n) => all.find((t) => t.name === n) as Target),
    drop: async () => {
      for (const c of servers.children.reverse()) await c.stop();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function runOne(svc: Service, t: Target, rows: Map<string, Row>, dir: string): Promise<void> {
  const before = cpuMs(svc.servers.pids.service);
  const res = await cannon(
    {
      url: svc.servers.service,
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
  const key = `${svc.label}|${t.name}`;
  const row = rows.get(key) ?? { rps: [], cpu: [] };
  row.rps.push(res.rps);
  row.cpu.push((cpuMs(svc.servers.pids.service) - before) / answered);
  rows.set(key, row);
  console.error(
    `${svc.label} ${t.name}: ${Math.round(res.rps)} req/s, CPU ${row.cpu.at(-1)?.toFixed(3)} ms/req, failed ${failed}${failed ? ` (${res.sample})` : ""}`,
  );
}

/** Each target `repeat` times on each service, alternating. */
async function measure(services: Service[], rows: Map<string, Row>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "pqr-cannon-"));
  try {
    for (let r = 0; r < repeat; r++)
      for (let i = 0; i < services[0].chosen.length; i++)
        for (const svc of services) await runOne(svc, svc.chosen[i], rows, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function profiled(name: string, rows: Map<string, Row>, dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const profTmp = mkdtempSync(join(tmpdir(), "pqr-prof-"));
  const svc = await start("this build", [name], undefined, profTmp);
  try {
    await measure([svc], rows);
  } finally {
    await svc.drop();
    const file = readdirSync(profTmp).find((f) => f.endsWith(".cpuprofile"));
    const as = name
      .replace(/[^A-Za-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .toLowerCase();
    if (file !== undefined) renameSync(join(profTmp, file), join(dir, `${as}.cpuprofile`));
    rmSync(profTmp, { recursive: true, force: true });
  }
}

const rows = new Map<string, Row>();
const labels = arg("before") === undefined ? ["this build"] : ["before", "this build"];
if (profileDir !== undefined) for (const name of NAMES) await profiled(name, rows, profileDir);
else {
  const services: Service[] = [];
  try {
    if (arg("before") !== undefined) services.push(await start("before", NAMES, arg("before")));
    services.push(await start("this build", NAMES));
    await measure(services, rows);
  } finally {
    for (const svc of services) await svc.drop();
  }
}
console.log(`| target | ${labels.map((l) => `${l}: req/s (runs) | ${l}: CPU ms/req`).join(" | ")} |`);
console.log(`| --- | ${labels.map(() => "---: | ---:").join(" | ")} |`);
for (const name of NAMES) {
  const cells = labels.map((l) => {
    const r = rows.get(`${l}|${name}`);
    if (r === undefined) return " | ";
    return `${Math.round(median(r.rps))} (${r.rps.map((x) => Math.round(x)).join(", ")}) | ${median(r.cpu).toFixed(3)}`;
  });
  console.log(`| ${name} | ${cells.join(" | ")} |`);
}
