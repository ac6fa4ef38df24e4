// Floods (issue 15, finding 3, and the cost burst of finding 2) against one api instance with its caps in
// force: /healthz and another tenant's POST /qr/generate latency during each flood, beside a baseline
// measured without a flood in the same run, and how the hostile attempts were refused.
// Run alone: npx tsc -p tsconfig.build.json && node dist/bench/flood.js [--quick]
//   (or `npm run bench -- --only=floods`); BENCH_FLOOD_SECONDS overrides each flood's duration.
import { loadavg } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { toMarkdown, type Section } from "./table.js";
import { QR_AUTH, createMerchant, createQrKey, type BenchKey } from "./support/admin.js";
import { ProcessClock } from "./support/cpu.js";
import { Helper } from "./support/ipc.js";
import { scrapeLoopLag } from "./support/loop-lag.js";
import { loadNote, ms1, sleep, spread, type Spread } from "./support/timing.js";
import { Rig } from "./events/rig.js";
import type { FloodTally } from "./flood/attacker.js";

const HEALTHZ_P99_MS = 100;
const GENERATE_P99_MS = 250;
/** The probe: GET /healthz and the other tenant's POST /qr/generate, open loop. */
const HEALTHZ_PER_S = 10;
const GENERATE_PER_S = 10;
/** The caps in force: the production defaults (docs/configuration.md), set explicitly. */
const CAPS = {
  RATE_LIMIT_PER_MINUTE: "6000",
  WS_MAX_SOCKETS_PER_PRINCIPAL: "200",
  WS_MAX_SOCKETS_PER_IP: "1000",
  WS_MAX_SUBSCRIPTIONS_PER_SOCKET: "100",
  WS_SUBSCRIBES_PER_SECOND: "20",
  WS_MAX_REPLAY: "1000",
  GRAPHQL_MAX_COST: "5000",
};
/** Finding 2's document: 40 aliases of a list of 100 transactions with their timelines and deliveries (5 KB). */
const HEAVY = `{ ${Array.from(
  { length: 40 },
  (_, i) =>
    `a${i}: transactions(first: 100) { edges { node { qrImage events { id meta } webhookDeliveries(first: 200) { id log { error } } } } }`,
).join(" ")} }`;

interface Probe {
  healthz: Spread;
  generate: Spread;
  failures: Record<string, number>;
}

async function timed(
  url: string,
  init: RequestInit,
  into: number[],
  failures: Record<string, number>,
  what: string,
): Promise<void> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    if (res.status !== 200) failures[`${what} ${res.status}`] = (failures[`${what} ${res.status}`] ?? 0) + 1;
  } catch (err) {
    failures[`${what} ${(err as Error).name}`] = (failures[`${what} ${(err as Error).name}`] ?? 0) + 1;
  }
  // A failed request counts with the time it took to fail: a timeout is a latency too.
  into.push(performance.now() - t0);
}

/** Open loop: request i is sent at t0 + i/rate whether or not earlier ones have answered. */
async function probe(baseUrl: string, key: BenchKey, durationMs: number): Promise<Probe> {
  const healthz: number[] = [];
  const generate: number[] = [];
  const failures: Record<string, number> = {};
  const inFlight: Promise<void>[] = [];
  const body = JSON.stringify({ amount: 2.5, currency: 840, expiredAfter: 600_000, meta: { probe: true } });
  const schedule = (rate: number, send: () => Promise<void>) =>
    (async () => {
      const t0 = performance.now();
      for (let i = 0; i * (1000 / rate) < durationMs; i++) {
        const wait = t0 + (i * 1000) / rate - performance.now();
        if (wait > 0.5) await sleep(wait);
        inFlight.push(send());
      }
    })();
  await Promise.all([
    schedule(HEALTHZ_PER_S, () => timed(`${baseUrl}/healthz`, {}, healthz, failures, "/healthz")),
    schedule(GENERATE_PER_S, () =>
      timed(
        `${baseUrl}/qr/generate`,
        { method: "POST", headers: { "content-type": "application/json", ...QR_AUTH(key.apiKey) }, body },
        generate,
        failures,
        "/qr/generate",
      ),
    ),
  ]);
  await Promise.all(inFlight);
  return { healthz: spread(healthz), generate: spread(generate), failures };
}

const list = (m: Record<string, number>) =>
  Object.entries(m)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${n.toLocaleString("en")} × ${k}`)
    .join("; ") || "none";

interface PhaseResult {
  name: string;
  tally: FloodTally | null;
  probe: Probe;
  apiCpuPct: number | null;
  apiWaitPct: number | null;
  attackerCpuPct: number | null;
  loopP99Ms: number;
  loopMaxMs: number;
}

async function generateToken(baseUrl: string, key: BenchKey): Promise<string> {
  const res = await fetch(`${baseUrl}/qr/generate`, {
    method: "POST",
    headers: { "content-type": "application/json", ...QR_AUTH(key.apiKey) },
    body: JSON.stringify({ amount: 1, currency: 840, expiredAfter: 3_600_000 }),
  });
  if (res.status !== 200) throw new Error(`generate answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { clientToken: string }).clientToken;
}

