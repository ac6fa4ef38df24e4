// Lifecycle: the whole payment as the unit of work. Open-loop R payments/s against one `serve` process and
// against 2 `api` + 2 `worker` processes; the upstream simulators, the merchant's webhook receiver and the
// load generator (with a checkout page's client-token subscriber per payment) each in a process of their own.
//   npm run bench -- --only=lifecycle     BENCH_LIFECYCLE_SECONDS=20 BENCH_LIFECYCLE_RATES=300,500 for tuning
// BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the service processes.
// BENCH_CPU_HOG=1 runs a busy loop beside each step (a busy machine on purpose); BENCH_LIFECYCLE_FINAL_WAIT_S sets
// how long what is missing after the drain window is still waited for before it counts as never (default 60).
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import type { Section } from "./table.js";
import { benchScript, freePort, spawnNode, waitReady, type Child } from "./proc.js";
import { createTenant } from "./tenant.js";
import { createWebhookEndpoint } from "./support/admin.js";
import { DbProbe } from "./db-probe.js";
import { Helper } from "./support/ipc.js";
import { Rig } from "./events/rig.js";
import { ADMIN_TOKEN, nodeArgsFromEnv, type ServiceProcess } from "./support/service.js";
import { loadNote, ms1, sleep } from "./support/timing.js";
import type { DriverSetup, Kind } from "./lifecycle/driver-host.js";
import { DRAIN_MS, FINAL_WAIT_MS, QR_MONITOR_INTERVAL_MS, held, lost, step, type Step } from "./lifecycle/step.js";
import { TOPOLOGY_NAME, rowOf, stepLine, stepNotes, type MixName, type Topology } from "./lifecycle/report.js";

export type { MixName, Topology };

const TARGET_RATE = 500;
/** The rates tried, in order; a topology's ladder starts at START and moves one rung at a time. */
const LADDER = [25, 50, 100, 150, 200, 300, 400, 500, 650, 800, 1000];
/** Where each mix's ladder starts: generic where the last full run held (400/s), so 3 steps reach the target. */
const START: Record<MixName, number> = { generic: 400, mix: 100 };

const MIXES: Record<MixName, Record<Kind, number>> = {
  generic: { qr: 1, gateway: 0, link: 0 },
  mix: { qr: 0.8, gateway: 0.15, link: 0.05 },
};

const helper = (name: string) => Helper.start(fileURLToPath(new URL(`./lifecycle/${name}.js`, import.meta.url)), name);

