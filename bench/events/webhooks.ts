import { loadavg } from "node:os";
import type { Section } from "../table.js";
import { createMerchant, createQrKey, createWebhookEndpoint } from "../support/admin.js";
import { ProcessClock } from "../support/cpu.js";
import { scrapeLoopLag } from "../support/loop-lag.js";
import { startPgProbe } from "../support/pg-probe.js";
import { startReceiver, type Receiver } from "../support/receiver.js";
import { loadNote, ms1, sleep, spread, type Spread } from "../support/timing.js";
import type { Commit } from "./driver.js";
import { Rig } from "./rig.js";

const RATE = Number(process.env.BENCH_EVENTS_RATE ?? 100); // override for capacity runs
const TARGET_P95_MS = 1000;

export interface HookResult {
  commits: number;
  achievedRate: number;
  missing: number;
  duplicates: number;
  badSignatures: number;
  latency: Spread;
  /** The worker processes: CPU used and event-loop thread waiting for a CPU (% of the phase, summed), worst event-loop delay. */
  workers: { cpuPct: number | null; waitPct: number | null; loopP99Ms: number };
  pgRoundTrip: Spread;
  /** Bound on the disagreement between the committing process's clock and the receiver's. */
  clockMs: number;
}

async function waitAll(rx: Receiver, ids: string[], timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const missing = ids.filter((id) => !rx.arrivals.has(id)).length;
    if (missing === 0 || Date.now() > until) return missing;
    await sleep(100);
  }
}

/** One run: `workers` worker processes deliver payment.completed events committed at RATE/s by the driver. */
async function runHooks(workers: number, seconds: number, log: (s: string) => void): Promise<HookResult> {
  const rig = await Rig.create("hooks");
  let secret = "";
  const rx = await startReceiver(() => secret);
  try {
    const privateOk = { EGRESS_ALLOW_PRIVATE_URLS: "true" }; // the receiver is on loopback
    const api = await rig.service("api", privateOk);
    const ws = [];
    for (let i = 0; i < workers; i++) ws.push(await rig.service("worker", privateOk));
    const key = await createQrKey(api.url, await createMerchant(api.url, "Bench webhooks"));
    secret = (await createWebhookEndpoint(api.url, key.keyId, rx.url, ["payment.completed"])).secret;
    const driver = rig.helper("driver");
    await driver.call("init", { dbUrl: rig.db.url, poolSize: 4 });
    const clock = await driver.clockOffset();
    const total = RATE * seconds;
    const ids = await driver.call<string[]>("create", {
      merchantRef: key.merchantId,
      apiKeyRef: key.keyId,
      count: total,
    });
    await sleep(1000); // let the workers' listeners pass over the payment.created notifications
    const probe = await startPgProbe(rig.db.url);
    for (const w of ws) await scrapeLoopLag(w.url);
    const clock0 = new ProcessClock(ws.map((w) => w.child.pid));
    const { commits, elapsedMs } = await driver.call<{ commits: Commit[]; elapsedMs: number }>("run", {
      ids,
      rate: RATE,
      total,
      step: { event: "payment.completed", to: "SUCCESS" },
    });
    const use = clock0.read();
    const loopP99Ms = Math.max(...(await Promise.all(ws.map((w) => scrapeLoopLag(w.url)))).map((l) => l.p99Ms));
    const pgRoundTrip = await probe.stop();
    const missing = await waitAll(
      rx,
      commits.map((c) => c[0]),
      30_000,
    );
    const latencies = commits.flatMap(([evt, , , committedAt]) =>
      rx.arrivals.has(evt) ? [(rx.arrivals.get(evt) as number[])[0] - committedAt] : [],
    );
    const duplicates = [...rx.arrivals.values()].reduce((n, l) => n + l.length - 1, 0);
    log(`  webhooks, ${workers} worker(s): p95 ${ms1(percentileOf(latencies, 95))} ms, missing ${missing}`);
    return {
      commits: commits.length,
      achievedRate: commits.length / (elapsedMs / 1000),
      missing,
      duplicates,
      badSignatures: rx.badSignatures,
      latency: spread(latencies),
      workers: { ...use, loopP99Ms },
      clockMs: Math.abs(clock.offsetMs) + clock.withinMs,
      pgRoundTrip,
    };
  } finally {
    await rx.close();
    await rig.close();
  }
}

