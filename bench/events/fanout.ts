import type { Helper } from "../support/ipc.js";
import { ProcessClock } from "../support/cpu.js";
import { scrapeLoopLag } from "../support/loop-lag.js";
import { startPgProbe } from "../support/pg-probe.js";
import { sleep, spread, type Spread } from "../support/timing.js";
import type { Commit, Step } from "./driver.js";
import type { Receipt, SubSpec } from "./subscriber-host.js";

export interface FanoutPlan {
  subs: SubSpec[];
  /** Which subscribers must receive an event of this transaction. */
  audience: Map<string, number[]>;
  /** Transitioned once each before measuring, until every subscriber has had one event (proves it is live). */
  warmIds: string[];
  /** Transitioned round-robin during the measured phase. */
  runIds: string[];
  rate: number;
  seconds: number;
  step: Step;
}

export interface FanoutResult {
  commits: number;
  achievedRate: number;
  deliveries: number;
  lost: number;
  duplicates: number;
  latency: Spread;
  commitMs: Spread;
  /** The api instance: CPU used, and time its event loop thread waited for a CPU, as % of the phase. */
  server: { cpuPct: number | null; waitPct: number | null; loopP99Ms: number; loopMaxMs: number };
  /** The load generators: event-loop threads waiting for a CPU (% of the phase, summed), worst event-loop delay. */
  hosts: { waitPct: number | null; loopP99Ms: number; loopMaxMs: number };
  subscriberEnds: number;
  /** `select 1` round trips on a side connection while driven. */
  pgRoundTrip: Spread;
}

/** Receipts keyed `${subscriber}|${eventId}` → arrival times. */
class Arrivals {
  private readonly map = new Map<string, number[]>();
  add(rs: Receipt[]): void {
    for (const [sub, evt, at] of rs) {
      const k = `${sub}|${evt}`;
      const list = this.map.get(k);
      if (list) list.push(at);
      else this.map.set(k, [at]);
    }
  }
  first(sub: number, evt: string): number | undefined {
    return this.map.get(`${sub}|${evt}`)?.[0];
  }
  count(sub: number, evt: string): number {
    return this.map.get(`${sub}|${evt}`)?.length ?? 0;
  }
}

const expectedPairs = (commits: Commit[], audience: Map<string, number[]>) =>
  commits.flatMap(([evt, tx]) => (audience.get(tx) ?? []).map((sub) => [sub, evt] as const));

async function drainUntil(
  hosts: Helper[],
  arrivals: Arrivals,
  pairs: (readonly [number, string])[],
  timeoutMs: number,
): Promise<number> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for (const h of hosts) arrivals.add(await h.call<Receipt[]>("drain"));
    const missing = pairs.filter(([sub, evt]) => arrivals.first(sub, evt) === undefined).length;
    if (missing === 0 || Date.now() > until) return missing;
    await sleep(200);
  }
}

/**
 * Opens the plan's subscribers on the hosts, warms them up, drives transitions at a fixed rate from the
 * driver, and matches every committed event with its arrival at every subscriber that should see it.
 */
export interface FanoutRig {
  driver: Helper;
  hosts: Helper[];
  /** ws://…/graphql of the service instance. */
  wsUrl: string;
  serverPid: number | undefined;
  /** http://… of the api instance (its /metrics). */
  serverUrl: string;
  dbUrl: string;
  log(line: string): void;
}

export async function runFanout(plan: FanoutPlan, rig: FanoutRig): Promise<FanoutResult> {
  const { driver, hosts, serverPid, log } = rig;
  const per = Math.ceil(plan.subs.length / hosts.length);
  const t0 = Date.now();
  await Promise.all(
    hosts.map((h, i) => h.call("open", { url: rig.wsUrl, subs: plan.subs.slice(i * per, (i + 1) * per) })),
  );
  log(`  ${plan.subs.length} subscribers connected in ${Date.now() - t0} ms`);

  const arrivals = new Arrivals();
  const warm = await driver.call<Commit[]>("burst", { ids: plan.warmIds, step: plan.step });
  const warmMissing = await drainUntil(hosts, arrivals, expectedPairs(warm, plan.audience), 60_000);
  if (warmMissing > 0) throw new Error(`${warmMissing} subscribers never received their warm-up event`);
  log(`  warm-up: every subscriber received its first event`);

  const probe = await startPgProbe(rig.dbUrl);
  await scrapeLoopLag(rig.serverUrl);
  const serverClock = new ProcessClock([serverPid]);
  const hostsClock = new ProcessClock(hosts.map((h) => h.child.pid));
  await Promise.all(hosts.map((h) => h.call("resetLoopDelay")));
  const total = Math.round(plan.rate * plan.seconds);
  const { commits, elapsedMs } = await driver.call<{ commits: Commit[]; elapsedMs: number }>("run", {
    ids: plan.runIds,
    rate: plan.rate,
    total,
    step: plan.step,
  });
  const serverUse = serverClock.read();
  const hostsUse = hostsClock.read();
  const loop = await scrapeLoopLag(rig.serverUrl);
  const pgRoundTrip = await probe.stop();
  const pairs = expectedPairs(commits, plan.audience);
  const lost = await drainUntil(hosts, arrivals, pairs, 10_000);
  const committedAt = new Map(commits.map((c) => [c[0], c[3]]));
  const latencies: number[] = [];
  let duplicates = 0;
  for (const [sub, evt] of pairs) {
    const at = arrivals.first(sub, evt);
    if (at === undefined) continue;
    latencies.push(at - (committedAt.get(evt) as number));
    duplicates += arrivals.count(sub, evt) - 1;
  }
  const statuses = await Promise.all(
    hosts.map((h) => h.call<{ ended: number; errors: string[]; loopP99Ms: number; loopMaxMs: number }>("status")),
  );
  for (const s of statuses) if (s.errors.length) log(`  subscriber errors: ${s.errors.join(" | ")}`);
  await Promise.all(hosts.map((h) => h.call("close")));
  return {
    commits: commits.length,
    achievedRate: commits.length / (elapsedMs / 1000),
    deliveries: pairs.length,
    lost,
    duplicates,
    latency: spread(latencies),
    commitMs: spread(commits.map((c) => c[3] - c[2])),
    server: { ...serverUse, loopP99Ms: loop.p99Ms, loopMaxMs: loop.maxMs },
    hosts: {
      waitPct: hostsUse.waitPct,
      loopP99Ms: Math.max(...statuses.map((x) => x.loopP99Ms)),
      loopMaxMs: Math.max(...statuses.map((x) => x.loopMaxMs)),
    },
    subscriberEnds: statuses.reduce((n, s) => n + s.ended, 0),
    pgRoundTrip,
  };
}
