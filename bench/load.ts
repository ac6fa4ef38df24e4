// Load: the real service (`node dist/src/main.js serve`, its own process) under sustained concurrency on
// every REST endpoint and the main GraphQL operations, beside a bare express + single-INSERT baseline on
// the same database, with autocannon in a third process.
//   npx tsc -p tsconfig.build.json && node dist/bench/load.js [--quick] [--only=generate,check] [--repeat=3]
// BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the service process.
// BENCH_SERVICE_ENV="QR_MONITOR_INTERVAL_MS=60000" overrides service settings for an experiment.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { median, toMarkdown, type Section } from "./table.js";
import { benchScript, cpuMs, createBenchDb, freePort, serviceMain, spawnNode, waitReady, type Child } from "./proc.js";
import { createTenant } from "./tenant.js";
import { baselineTarget, seed, targets, type Target } from "./load-targets.js";
import { cpuBetween, DbProbe } from "./db-probe.js";
import type { CannonResult, CannonSpec } from "./cannon.js";
import { ADMIN_TOKEN, nodeArgsFromEnv } from "./support/service.js";

export interface LoadOptions {
  quick: boolean;
  /** Only targets whose name contains one of these (the baseline always runs). */
  only?: string[];
  /** Runs of every target, alternating; the table shows medians. Default 1. */
  repeat?: number;
  log?: (line: string) => void;
}

const CONNECTIONS = 64;
/** The service's ORM pool (DB_POOL_SIZE, set explicitly) and the baseline's one pg Pool. */
const POOL_SIZE = 10;
const run = promisify(execFile);

interface Run extends CannonResult {
  /** CPU time of the server process per answered request (warm-up included). */
  cpuMsPerReq: number;
  /** CPU time of the PostgreSQL backends serving that server, per answered request. */
  pgCpuMsPerReq: number;
}

interface Measured {
  target: Target;
  connections: number;
  runs: Run[];
}

export interface Servers {
  service: string;
  baseline: string;
  sim: string;
  /** The PayWay twin's API origin (its page is under sim/sim/payway). */
  paywayApi: string;
  pids: { service: number; baseline: number; sim: number };
  /** The service process (its output is kept for diagnosis: BENCH_SERVICE_LOG_LEVEL=warn). */
  serviceChild: Child;
  children: Child[];
}

/** BENCH_SERVICE_ENV="QR_MONITOR_INTERVAL_MS=60000 DB_POOL_SIZE=20" adds or overrides the service's settings (experiments). */
function serviceEnvOverrides(): Record<string, string> {
  const pairs = (process.env.BENCH_SERVICE_ENV ?? "")
    .split(/\s+/)
    .filter(Boolean)
    .map((kv) => kv.split("=", 2) as [string, string]);
  return Object.fromEntries(pairs.filter(([k, v]) => k && v !== undefined));
}