async function eventIds(dbUrl: string, keyId: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  try {
    const r = await client.query<{ id: string }>(
      "select id from transaction_event where api_key_ref = $1 order by seq",
      [keyId],
    );
    return r.rows.map((row) => row.id);
  } finally {
    await client.end();
  }
}

export async function benchFlood(opts: { quick: boolean; log?: (line: string) => void }): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const loadBefore = loadavg()[0];
  const seconds = Number(process.env.BENCH_FLOOD_SECONDS ?? (opts.quick ? 3 : 15));
  const durationMs = seconds * 1000;
  const rig = await Rig.create("flood");
  try {
    const api = await rig.service("api", CAPS);
    const wsUrl = `${api.url.replace(/^http/, "ws")}/graphql`;
    const driver = rig.helper("driver");
    await driver.call("init", { dbUrl: rig.db.url, poolSize: 2 });
    const attacker = Helper.start(fileURLToPath(new URL("./flood/attacker.js", import.meta.url)), "attacker");
    rig.helpers.push(attacker);

    // The bystander, and one hostile merchant key per flood (each flood's limits start fresh).
    const victim = await createQrKey(api.url, await createMerchant(api.url, "Bystander shop"));
    const hostile = await createMerchant(api.url, "Hostile shop");
    const [ka, kb, kc, kd] = [
      await createQrKey(api.url, hostile),
      await createQrKey(api.url, hostile),
      await createQrKey(api.url, hostile),
      await createQrKey(api.url, hostile),
    ];
    const clientToken = await generateToken(api.url, ka);
    // (c): more events under one key than WS_MAX_REPLAY: replaying from the first is refused, replaying from
    // the oldest one the cap allows sends WS_MAX_REPLAY events.
    const maxReplay = Number(CAPS.WS_MAX_REPLAY);
    await driver.call("create", { merchantRef: hostile, apiKeyRef: kc.keyId, count: maxReplay + 200 });
    const ids = await eventIds(rig.db.url, kc.keyId);
    const replayFrom = [ids[0], ids[ids.length - 1 - maxReplay]];
    // (d): something for the burst to list.
    await driver.call("create", { merchantRef: hostile, apiKeyRef: kd.keyId, count: 100 });
    log(`flood: api up, hostile keys ready (${ids.length} events under the replay key)`);

    const results: PhaseResult[] = [];
    const phase = async (name: string, flood: (() => Promise<FloodTally>) | null, during?: () => Promise<void>) => {
      await sleep(opts.quick ? 500 : 2000); // what the previous flood left behind drains first
      await scrapeLoopLag(api.url); // resets the service's event-loop histogram
      const clock = new ProcessClock([api.child.pid]);
      const attackerClock = new ProcessClock([attacker.child.pid]);
      const [p, tally] = await Promise.all([
        probe(api.url, victim, durationMs),
        flood ? flood() : Promise.resolve(null),
        during ? during() : Promise.resolve(),
      ]);
      const lag = await scrapeLoopLag(api.url);
      const c = clock.read();
      results.push({
        name,
        tally,
        probe: p,
        apiCpuPct: c.cpuPct,
        apiWaitPct: c.waitPct,
        attackerCpuPct: flood ? attackerClock.read().cpuPct : null,
        loopP99Ms: lag.p99Ms,
        loopMaxMs: lag.maxMs,
      });
      await attacker.call("close");
      log(`  ${name}: /healthz p99 ${ms1(p.healthz.p99)} ms, generate p99 ${ms1(p.generate.p99)} ms`);
    };

    await phase("baseline: no flood", null);
    await phase("a: one client token opens sockets as fast as it can (64 at a time)", () =>
      attacker.call<FloodTally>("sockets", { url: wsUrl, params: { clientToken }, durationMs, lanes: 64 }),
    );
    // (b): the key's own transactions keep coming (20 a second), so every subscription it holds has work.
    let flooding = true;
    await phase(
      "b: one socket subscribes transactionUpdates 2,000 times a second",
      async () => {
        try {
          return await attacker.call<FloodTally>("subscriptions", {
            url: wsUrl,
            params: QR_AUTH(kb.apiKey),
            durationMs,
            perSecond: 2000,
          });
        } finally {
          flooding = false;
        }
      },
      async () => {
        while (flooding) {
          await driver.call("create", { merchantRef: hostile, apiKeyRef: kb.keyId, count: 1 });
          await sleep(50);
        }
      },
    );
    await phase("c: 20 sockets × 25 subscribes/s with lastEventId (first event / oldest the cap allows)", () =>
      attacker.call<FloodTally>("replay", {
        url: wsUrl,
        params: QR_AUTH(kc.apiKey),
        durationMs,
        sockets: 20,
        perSecond: 25,
        completeAfter: maxReplay,
        lastEventIds: replayFrom,
      }),
    );
    await phase("d: finding 2's 40-alias query, 6 at once, back to back", () =>
      attacker.call<FloodTally>("http", {
        url: `${api.url}/graphql`,
        headers: QR_AUTH(kd.apiKey),
        query: HEAVY,
        durationMs,
        lanes: 6,
      }),
    );

    const met = (r: PhaseResult) => r.probe.healthz.p99 < HEALTHZ_P99_MS && r.probe.generate.p99 < GENERATE_P99_MS;
    return {
      title: `Floods: /healthz and another tenant's /qr/generate while one hostile client floods (1 api instance, caps in force)`,
      columns: [
        "flood",
        "hostile attempts",
        "accepted",
        "refused (how)",
        "events sent to it",
        "/healthz p50 ms",
        "/healthz p99 ms",
        "target p99 ms",
        "generate p50 ms",
        "generate p99 ms",
        "target p99 ms",
        "probe failures",
      ],
      rows: results.map((r) => [
        r.name,
        r.tally?.attempts ?? "–",
        r.tally?.accepted ?? "–",
        r.tally ? list(r.tally.refused) : "–",
        r.tally?.messages ?? "–",
        ms1(r.probe.healthz.p50),
        ms1(r.probe.healthz.p99),
        `< ${HEALTHZ_P99_MS}`,
        ms1(r.probe.generate.p50),
        ms1(r.probe.generate.p99),
        `< ${GENERATE_P99_MS}`,
        list(r.probe.failures),
      ]),
      notes: [
        `One \`node dist/src/main.js api\` instance (NODE_ENV=production, fresh PostgreSQL database) with the caps at their production defaults: ${Object.entries(
          CAPS,
        )
          .map(([k, v]) => `${k}=${v}`)
          .join(
            ", ",
          )}. The hostile client is one forked process on the same machine (so it shares the 2 cores); each flood uses its own key of one hostile merchant.`,
        `Each flood runs ${seconds} s; during it the bench process sends GET /healthz ${HEALTHZ_PER_S}/s and the bystander merchant's POST /qr/generate ${GENERATE_PER_S}/s (open loop, latency from send to the whole response; a failed request counts with the time it took to fail). The baseline row is the same probe with no flood, in the same run.`,
        `(b): a separate process commits 20 of the flooding key's own transactions a second (payment.created through TransactionStore), so every subscription the socket holds has events to deliver. (c): the key has ${ids.length} events; subscriptions alternate between lastEventId = its first event (${ids.length - 1} after it: over WS_MAX_REPLAY) and the oldest the cap allows (${maxReplay} events replayed), and each replayed subscription is completed once its replay has arrived so another can start. (d): the ${Buffer.byteLength(HEAVY).toLocaleString("en")}-byte document of finding 2; the key has 100 transactions.`,
        `"events sent to it" = graphql-ws \`next\` messages the hostile client received. Refusals: websocket close codes (4429 too many sockets, see docs/security.md), graphql-ws \`error\` messages and errored results with their code and message (numbers as #), HTTP statuses.`,
        ...results.map(
          (r) =>
            `${r.name.split(":")[0]}: api CPU ${r.apiCpuPct?.toFixed(0) ?? "?"}% of one core, waiting for a CPU ${r.apiWaitPct?.toFixed(0) ?? "?"}%, event-loop delay p99 ${ms1(r.loopP99Ms)} ms (max ${ms1(r.loopMaxMs)}); attacker CPU ${r.attackerCpuPct?.toFixed(0) ?? "–"}%; probe samples ${r.probe.healthz.n}/${r.probe.generate.n}, max ${ms1(r.probe.healthz.max)}/${ms1(r.probe.generate.max)} ms${r.tally && Object.keys(r.tally.clientErrors).length ? `; attacker-side errors: ${list(r.tally.clientErrors)}` : ""}.`,
        ),
        loadNote(loadBefore, loadavg()[0]),
        `Targets (/healthz p99 < ${HEALTHZ_P99_MS} ms and generate p99 < ${GENERATE_P99_MS} ms): ${results
          .map((r) => `${r.name.split(":")[0]} ${met(r) ? "met" : "MISSED"}`)
          .join(", ")}${opts.quick ? " (quick mode: a smoke test, not a measurement)" : ""}.`,
      ],
    };
  } finally {
    await rig.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.argv.includes("--quick") || process.env.BENCH_QUICK === "1";
  const t0 = Date.now();
  const log = (line: string) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}`);
  console.log(toMarkdown(await benchFlood({ quick, log })));
}
