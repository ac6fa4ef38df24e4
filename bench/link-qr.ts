// Gateway-link through the real service: time to QR (POST /gateway-link/generate-qr answered with the QR) at
// 8 concurrent, generates per second and CPU per generate of one `serve` process (Node + its Chromium tree),
// then the memory of that process tree holding 200 monitors. The simulators run in their own process and
// the service in production mode, as in bench/load.ts.
//   npx tsc -p tsconfig.build.json && node dist/bench/link-qr.js [--quick] [--requests=160] [--monitors=200]
// BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the service process.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { listProcs, memoryOf, processTree } from "../src/gateway-link/process-tree.js";
import { startServers, type Servers } from "./load.js";
import { cpuMs, createBenchDb, sleep, treeCpuMs } from "./proc.js";
import { ADMIN_TOKEN } from "./support/service.js";
import { percentile, toMarkdown, type Section } from "./table.js";
import { AUTH, createTenant, postJson, type BenchTenant } from "./tenant.js";

export interface LinkQrOptions {
  quick: boolean;
  /** Generates in the time-to-QR phase. Default 160 (quick: 24). */
  requests?: number;
  /** Monitors held for the memory phase. Default 200 (quick: 20). */
  monitors?: number;
  log?: (line: string) => void;
}

export interface LinkQrResult {
  concurrency: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
  cpuMsPerGenerate: number;
  monitors: number;
  pssMb: number;
  nodePssMb: number;
  polling: number;
  failed: number;
}

const CONCURRENCY = 8;
const TARGETS = { p50Ms: 300, p99Ms: 1000, perSecond: 20, pssMb: 3 * 1024 };

async function generate(s: Servers, tenant: BenchTenant, i: number) {
  return postJson<{ transactionId: string; status: string; data: { qr: string; clientId: string } }>(
    `${s.service}/gateway-link/generate-qr`,
    { amount: 1000 + i, currency: 116, meta: { n: i } },
    AUTH.gatewayLink(tenant.keys.gatewayLink),
  );
}

async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