export async function startServers(
  dbUrl: string,
  dataDir: string,
  extraEnv: Record<string, string> = {},
): Promise<Servers> {
  const [simPort, servicePort, baselinePort, paywayPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const sim = `http://127.0.0.1:${simPort}`;
  const children: Child[] = [];
  try {
    children.push(
      spawnNode(benchScript("sim-upstreams"), [], {
        PORT: String(simPort),
        PAYWAY_API_PORT: String(paywayPort),
        NETWORK_TOKEN: "bench-network-token",
      }),
    );
    await waitReady(`${sim}/healthz`, children[0]);
    // Production settings with the simulators in their own process: nothing dev-only runs in the service.
    const service = spawnNode(
      serviceMain(),
      ["serve"],
      {
        NODE_ENV: "production",
        PORT: String(servicePort),
        HOST: "127.0.0.1",
        DATABASE_URL: dbUrl,
        DATA_DIR: dataDir,
        LOG_LEVEL: process.env.BENCH_SERVICE_LOG_LEVEL ?? "silent",
        ADMIN_TOKEN,
        SECRET_KEY: "bench-secret-key-Wf3Kp9Xt6Bq2Mz7Lc4Nv8Rh5J",
        SIMULATORS: "false",
        DEMO: "false",
        RATE_LIMIT_PER_MINUTE: "0",
        DB_POOL_SIZE: String(POOL_SIZE),
        NETWORK_API_URL: `${sim}/sim/network-api`,
        NETWORK_API_TOKEN: "bench-network-token",
        GATEWAY_API_URL: `${sim}/sim/gateway-api`,
        PAYWAY_API_ORIGIN: `http://127.0.0.1:${paywayPort}`,
        // The payment-link page of the simulators is on loopback, which production's egress policy refuses.
        EGRESS_ALLOW_PRIVATE_URLS: "true",
        // One bench tenant drives the whole worker: its fair shares of the browser pool are the whole pool.
        LINK_HELD_PAGES_PER_MERCHANT: "1000",
        LINK_OPENS_PER_MERCHANT: "1000",
        ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
        ...extraEnv,
        ...serviceEnvOverrides(),
      },
      nodeArgsFromEnv("BENCH_SERVICE_NODE_ARGS"),
    );
    children.push(service);
    const baseline = spawnNode(benchScript("baseline-server"), [], {
      PORT: String(baselinePort),
      DATABASE_URL: dbUrl,
      POOL_SIZE: String(POOL_SIZE),
      GATEWAY_API_URL: `${sim}/sim/gateway-api`,
      GATEWAY_SIM_URL: sim,
    });
    children.push(baseline);
    await waitReady(`http://127.0.0.1:${servicePort}/readyz`, service);
    await waitReady(`http://127.0.0.1:${baselinePort}/healthz`, baseline);
    return {
      service: `http://127.0.0.1:${servicePort}`,
      baseline: `http://127.0.0.1:${baselinePort}`,
      sim,
      paywayApi: `http://127.0.0.1:${paywayPort}`,
      pids: {
        service: service.proc.pid as number,
        baseline: baseline.proc.pid as number,
        sim: children[0].proc.pid as number,
      },
      serviceChild: service,
      children,
    };
  } catch (err) {
    for (const c of children.reverse()) await c.stop();
    throw err;
  }
}

export async function cannon(spec: CannonSpec, dir: string): Promise<CannonResult> {
  const file = join(dir, "spec.json");
  writeFileSync(file, JSON.stringify(spec));
  const { stdout } = await run(process.execPath, [benchScript("cannon"), file], { maxBuffer: 4 << 20 });
  return JSON.parse(stdout.trim().split("\n").at(-1) as string) as CannonResult;
}

const failed = (r: CannonResult) => r.non2xx + r.errors + r.badBodies;
const round2 = (n: number) => Math.round(n * 100) / 100;

function section(
  measured: Measured[],
  opts: { quick: boolean; durationS: number; repeat: number; load: string[] },
): Section {
  const baseKey = (m: Measured) => `${m.target.baseline ?? "insert"}@${m.connections}`;
  const base = new Map(measured.filter((m) => m.target.server === "baseline").map((m) => [baseKey(m), m]));
  const med = (m: Measured, f: (r: Run) => number) => median(m.runs.map(f));
  const rows = measured.map((m) => {
    const b = base.get(baseKey(m));
    const rps = med(m, (r) => r.rps);
    // Each run against the baseline run of the same round (they ran minutes apart at most), then the median.
    const ratio =
      b === undefined || m.target.server === "baseline"
        ? ""
        : `${(median(m.runs.map((r, i) => r.rps / b.runs[i].rps)) * 100).toFixed(0)}%`;
    return [
      m.target.name,
      m.connections,
      Math.round(rps),
      med(m, (r) => r.p50),
      med(m, (r) => r.p99),
      round2(med(m, (r) => r.cpuMsPerReq)),
      round2(med(m, (r) => r.pgCpuMsPerReq)),
      m.runs.reduce((a, r) => a + failed(r), 0),
      b === undefined || m.target.server === "baseline" ? "" : Math.round(med(b, (r) => r.rps)),
      ratio,
    ];
  });
  const notes = [
    `autocannon in its own process, ${CONNECTIONS} connections for ${opts.durationS} s per target after a ${opts.quick ? 1 : 3} s warm-up${opts.repeat > 1 ? `; ${opts.repeat} alternating runs of each target, medians shown` : ""}${opts.quick ? " (quick mode: figures are a smoke test only)" : ""}.`,
    `Service: \`node dist/src/main.js serve\` (API + jobs in one process), NODE_ENV=production, LOG_LEVEL=${process.env.BENCH_SERVICE_LOG_LEVEL ?? "silent"}, RATE_LIMIT_PER_MINUTE=0, DB_POOL_SIZE=${POOL_SIZE}, on a fresh pqr_bench_* PostgreSQL database. The three upstream simulators run in their own process (SIMULATORS=false in the service), so no /sim route or simulator work (e.g. the gateway's PNG per QR) is charged to the service.`,
    `Baseline: a bare express 5 app in its own process, express.json(), one pg Pool of ${POOL_SIZE}, one \`INSERT … RETURNING id\` per request (the /qr/generate body, stored as jsonb), on the same database; measured at each concurrency used. "ours / baseline" compares req/s at the same concurrency (with several runs: the median of each run against the baseline run of its round).`,
    "The hosted gateway's generate is compared with its own floor instead: the same bare app making the one upstream call such a generate needs (the simulated gateway's signed generate-qr, through the project's gateway client, so the same bytes go over the wire and the simulator's work per QR is the same) before the INSERT.",
    "CPU ms/req: CPU time (user + system, from /proc) of the server process under test per answered request, warm-up included; PG CPU ms/req: the same for the PostgreSQL backends serving that process (the service's ORM, job and listener connections, or the baseline's pool). Both depend far less than req/s on what other processes leave over, so they are the steadier figures on a shared machine (still ±20% here).",
    'Every 2xx body is checked (REST: not an error body; GraphQL: data and no errors); "failed" counts non-2xx answers, connection errors/timeouts and failed body checks, over all runs.',
    "The check endpoints rotate through transactions created just before (200 QRs, 100 gateway transactions, a few gateway-link ones approved on the simulated page so their monitors end); between targets every pending transaction's next monitor check moves to its expiry, so no target inherits the previous one's monitoring backlog, and the tables are ANALYZEd (as autovacuum would within a minute; with statistics from before a generate target's growth, the md5 lookup of /qr/check scans all of the key's rows). The monitors themselves keep running, so a generate target includes the monitoring of what it creates.",
    `/gateway-link/generate-qr opens a real Chromium page per request and keeps it as the transaction's monitor for up to 180 s (LINK_MAX_MONITORS=100 per worker), so ${CONNECTIONS} connections for ${opts.durationS} s would only measure the monitor cap. It runs last, with a bounded number of requests at low concurrency (see its row), against a baseline at the same concurrency.`,
    ...opts.load,
  ];
  for (const m of measured) {
    const bad = m.runs.find((r) => failed(r) > 0);
    if (bad)
      notes.push(
        `FAILED requests on ${m.target.name}: status codes ${JSON.stringify(bad.statusCodes)}, errors ${bad.errors}, timeouts ${bad.timeouts}, 2xx with a failing body check ${bad.badBodies}; sample: ${bad.sample ?? "(none)"}`,
      );
  }
  return {
    title: "Load: REST and GraphQL under sustained concurrency",
    columns: [
      "target",
      "conn.",
      "req/s",
      "p50 ms",
      "p99 ms",
      "CPU ms/req",
      "PG CPU ms/req",
      "failed",
      "baseline req/s",
      "ours / baseline",
    ],
    rows,
    notes,
  };
}

export async function benchLoad(opts: LoadOptions): Promise<Section[]> {
  const log = opts.log ?? (() => undefined);
  const durationS = opts.quick ? 3 : 30;
  const warmupS = opts.quick ? 1 : 3;
  const repeat = opts.repeat ?? 1;
  const link = opts.quick ? { connections: 2, amount: 6 } : { connections: 4, amount: 40 };
  const loadBefore = loadavg()[0];
  const db = await createBenchDb();
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-bench-"));
  let servers: Servers | null = null;
  try {
    servers = await startServers(db.url, dataDir);
    const s = servers;
    log(`service ${s.service}, baseline ${s.baseline}, simulators ${s.sim}`);
    const tenant = await createTenant(s.service, ADMIN_TOKEN, s.sim);
    const seeded = await seed(s.service, s.sim, tenant, { qr: 200, gateway: 100, link: opts.quick ? 2 : 4 });
    log(
      `seeded ${seeded.md5s.length} QRs, ${seeded.gatewayIds.length} gateway and ${seeded.linkIds.length} gateway-link transactions`,
    );
    const chosen = targets(tenant, seeded, link).filter((t) => !opts.only || opts.only.some((o) => t.name.includes(o)));
    const concurrencies = [...new Set(chosen.map((t) => t.connections ?? CONNECTIONS))];
    const gatewayBases = [
      ...new Set(chosen.filter((t) => t.baseline === "gateway").map((t) => t.connections ?? CONNECTIONS)),
    ];
    const plan = [
      ...concurrencies.map((c) => baselineTarget(c)),
      ...gatewayBases.map((c) => baselineTarget(c, "gateway")),
      ...chosen,
    ];
    const measured: Measured[] = plan.map((target) => ({
      target,
      connections: target.connections ?? CONNECTIONS,
      runs: [],
    }));
    const dir = mkdtempSync(join(tmpdir(), "pqr-cannon-"));
    const probe = await DbProbe.open(db.url);
    try {
      for (let r = 0; r < repeat; r++) {
        for (const m of measured) {
          await probe.settle();
          const t = m.target;
          const pid = t.server === "baseline" ? s.pids.baseline : s.pids.service;
          const cpuBefore = cpuMs(pid);
          const pgBefore = await probe.backendCpu(t.server);
          const result = await cannon(
            {
              url: t.server === "baseline" ? s.baseline : s.service,
              path: t.path,
              headers: t.headers,
              bodies: t.bodies,
              expect: t.expect,
              connections: m.connections,
              durationS,
              amount: t.amount,
              warmupS: t.amount === undefined ? warmupS : 0,
            },
            dir,
          );
          const answered = Math.max(1, result.requests + result.warmupRequests);
          const run: Run = {
            ...result,
            cpuMsPerReq: (cpuMs(pid) - cpuBefore) / answered,
            pgCpuMsPerReq: cpuBetween(pgBefore, await probe.backendCpu(t.server)) / answered,
          };
          m.runs.push(run);
          if (failed(run) > 0 && process.env.BENCH_SERVICE_LOG_LEVEL)
            log(`service output:\n${s.serviceChild.output().slice(-4000)}`);
          log(
            `${t.name} @${m.connections}: ${Math.round(run.rps)} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, CPU ${round2(run.cpuMsPerReq)} + PG ${round2(run.pgCpuMsPerReq)} ms/req, failed ${failed(run)}`,
          );
        }
      }
    } finally {
      await probe.close();
      rmSync(dir, { recursive: true, force: true });
    }
    const loadAfter = loadavg()[0];
    return [
      section(measured, {
        quick: opts.quick,
        durationS,
        repeat,
        load: [`1-minute load average before ${loadBefore.toFixed(2)}, after ${loadAfter.toFixed(2)}.`],
      }),
    ];
  } finally {
    for (const c of (servers?.children ?? []).reverse()) await c.stop();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const sections = await benchLoad({
    quick: process.argv.includes("--quick"),
    only: arg("only")?.split(","),
    repeat: Number(arg("repeat") ?? 1),
    log: (line) => console.error(line),
  });
  for (const s of sections) console.log(toMarkdown(s));
}