/** One topology: its processes started once, then the ladder of rates for each mix asked for. */
export async function runTopology(
  topology: Topology,
  mixes: { mix: MixName; start: number }[],
  opts: { seconds: number; maxSteps: number; rates?: number[]; log: (s: string) => void; main?: string },
): Promise<Map<MixName, Step[]>> {
  const rig = await Rig.create(`life_${topology}`);
  const children: Child[] = [];
  const receiver = helper("receiver-host");
  const driver = helper("driver-host");
  try {
    const simPort = await freePort();
    const sim = `http://127.0.0.1:${simPort}`;
    children.push(
      spawnNode(benchScript("sim-upstreams"), [], { PORT: String(simPort), NETWORK_TOKEN: "bench-network-token" }),
    );
    await waitReady(`${sim}/healthz`, children[0]);
    const nodeArgs = nodeArgsFromEnv("BENCH_SERVICE_NODE_ARGS");
    const env: Record<string, string> = {
      NETWORK_API_URL: `${sim}/sim/network-api`,
      NETWORK_API_TOKEN: "bench-network-token",
      GATEWAY_API_URL: `${sim}/sim/gateway-api`,
      // The receiver and the payment-link page are on loopback, which production's egress policy refuses.
      EGRESS_ALLOW_PRIVATE_URLS: "true",
      // One bench tenant drives the whole worker: its fair shares of the browser pool are the whole pool.
      LINK_HELD_PAGES_PER_MERCHANT: "1000",
      LINK_OPENS_PER_MERCHANT: "1000",
      // Every checkout page of the bench comes from 127.0.0.1; in life they come from as many addresses.
      WS_MAX_SOCKETS_PER_IP: "1000000",
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: "0",
      QR_MONITOR_INTERVAL_MS: String(QR_MONITOR_INTERVAL_MS),
      ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
      ...(nodeArgs.length ? { NODE_OPTIONS: nodeArgs.join(" ") } : {}),
    };
    const services: ServiceProcess[] = [];
    const apis: string[] = [];
    if (topology === "serve") {
      services.push(await rig.service("serve", env, opts.main));
      apis.push(services[0].url);
    } else {
      for (let i = 0; i < 2; i++) {
        const api = await rig.service("api", env, opts.main);
        services.push(api);
        apis.push(api.url);
      }
      for (let i = 0; i < 2; i++) services.push(await rig.service("worker", env, opts.main));
    }
    const tenant = await createTenant(apis[0], ADMIN_TOKEN, sim);
    const hooks = await receiver.call<string>("listen");
    const events = ["payment.created", "payment.completed"];
    const secrets = [];
    for (const keyId of Object.values(tenant.keyIds))
      secrets.push((await createWebhookEndpoint(apis[0], keyId, hooks, events)).secret);
    await receiver.call("secrets", { secrets });
    const probe = await DbProbe.open(rig.db.url);
    const out = new Map<MixName, Step[]>();
    try {
      for (const { mix, start } of mixes) {
        const setup: DriverSetup = {
          apis,
          sim,
          keys: { qr: tenant.keys.qr, gateway: tenant.keys.gateway, link: tenant.keys.gatewayLink },
          mix: MIXES[mix],
          payMaxMs: 5000,
        };
        await driver.call("init", { setup });
        const steps: Step[] = [];
        const measure = async (rate: number) => {
          const s = await step(rate, opts.seconds, {
            driver,
            receiver,
            probe,
            services,
            sim: children[0],
            dbUrl: rig.db.url,
          });
          opts.log(stepLine(topology, mix, s));
          for (const line of s.never.flat()) opts.log(`    ${line}`);
          steps.push(s);
          await probe.settle();
          await sleep(2000);
          return s;
        };
        if (opts.rates) {
          for (const r of opts.rates) await measure(r);
        } else {
          // Up the ladder while the rate holds, down it until one does; at most maxSteps rates.
          let i = LADDER.indexOf(start);
          const first = held(await measure(LADDER[i]));
          for (let n = 1; n < opts.maxSteps; n++) {
            i += first ? 1 : -1;
            if (i < 0 || i >= LADDER.length) break;
            const ok = held(await measure(LADDER[i]));
            if (ok !== first) break;
          }
        }
        out.set(mix, steps);
      }
    } finally {
      await probe.close();
    }
    return out;
  } finally {
    await driver.stop();
    await receiver.stop();
    for (const c of children) await c.stop();
    await rig.close();
  }
}

/** The highest rate held in a ladder (null: none held). */
export const highest = (steps: Step[]) =>
  steps.filter(held).reduce<Step | null>((best, s) => (best === null || s.rate > best.rate ? s : best), null);

/**
 * Before/after of this round's changes, in the same run: one `serve`, generic QR at fixed rates, the build of
 * BENCH_BEFORE_MAIN (another checkout's dist/src/main.js) and ours alternately, twice.
 */
