import { loadavg } from "node:os";
import type { Section } from "../table.js";
import { QR_AUTH, createMerchant, createQrKey, type BenchKey } from "../support/admin.js";
import { loadNote, ms1 } from "../support/timing.js";
import type { Helper } from "../support/ipc.js";
import { runFanout, type FanoutPlan, type FanoutResult, type FanoutRig } from "./fanout.js";
import { Rig } from "./rig.js";
import type { SubSpec } from "./subscriber-host.js";

/** 1,000 by default; bench/events.ts also runs the scale target's 10,000 (BENCH_SUBSCRIBERS overrides both). */
const DEFAULT_SUBSCRIBERS = 1000;
const RATE = Number(process.env.BENCH_EVENTS_RATE ?? 100); // override for capacity runs
const TARGET_P99_MS = 100;
const SELECTION = `{ id type createdAt transaction { transactionId status amount currency updatedAt } meta }`;
// A checkout page holds a clientToken: it may select the checkout view only (docs/api.md "Client tokens").
const ONE = `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id type transaction { transactionId status amount currency } } }`;
const STREAM = `subscription { transactionUpdates(area: qr) ${SELECTION} }`;
const UPDATE = { event: "transaction.updated" as const };

/** POST /qr/generate as a merchant's backend would: the transaction and its clientToken for the checkout page. */
async function generate(
  baseUrl: string,
  key: BenchKey,
  count: number,
): Promise<{ transactionId: string; clientToken: string }[]> {
  const out: { transactionId: string; clientToken: string }[] = [];
  let next = 0;
  const lane = async () => {
    while (next++ < count) {
      const res = await fetch(`${baseUrl}/qr/generate`, {
        method: "POST",
        headers: { "content-type": "application/json", ...QR_AUTH(key.apiKey) },
        body: JSON.stringify({ amount: 1.5, currency: 840, expiredAfter: 3_600_000, meta: { bench: true } }),
      });
      if (res.status !== 200) throw new Error(`generate answered ${res.status}: ${await res.text()}`);
      out.push((await res.json()) as { transactionId: string; clientToken: string });
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return out;
}

/** A: one checkout page per transaction — transactionUpdated with its clientToken; each event has one receiver. */
async function perTransactionPlan(baseUrl: string, seconds: number, SUBSCRIBERS: number): Promise<FanoutPlan> {
  const key = await createQrKey(baseUrl, await createMerchant(baseUrl, "Bench checkout"));
  const txs = await generate(baseUrl, key, SUBSCRIBERS);
  const subs: SubSpec[] = txs.map((t, index) => ({
    index,
    connectionParams: { clientToken: t.clientToken },
    query: ONE,
    variables: { id: t.transactionId },
  }));
  const ids = txs.map((t) => t.transactionId);
  return {
    subs,
    audience: new Map(ids.map((id, i) => [id, [i]])),
    warmIds: ids,
    runIds: ids,
    rate: RATE,
    seconds,
    step: UPDATE,
  };
}

/** B: 100 merchants' keys, 10 listeners each on the key's stream (transactionUpdates); each event has 10 receivers. */
async function perKeyPlan(baseUrl: string, driver: Helper, seconds: number, SUBSCRIBERS: number): Promise<FanoutPlan> {
  const keys = 100;
  const listeners = SUBSCRIBERS / keys;
  const subs: SubSpec[] = [];
  const audience = new Map<string, number[]>();
  const byKey: string[][] = [];
  for (let k = 0; k < keys; k++) {
    const key = await createQrKey(baseUrl, await createMerchant(baseUrl, `Bench shop ${k}`));
    const mine: number[] = [];
    for (let l = 0; l < listeners; l++) {
      mine.push(subs.length);
      subs.push({ index: subs.length, connectionParams: QR_AUTH(key.apiKey), query: STREAM, variables: {} });
    }
    const ids = await driver.call<string[]>("create", { merchantRef: key.merchantId, apiKeyRef: key.keyId, count: 10 });
    for (const id of ids) audience.set(id, mine);
    byKey.push(ids);
  }
  // Round-robin across keys, so consecutive transitions reach different listeners.
  const runIds = byKey[0].flatMap((_, j) => byKey.map((ids) => ids[j]));
  return { subs, audience, warmIds: byKey.map((ids) => ids[0]), runIds, rate: RATE, seconds, step: UPDATE };
}

const pct = (v: number | null) => (v === null ? "?" : `${v.toFixed(0)}%`);

function row(name: string, subs: number, r: FanoutResult): (string | number)[] {
  return [
    name,
    subs,
    `${r.commits} (${r.achievedRate.toFixed(1)}/s)`,
    r.deliveries,
    r.lost,
    ms1(r.latency.p50),
    ms1(r.latency.p95),
    ms1(r.latency.p99),
    `< ${TARGET_P99_MS}`,
    ms1(r.latency.max),
  ];
}

/**
 * 1,000 graphql-ws subscribers on one `api` instance; a separate process commits 100 transitions/s through
 * TransactionStore.transition (outbox + pg_notify), so every event reaches the instance over LISTEN/NOTIFY.
 */
export async function benchSubscriptions(opts: {
  quick: boolean;
  log?: (line: string) => void;
  subscribers?: number;
  seconds?: number;
}): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const loadBefore = loadavg()[0];
  const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? opts.subscribers ?? DEFAULT_SUBSCRIBERS);
  // override for tuning runs
  const seconds = Number(process.env.BENCH_EVENTS_SECONDS ?? opts.seconds ?? (opts.quick ? 3 : 30));
  const rig = await Rig.create("subs");
  try {
    // Every subscriber comes from this machine's one address: the per-address socket and connection caps, and
    // the listener's connection cap, are raised to fit.
    const api = await rig.service("api", {
      WS_MAX_SOCKETS_PER_IP: String(SUBSCRIBERS + 100),
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(SUBSCRIBERS + 200),
      HTTP_MAX_CONNECTIONS: String(SUBSCRIBERS + 1000),
    });
    const driver = rig.helper("driver");
    await driver.call("init", { dbUrl: rig.db.url, poolSize: 4 });
    const hosts = [rig.helper("subscriber-host"), rig.helper("subscriber-host")];
    const fr: FanoutRig = {
      driver,
      hosts,
      wsUrl: `${api.url.replace(/^http/, "ws")}/graphql`,
      serverPid: api.child.pid,
      serverUrl: api.url,
      dbUrl: rig.db.url,
      log,
    };
    const offsets = await Promise.all([driver, ...hosts].map((h) => h.clockOffset()));
    log("subscriptions A: transactionUpdated per transaction (clientToken)");
    const planA = await perTransactionPlan(api.url, seconds, SUBSCRIBERS);
    log(`  ${SUBSCRIBERS} transactions issued through POST /qr/generate`);
    const a = await runFanout(planA, fr);
    log(`  p99 ${ms1(a.latency.p99)} ms, lost ${a.lost}`);
    log("subscriptions B: transactionUpdates per key (API key), 10 listeners per key");
    const planB = await perKeyPlan(api.url, driver, seconds, SUBSCRIBERS);
    log(`  100 keys and 1000 transactions created, ${SUBSCRIBERS} listeners`);
    const b = await runFanout(planB, fr);
    log(`  p99 ${ms1(b.latency.p99)} ms, lost ${b.lost}`);
    const skew = Math.max(...offsets.map((o) => Math.abs(o.offsetMs) + o.withinMs));
    const met = (r: FanoutResult) => r.lost === 0 && r.duplicates === 0 && r.latency.p99 < TARGET_P99_MS;
    return {
      title: `Subscriptions: commit → subscriber (1 api instance, ${SUBSCRIBERS.toLocaleString("en")} graphql-ws subscribers)`,
      columns: [
        "scenario",
        "subscribers",
        "transitions (rate)",
        "deliveries",
        "lost",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "target p99 ms",
        "max ms",
      ],
      rows: [
        row("A: transactionUpdated, 1 per transaction", SUBSCRIBERS, a),
        row(`B: transactionUpdates, 100 keys × ${SUBSCRIBERS / 100}`, SUBSCRIBERS, b),
      ],
      notes: [
        `One \`node dist/src/main.js api\` instance (NODE_ENV=production, fresh PostgreSQL database); subscribers in 2 forked load-generator processes, one websocket each, authenticated in connection_init (A: the generate response's clientToken, as a checkout page; B: x-api-key + x-auth-type, as a merchant backend).`,
        `A separate process commits ${RATE} transitions/s for ${seconds} s (open loop) with the project's TransactionStore.transition (transaction.updated: conditional update + outbox row + pg_notify in one database transaction); the api instance learns of each only through LISTEN/NOTIFY. Latency = arrival in the subscriber's \`next\` − commit acknowledged in the committing process (wall clock, performance.timeOrigin + performance.now(); process clocks agree within ${skew.toFixed(2)} ms).`,
        `Every subscriber first received a warm-up event (so each is live before timing starts); lost = committed events never received by a subscriber that should see them (10 s grace). Duplicates: A ${a.duplicates}, B ${b.duplicates}; subscriptions ended early: A ${a.subscriberEnds}, B ${b.subscriberEnds}.`,
        `Where time goes — commit duration (transition start → commit acknowledged, in the driver) p50/p99: A ${ms1(a.commitMs.p50)}/${ms1(a.commitMs.p99)} ms, B ${ms1(b.commitMs.p50)}/${ms1(b.commitMs.p99)} ms. api instance: CPU ${pct(a.server.cpuPct)} / ${pct(b.server.cpuPct)} of one core, its event-loop thread runnable but waiting for a CPU ${pct(a.server.waitPct)} / ${pct(b.server.waitPct)} of the time, event-loop delay p99 ${ms1(a.server.loopP99Ms)} / ${ms1(b.server.loopP99Ms)} ms (max ${ms1(a.server.loopMaxMs)} / ${ms1(b.server.loopMaxMs)}); load generators waiting for a CPU ${pct(a.hosts.waitPct)} / ${pct(b.hosts.waitPct)}, their event-loop delay p99 ${ms1(a.hosts.loopP99Ms)} / ${ms1(b.hosts.loopP99Ms)} ms (max ${ms1(a.hosts.loopMaxMs)} / ${ms1(b.hosts.loopMaxMs)}); PostgreSQL \`select 1\` round trip p50/p99 ${ms1(a.pgRoundTrip.p50)}/${ms1(a.pgRoundTrip.p99)} / ${ms1(b.pgRoundTrip.p50)}/${ms1(b.pgRoundTrip.p99)} ms (A / B).`,
        loadNote(loadBefore, loadavg()[0]),
        `Target p99 < ${TARGET_P99_MS} ms with 0 lost: A ${met(a) ? "met" : "MISSED"}, B ${met(b) ? "met" : "MISSED"}.`,
      ],
    };
  } finally {
    await rig.close();
  }
}