const percentileOf = (xs: number[], p: number) => spread(xs)[p === 95 ? "p95" : "p99"];

const pct = (v: number | null) => (v === null ? "?" : `${v.toFixed(0)}%`);

function row(name: string, r: HookResult): (string | number)[] {
  return [
    name,
    `${r.commits} (${r.achievedRate.toFixed(1)}/s)`,
    r.missing,
    ms1(r.latency.p50),
    ms1(r.latency.p95),
    `< ${TARGET_P95_MS}`,
    ms1(r.latency.p99),
    ms1(r.latency.max),
  ];
}

/** Signed webhook deliveries to a real local receiver, commit → receipt, with worker processes running the dispatcher. */
export async function benchWebhooks(opts: { quick: boolean; log?: (line: string) => void }): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const loadBefore = loadavg()[0];
  const seconds = Number(process.env.BENCH_EVENTS_SECONDS ?? (opts.quick ? 3 : 30)); // override for tuning runs
  // BENCH_WEBHOOK_WORKERS=1 skips the 2-worker row (before/after comparisons).
  const one = await runHooks(1, seconds, log);
  const two = process.env.BENCH_WEBHOOK_WORKERS === "1" ? one : await runHooks(2, seconds, log);
  const met = (r: HookResult) => r.missing === 0 && r.badSignatures === 0 && r.latency.p95 < TARGET_P95_MS;
  return {
    title: "Webhooks: commit → receiver (signed deliveries, real HTTP receiver)",
    columns: ["workers", "events (rate)", "missing", "p50 ms", "p95 ms", "target p95 ms", "p99 ms", "max ms"],
    rows: [row("1 worker", one), row("2 workers", two)],
    notes: [
      `Fresh PostgreSQL database per row; one \`api\` instance (set-up through the admin API) and \`node dist/src/main.js worker\` process(es) running the dispatcher (NODE_ENV=production, EGRESS_ALLOW_PRIVATE_URLS=true for the loopback receiver). The endpoint subscribes to payment.completed.`,
      `A separate process commits ${RATE} PENDING → SUCCESS transitions/s for ${seconds} s (open loop) with TransactionStore.transition (outbox row + delivery row + pg_notify in one database transaction). Latency = the receiver (in the bench process) has the whole body − commit acknowledged in the committing process (wall clock, performance.timeOrigin + performance.now(); the two clocks agree within ${Math.max(one.clockMs, two.clockMs).toFixed(2)} ms). Every signature is checked with the recipe in docs/webhooks.md: bad signatures ${one.badSignatures + two.badSignatures}.`,
      `Missing = committed events not received within 30 s; duplicates (at-least-once redeliveries): 1 worker ${one.duplicates}, 2 workers ${two.duplicates}. Where time goes (1 worker / 2 workers): worker CPU ${pct(one.workers.cpuPct)} / ${pct(two.workers.cpuPct)} of one core (summed), their event-loop threads runnable but waiting for a CPU ${pct(one.workers.waitPct)} / ${pct(two.workers.waitPct)} of the time, event-loop delay p99 ${ms1(one.workers.loopP99Ms)} / ${ms1(two.workers.loopP99Ms)} ms; PostgreSQL \`select 1\` round trip p50/p99 ${ms1(one.pgRoundTrip.p50)}/${ms1(one.pgRoundTrip.p99)} / ${ms1(two.pgRoundTrip.p50)}/${ms1(two.pgRoundTrip.p99)} ms.`,
      loadNote(loadBefore, loadavg()[0]),
      `Target p95 < ${TARGET_P95_MS} ms with 0 missing: 1 worker ${met(one) ? "met" : "MISSED"}, 2 workers ${met(two) ? "met" : "MISSED"}.`,
    ],
  };
}
