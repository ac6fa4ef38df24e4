// One step of the lifecycle bench: the load at one rate, the drain, and what it measured (late and never, latencies,
// CPU per lifecycle). bench/lifecycle.ts climbs the ladder of steps; bench/lifecycle/report.ts prints them.
import { DbProbe, cpuBetween } from "../db-probe.js";
import type { Child } from "../proc.js";
import { cpuSeconds } from "../support/cpu.js";
import { CpuHog } from "../support/cpu-hog.js";
import type { Helper } from "../support/ipc.js";
import type { ServiceProcess } from "../support/service.js";
import { spread, wallNow, type Spread } from "../support/timing.js";
import type { Payment } from "./driver-host.js";
import { Drain, type DrainResult, type Tally } from "./drain.js";
import { describeNever } from "./never.js";

export const QR_MONITOR_INTERVAL_MS = 3000; // the service's default (QR_MONITOR_INTERVAL_MS)
export const DRAIN_MS = 30_000;
/**
 * What is missing at the end of the drain window is waited for this much longer before it counts as never. 60 s
 * covers the webhook retries a delivery gets meanwhile (attempts 5 s and 10 s after a failed one, ±20 %, each
 * bounded by WEBHOOK_TIMEOUT_MS 10 s) and a claimed delivery's lease running out (timeout + 20 s).
 */
export const FINAL_WAIT_MS = Number(process.env.BENCH_LIFECYCLE_FINAL_WAIT_S ?? 60) * 1000;

export interface Step {
  rate: number;
  seconds: number;
  generated: number;
  paid: number;
  /**
   * Webhooks (payment.created per generated payment, payment.completed per paid one) and the subscribers' SUCCESS
   * (per paid payment): late = arrived after the drain window, never = still missing after the final wait.
   */
  webhook: Tally;
  subscriber: Tally;
  /** Subscriber sockets that dropped and were opened again (as a checkout page does), by why they dropped. */
  reopened: Record<string, number>;
  /** Each payment with something that never came, described (its row, events, deliveries, attempts, socket). */
  never: string[][];
  /** CPU the busy loops of BENCH_CPU_HOG got over the step, % of one core (null: none ran). */
  hogCpuPct: number | null;
  errors: number;
  firstError: string | null;
  /** Errors by kind: the error text up to its first colon ("generate 503", "pay 409", "subscriber"). */
  errorKinds: Record<string, number>;
  duplicates: number;
  badSignatures: number;
  /** Transactions the service made whose generate failed on the way back (webhooks came, the id never did). */
  unknown: number;
  /** Deliveries the receiver could not read (since the receiver started, like badSignatures). */
  unreadable: number;
  /** The load generator fell behind (sent the load in > 110 % of the time): the row says nothing about the service. */
  driverBehind: boolean;
  generate: Spread;
  payToWebhook: Spread;
  payToSubscriber: Spread;
  /** CPU ms per lifecycle of the service processes and of PostgreSQL's backends. */
  serviceCpuMs: number;
  pgCpuMs: number;
  /** CPU ms per lifecycle of the bench's own processes: load generator with its subscribers, receiver, simulators. */
  benchCpuMs: number;
  driverLoopP99Ms: number;
}

/** Late or never, webhooks and subscribers together: what used to be called lost. */
export const lost = (s: Step) => s.webhook.late + s.webhook.never + s.subscriber.late + s.subscriber.never;

/** Held: nothing late, never or failed, and the pay → webhook p99 within target (a backlog that grows is not held). */
export const held = (s: Step) =>
  lost(s) === 0 &&
  s.errors === 0 &&
  s.badSignatures === 0 &&
  s.unreadable === 0 &&
  !s.driverBehind &&
  s.payToWebhook.p99 <= QR_MONITOR_INTERVAL_MS + 1000;

/** CPU seconds of the service's, PostgreSQL's and the bench's processes from a start to a reading. */
class CpuMeter {
  private constructor(
    private readonly p: StepProcs,
    private readonly service0: number[],
    private readonly bench0: number[],
    private readonly pg0: Map<number, number>,
  ) {}

  static async start(p: StepProcs): Promise<CpuMeter> {
    return new CpuMeter(p, read(servicePids(p)), read(benchPids(p)), await p.probe.backendCpu("service"));
  }

  /** CPU ms of each group since the start. */
  async read(): Promise<{ service: number; pg: number; bench: number }> {
    const sum = (now: number[], then: number[]) => now.reduce((a, b, i) => a + b - then[i], 0) * 1000;
    return {
      service: sum(read(servicePids(this.p)), this.service0),
      bench: sum(read(benchPids(this.p)), this.bench0),
      pg: cpuBetween(this.pg0, await this.p.probe.backendCpu("service")),
    };
  }
}