export async function benchLinkQr(opts: LinkQrOptions): Promise<LinkQrResult> {
  const log = opts.log ?? (() => undefined);
  const requests = opts.requests ?? (opts.quick ? 24 : 160);
  const monitors = opts.monitors ?? (opts.quick ? 20 : 200);
  const db = await createBenchDb();
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-bench-"));
  let servers: Servers | null = null;
  try {
    servers = await startServers(db.url, dataDir, { LINK_MAX_MONITORS: String(Math.max(monitors, 100)) });
    const s = servers;
    const pid = s.pids.service;
    const tenant = await createTenant(s.service, ADMIN_TOKEN, s.sim);
    // Warm-up: the first generate launches Chromium.
    for (let i = 0; i < 2; i++) {
      const r = await generate(s, tenant, i);
      await postJson(`${s.sim}/sim/link/approve`, { clientId: r.data.clientId });
    }
    await sleep(2_000);

    // Phase 1: time to QR at 8 concurrent; each payment is approved at once so its monitor ends.
    const times: number[] = [];
    let failed = 0;
    const cpuBefore = treeCpuMs(pid);
    const nodeBefore = cpuMs(pid);
    const started = performance.now();
    await pool(requests, CONCURRENCY, async (i) => {
      const t = performance.now();
      try {
        const r = await generate(s, tenant, i);
        times.push(performance.now() - t);
        if (!r.data.qr) failed++;
        void postJson(`${s.sim}/sim/link/approve`, { clientId: r.data.clientId }).catch(() => undefined);
      } catch (err) {
        failed++;
        log(`generate failed: ${(err as Error).message}`);
      }
    });
    const elapsedS = (performance.now() - started) / 1000;
    const cpuMsPerGenerate = (treeCpuMs(pid) - cpuBefore) / Math.max(1, times.length);
    const nodeCpuMsPerGenerate = (cpuMs(pid) - nodeBefore) / Math.max(1, times.length);
    times.sort((a, b) => a - b);
    const p50Ms = Math.round(percentile(times, 50));
    const p99Ms = Math.round(percentile(times, 99));
    const perSecond = Math.round((times.length / elapsedS) * 10) / 10;
    log(
      `time to QR @${CONCURRENCY}: p50 ${p50Ms} ms, p99 ${p99Ms} ms, ${perSecond} generates/s, ${cpuMsPerGenerate.toFixed(1)} CPU ms each (service + Chromium; service Node ${nodeCpuMsPerGenerate.toFixed(1)}), failed ${failed}`,
    );
    await sleep(3_000); // the approved monitors end

    // Phase 2: hold `monitors` pending payments, all polling; memory of the service + Chromium tree.
    const clients: string[] = [];
    await pool(monitors, CONCURRENCY, async (i) => {
      try {
        clients.push((await generate(s, tenant, 10_000 + i)).data.clientId);
      } catch (err) {
        failed++;
        log(`generate failed: ${(err as Error).message}`);
      }
    });
    log(`holding ${clients.length} monitors`);
    const polls = async () => {
      const sum = new Map<string, number>();
      for (const c of clients) {
        const res = await fetch(`${s.sim}/sim/link/clients/${c}`);
        sum.set(c, ((await res.json()) as { polls: number }).polls);
      }
      return sum;
    };
    await sleep(5_000); // every monitor taken from the hand-over and polling
    const before = await polls();
    await sleep(opts.quick ? 3_000 : 10_000);
    const after = await polls();
    // Chromium's crash handlers leave the tree (they are re-parented to init) but live as long as the browser:
    // counted with it. Any other Chromium process outside the service's tree makes the PSS figure meaningless.
    const live = listProcs().filter((p) => p.state !== "Z");
    const tree = [...processTree(pid), ...live.filter((p) => p.comm === "chrome_crashpad")].map((p) => p.pid);
    const strays = live.filter((p) => /chrom/i.test(p.comm)).length - (tree.length - 1);
    if (strays > 0) log(`WARNING: ${strays} live Chromium processes outside the service's tree; PSS below undercounts`);
    const mem = memoryOf(tree);
    const node = memoryOf([pid]);
    const polling = clients.filter((c) => (after.get(c) ?? 0) > (before.get(c) ?? 0)).length;
    log(
      `${clients.length} monitors: ${(mem.pssKb / 1024).toFixed(0)} MB PSS (node ${(node.pssKb / 1024).toFixed(0)} MB), ${mem.processes} processes, ${polling} polling`,
    );
    return {
      concurrency: CONCURRENCY,
      requests: times.length,
      p50Ms,
      p99Ms,
      perSecond,
      cpuMsPerGenerate: Math.round(cpuMsPerGenerate * 10) / 10,
      monitors: clients.length,
      pssMb: Math.round(mem.pssKb / 1024),
      nodePssMb: Math.round(node.pssKb / 1024),
      polling,
      failed,
    };
  } finally {
    for (const c of (servers?.children ?? []).reverse()) await c.stop();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchLinkQrSection(opts: LinkQrOptions): Promise<Section> {
  const r = await benchLinkQr(opts);
  const mark = (ok: boolean) => (ok ? "met" : "NOT met");
  return {
    title: "Gateway-link through the service: time to QR and monitors per worker",
    columns: ["measure", "value", "target", ""],
    rows: [
      [`time to QR p50 @${r.concurrency}`, `${r.p50Ms} ms`, `≤ ${TARGETS.p50Ms} ms`, mark(r.p50Ms <= TARGETS.p50Ms)],
      [`time to QR p99 @${r.concurrency}`, `${r.p99Ms} ms`, `≤ ${TARGETS.p99Ms} ms`, mark(r.p99Ms <= TARGETS.p99Ms)],
      ["generates/s per worker", r.perSecond, `≥ ${TARGETS.perSecond}`, mark(r.perSecond >= TARGETS.perSecond)],
      ["CPU ms per generate (Node + Chromium)", r.cpuMsPerGenerate, "", ""],
      [
        `PSS MB at ${r.monitors} monitors (Node ${r.nodePssMb})`,
        r.pssMb,
        `< ${TARGETS.pssMb}`,
        mark(r.pssMb < TARGETS.pssMb && r.polling === r.monitors),
      ],
    ],
    notes: [
      `\`node dist/src/main.js serve\` in production mode, simulators in their own process (bench/load.ts). Phase 1: ${r.requests} POST /gateway-link/generate-qr from ${r.concurrency} concurrent clients, each answered payment approved on the simulated page at once so its monitor ends; time to QR is the request's round trip. CPU is user + system of the service process and its whole Chromium tree (reaped children included), per generate.`,
      `Phase 2: ${r.monitors} pending payments held, their monitors polling once a second (${r.polling} seen polling over the hold); PSS summed over the service and its Chromium tree. Failed generates: ${r.failed}.`,
    ],
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const section = await benchLinkQrSection({
    quick: process.argv.includes("--quick"),
    requests: arg("requests") ? Number(arg("requests")) : undefined,
    monitors: arg("monitors") !== undefined ? Number(arg("monitors")) : undefined,
    log: (line) => console.error(line),
  });
  console.log(toMarkdown(section));
}