async function beforeAfter(before: string, seconds: number, log: (s: string) => void): Promise<Section> {
  const rates = [100, 200];
  const runs: Record<"before" | "after", Step[][]> = { before: [], after: [] };
  for (let round = 0; round < 2; round++)
    for (const which of ["before", "after"] as const) {
      const out = await runTopology("serve", [{ mix: "generic", start: 100 }], {
        seconds,
        maxSteps: rates.length,
        rates,
        log: (l) => log(`${which}: ${l}`),
        ...(which === "before" ? { main: before } : {}),
      });
      runs[which].push(out.get("generic") ?? []);
    }
  const med = (xs: number[]) => {
    const v = [...xs].sort((a, b) => a - b);
    return v.length === 0 ? NaN : (v[Math.floor((v.length - 1) / 2)] + v[Math.ceil((v.length - 1) / 2)]) / 2;
  };
  const rows = rates.flatMap((rate, i) =>
    (["before", "after"] as const).map((which) => {
      const steps = runs[which].map((r) => r[i]).filter((s): s is Step => s !== undefined);
      return [
        `${rate}/s × ${seconds} s`,
        which,
        steps.map((s) => `${lost(s)}/${s.errors}`).join(", "),
        steps.map((s) => ms1(s.payToWebhook.p50)).join(", "),
        steps.map((s) => ms1(s.payToWebhook.p99)).join(", "),
        ms1(med(steps.map((s) => s.payToWebhook.p99))),
        ms1(med(steps.map((s) => s.serviceCpuMs))),
        ms1(med(steps.map((s) => s.pgCpuMs))),
      ];
    }),
  );
  return {
    title: "Lifecycle before/after: one serve, generic QR, fixed rates",
    columns: [
      "rate",
      "build",
      "late or never / errors per run",
      "pay → webhook p50 ms per run",
      "pay → webhook p99 ms per run",
      "median p99 ms",
      "median service CPU ms/lifecycle",
      "median PostgreSQL CPU ms/lifecycle",
    ],
    rows,
    notes: [
      `"before" is the build given in BENCH_BEFORE_MAIN (the commit before this round's lifecycle changes, see docs/decisions/0144-lifecycle-bench.md); the two builds ran alternately, two rounds each, in this run, same processes and settings as the lifecycle table.`,
    ],
  };
}