export interface StepProcs {
  driver: Helper;
  receiver: Helper;
  probe: DbProbe;
  services: ServiceProcess[];
  sim: Child;
  dbUrl: string;
}
const servicePids = (p: StepProcs) => p.services.map((s) => s.child.pid);
const benchPids = (p: StepProcs) => [p.driver.child.pid, p.receiver.child.pid, p.sim.proc.pid];
const read = (pids: (number | undefined)[]) => pids.map((pid) => cpuSeconds(pid) ?? 0);

/**
 * The load, then the drain: until everything expected arrived or DRAIN_MS after the last pay (CPU is read
 * then), and, for what is still missing, the final wait (late if it comes then, never if not).
 */
async function loadAndDrain(rate: number, seconds: number, p: StepProcs) {
  await p.receiver.call("drain");
  const cpu = await CpuMeter.start(p);
  const ran = await p.driver.call<{ sentS: number; loopP99Ms: number }>("run", { rate, seconds });
  const windowEnd = wallNow() + DRAIN_MS;
  const drain = new Drain(p.receiver, p.driver, (await p.driver.call<{ payments: Payment[] }>("collect")).payments);
  const complete = await drain.until(windowEnd, 250);
  const used = await cpu.read();
  if (!complete) await drain.until(windowEnd + FINAL_WAIT_MS, 1000);
  const payments = (await p.driver.call<{ payments: Payment[] }>("collect")).payments;
  await p.driver.call("stopSubscribers");
  return { ran, used, drained: drain.result(payments, windowEnd) };
}

export async function step(rate: number, seconds: number, p: StepProcs): Promise<Step> {
  const hogs = CpuHog.fromEnv();
  const hog = hogs > 0 ? CpuHog.start(hogs) : null;
  let hogCpuPct: number | null = null;
  let out: Awaited<ReturnType<typeof loadAndDrain>>;
  try {
    out = await loadAndDrain(rate, seconds, p);
  } finally {
    hogCpuPct = (await hog?.stop()) ?? null;
  }
  const { ran, used, drained } = out;
  return {
    ...stepFigures(rate, seconds, drained),
    never: await describeNever(p.dbUrl, drained.never),
    reopened: reopenedBy(drained.payments),
    hogCpuPct,
    driverBehind: ran.sentS > seconds * 1.1,
    ...perLifecycle(used, drained.payments),
    driverLoopP99Ms: ran.loopP99Ms,
  };
}

/** Sockets given up and opened again, counted by their reason (close code and reason, or the error). */
function reopenedBy(payments: Payment[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of payments)
    for (const s of p.sockets.slice(0, -1)) {
      const why = s.error ?? s.close ?? "unknown";
      out[why] = (out[why] ?? 0) + 1;
    }
  return out;
}

function perLifecycle(used: { service: number; pg: number; bench: number }, payments: Payment[]) {
  const lifecycles = Math.max(1, payments.filter((x) => x.payAt !== null).length);
  return {
    serviceCpuMs: used.service / lifecycles,
    pgCpuMs: used.pg / lifecycles,
    benchCpuMs: used.bench / lifecycles,
  };
}

/** Counts and latencies of a drained step; every arrival counts in the latencies, late ones too. */
function stepFigures(rate: number, seconds: number, d: DrainResult) {
  let errors = 0;
  let firstError: string | null = null;
  const errorKinds: Record<string, number> = {};
  const toHook: number[] = [];
  const toSub: number[] = [];
  for (const x of d.payments) {
    if (x.error !== null || x.seenOther !== null) {
      errors++;
      firstError ??= x.error ?? `subscriber saw ${x.seenOther}`;
      const kind = (x.error ?? `subscriber saw ${x.seenOther}`).split(":")[0];
      errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
    }
    if (x.transactionId === null || x.payAt === null) continue;
    const hook = d.hooks.get(`${x.transactionId} payment.completed`);
    if (hook !== undefined) toHook.push(hook - x.payAt);
    if (x.seenAt !== null) toSub.push(x.seenAt - x.payAt);
  }
  return {
    rate,
    seconds,
    generated: d.payments.filter((x) => x.transactionId !== null).length,
    paid: d.payments.filter((x) => x.payAt !== null).length,
    webhook: d.webhook,
    subscriber: d.subscriber,
    errors,
    firstError,
    errorKinds,
    duplicates: d.duplicates,
    badSignatures: d.badSignatures,
    unreadable: d.unreadable,
    unknown: d.unknown,
    generate: spread(d.payments.map((x) => x.generateMs)),
    payToWebhook: spread(toHook),
    payToSubscriber: spread(toSub),
  };
}