export async function benchLifecycle(opts: { quick: boolean; log?: (line: string) => void }): Promise<Section[]> {
  const log = opts.log ?? (() => undefined);
  const loadBefore = loadavg()[0];
  const seconds = Number(process.env.BENCH_LIFECYCLE_SECONDS ?? (opts.quick ? 3 : 60));
  const rates = process.env.BENCH_LIFECYCLE_RATES?.split(",").map(Number);
  const run = { seconds, maxSteps: opts.quick ? 1 : 3, rates: opts.quick ? [20] : rates, log };
  // BENCH_LIFECYCLE_TOPOLOGIES=serve and BENCH_LIFECYCLE_MIXES=generic narrow a tuning run.
  const pickOnly = <T extends string>(all: T[], env: string | undefined) =>
    all.filter((x) => env === undefined || env.split(",").includes(x));
  const mixes = pickOnly<MixName>(["generic", "mix"], process.env.BENCH_LIFECYCLE_MIXES).map((mix) => ({
    mix,
    start: START[mix],
  }));
  const results: [Topology, Map<MixName, Step[]>][] = [];
  for (const t of pickOnly<Topology>(["serve", "scaled"], process.env.BENCH_LIFECYCLE_TOPOLOGIES))
    results.push([t, await runTopology(t, mixes, run)]);
  const rows: (string | number)[][] = [];
  const verdicts: string[] = [];
  for (const [t, byMix] of results)
    for (const [mix, steps] of byMix) {
      for (const s of [...steps].sort((a, b) => a.rate - b.rate)) rows.push(rowOf(t, mix, s));
      const best = highest(steps);
      verdicts.push(
        `${TOPOLOGY_NAME[t]}, ${mix}: highest rate held ${best ? `${best.rate}/s (pay → webhook p99 ${ms1(best.payToWebhook.p99)} ms)` : "none of those tried"}`,
      );
    }
  const sections: Section[] = [];
  const generic = results.map(([, m]) => highest(m.get("generic") ?? []));
  const met = generic.some(
    (b) => b !== null && b.rate >= TARGET_RATE && b.payToWebhook.p99 <= QR_MONITOR_INTERVAL_MS + 1000,
  );
  sections.push({
    title: "Lifecycle: generate → paid → SUCCESS → webhooks and checkout subscriber (open loop)",
    columns: [
      "processes, mix",
      "rate × time",
      "result",
      "paid / errors",
      "webhook late / never",
      "subscriber late / never",
      "subscriber sockets reopened",
      "late by max / p99 ms: webhook; subscriber",
      "pay → webhook p50 / p99 ms",
      "target p99 ms",
      "pay → subscriber p50 / p99 ms",
      "generate p50 / p99 ms",
      "CPU ms per lifecycle: service + PostgreSQL",
      "bench processes' CPU ms per lifecycle",
    ],
    rows,
    notes: [
      `Each payment: a REST generate (80 % \`/qr/generate\`, 15 % \`/gateway/generate-qr\`, 5 % \`/gateway-link/generate-qr\` in the mix rows; all generic QR in the others), sent open loop at the rate for ${seconds} s; a client-token subscriber (\`transactionUpdated\`, one websocket per payment, as a checkout page) opened on the answer; the simulated payer pays after a random 0–5 s (network \`/sim/network/pay\`, gateway \`/sim/gateway/pay\`, payment-link \`approve\`). Pay time = when the pay call was sent.`,
      `Processes: the service (NODE_ENV=production, one fresh PostgreSQL database per topology, QR_MONITOR_INTERVAL_MS=${QR_MONITOR_INTERVAL_MS}), the simulators (\`dist/bench/sim-upstreams.js\`), the merchant's receiver (signed \`payment.created\` + \`payment.completed\` of all three keys, every signature checked) and the load generator with its subscribers each in their own process, all on this machine's ${"CPUs"}.`,
      `Late / never: a webhook (\`payment.created\` per generated payment, \`payment.completed\` per paid one) or a paid payment's subscriber SUCCESS that arrived after the drain window (${DRAIN_MS / 1000} s after the last pay) is late, by how much beyond the window in "late by"; one still missing ${FINAL_WAIT_MS / 1000} s after the window never came, and the bench prints its transaction, its row, outbox events, webhook deliveries and attempts and its subscriber's socket (below the table when there is one). Latencies count every arrival, late ones too. A subscriber whose socket drops (or whose stream ends before a terminal state) opens it again as the hosted checkout page does (200 ms × 2^n, at most 5 s, with lastEventId once it has one): "sockets reopened" counts those, and why is under the table; they do not make a row "not held", a SUCCESS that comes late through them does.`,
      `Held = every generate answered 2xx, every pay accepted, nothing late or never (every generated payment's \`payment.created\` and every paid one's \`payment.completed\` received and its subscriber saw SUCCESS within ${DRAIN_MS / 1000} s of the last pay), no other terminal state, no bad signature, and the load generator kept the rate. Held also needs pay → webhook p99 ≤ ${QR_MONITOR_INTERVAL_MS + 1000} ms (a backlog that grows through the run is not held). A ladder of rates (${LADDER.join(", ")}) is climbed from ${START.generic}/s (generic) and ${START.mix}/s (mix) while each holds, or descended until one does, at most ${run.maxSteps} rates per mix.`,
      `CPU per lifecycle = CPU seconds of the service processes (/proc) and of PostgreSQL's backends of the database over the step (the drain window included, the final wait not) ÷ paid payments.`,
      ...stepNotes(results),
      ...verdicts,
      `Target (issue 19): ≥ ${TARGET_RATE} lifecycles/s of the generic-QR mix on this machine with pay → webhook p99 ≤ monitor interval + 1 s = ${QR_MONITOR_INTERVAL_MS + 1000} ms: ${met ? "met" : "NOT met"}.`,
      loadNote(loadBefore, loadavg()[0]),
    ],
  });
  const before = process.env.BENCH_BEFORE_MAIN;
  if (before && !opts.quick) sections.push(await beforeAfter(before, Math.min(seconds, 30), log));
  return sections;
}
