import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { linkModule } from "../../src/gateway-link/index.js";
import { simulatedQr } from "../../src/simulators/upstream-qr.js";
import { startTestApp, createTenant, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import { startPaywayTwin, type RunningTwin } from "../support/payway-twin.js";
import {
  generateLinkQr,
  polled as pollsReached,
  twinClient,
  twinFault,
  txRow,
  type LinkTx,
} from "../support/payway-rig.js";
import { startReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";

// A PayWay payment watched after its 180 s, through outages and rate limits: real Chromium issues the QR from the
// PayWay twin's page, the worker polls the twin's API itself. The twin runs on its own wall clock (its __cf_bm lives
// 30 real minutes) while the service's clock is moved hours ahead: the late watch reads the service's clock, so
// nothing here waits out a real window. Polls every 500 ms (the test app's LINK_POLL_INTERVAL_MS).

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe("PayWay late approvals, outages and polite polls (payway adapter against the twin)", () => {
  let t: TestApp;
  let twin: RunningTwin;
  let tenant: Tenant;
  let rx: WebhookReceiver;
  const watch = () => t.app.module(linkModule).watch;
  const fault = (body: Record<string, unknown>) => twinFault(twin, body);
  const gen = (amount: number) => generateLinkQr(t.url, tenant.keys.gatewayLink, amount);
  const client = (b: LinkTx) => twinClient(twin, b);
  const polled = (b: LinkTx, more: number) => pollsReached(twin, b, more);
  const outbox = async (id: string) =>
    (
      await t.app.core.db.query<{ type: string }>(
        `select type from transaction_event where transaction_ref = ? order by seq`,
        [id],
      )
    ).map((e) => e.type);
  const row = (id: string) => txRow(t.app.core.db, id);
  /** Moves the service's clock to `ms` after this payment's expiry. */
  const toAfterExpiry = (b: LinkTx, ms: number) =>
    t.clock.advance(Date.parse(b.expiredAt) + ms - t.clock.now().getTime());
  const expired = (b: LinkTx) =>
    waitFor(async () => (await outbox(b.transactionId)).includes("payment.expired"), 10_000, 50, "payment.expired");
  /** Waits until the area's claim sweep has run twice more on this worker (it runs every second). */
  const twoSweeps = async () => {
    const sweeps = watch().stats().sweeps;
    await waitFor(() => watch().stats().sweeps >= sweeps + 2, 10_000, 50, "two claim sweeps");
  };

  beforeAll(async () => {
    twin = await startPaywayTwin({ makeQr: simulatedQr("twin_shop@abaa", "Twin Shop") });
    t = await startTestApp({ PAYWAY_API_ORIGIN: twin.apiOrigin });
    rx = await startReceiver();
    tenant = await createTenant(t, {
      linkUrl: await twin.link({ currency: "KHR" }),
      linkProtocol: "payway",
      webhooks: rx,
    });
  }, 60_000);
  // A test that fails midway must not leave the twin down for the next one.
  afterEach(async () => {
    await twin?.post("/sim/payway/fault", { mode: "ok" });
  });
  afterAll(async () => {
    await t?.stop();
    await twin?.close();
    await rx?.down();
  });

  it("approved hours after its 180 s: polled at the late cadence, parked in between, recorded as a late SUCCESS", async () => {
    const b = await gen(3100);
    await polled(b, 1);
    toAfterExpiry(b, 1);
    await expired(b);
    // Two minutes after expiry the next poll is 30 s away: parked in the database, not held by the worker.
    t.clock.advance(2 * MINUTE);
    await waitFor(() => !watch().holds(b.transactionId), 10_000, 50, "parked");
    const parked = await row(b.transactionId);
    expect(parked.status).toBe("EXPIRED");
    expect((parked.nextCheckAt as number) - t.clock.now().getTime()).toBeGreaterThan(20_000);
    const quiet = client(b).polls;
    // The sweep that would claim it runs twice: nothing polls a parked payment before its time.
    await twoSweeps();
    expect(client(b).polls).toBe(quiet);

    // Three hours later: claimed by the sweep, polled once, parked again for about 10 minutes (± 10 %).
    t.clock.advance(3 * HOUR);
    await polled(b, quiet + 1);
    await waitFor(async () => {
      const r = await row(b.transactionId);
      return !watch().holds(b.transactionId) && (r.nextCheckAt ?? 0) - t.clock.now().getTime() > MINUTE;
    }, 10_000);
    const next = ((await row(b.transactionId)).nextCheckAt as number) - t.clock.now().getTime();
    expect(next).toBeGreaterThan(9 * MINUTE - 5_000);
    expect(next).toBeLessThanOrEqual(11 * MINUTE);
    await twoSweeps();
    expect(client(b).polls).toBe(quiet + 1);

    // The payer approves now (ABA accepts it: the QR lives 30 days); the next late poll records it.
    expect((await twin.post("/sim/link/approve", { clientId: b.data.clientId })).status).toBe(200);
    t.clock.advance(11 * MINUTE);
    await waitFor(async () => (await row(b.transactionId)).status === "SUCCESS", 15_000, 100, "late SUCCESS");
    expect(await outbox(b.transactionId)).toEqual(["payment.created", "payment.expired", "payment.completed"]);
    expect((await t.app.core.store.get(b.transactionId))?.upstream.late).toBe(true);
    const hook = await waitFor(
      () =>
        rx.received
          .map(
            (r) =>
              JSON.parse(r.body) as { type: string; data: { transaction: { transactionId: string; late?: boolean } } },
          )
          .find((d) => d.type === "payment.completed" && d.data.transaction.transactionId === b.transactionId),
      15_000,
    );
    expect(hook.data.transaction).toMatchObject({ status: "SUCCESS", late: true });
    expect(
      rx.deliveries.find((d) => d.transactionId === b.transactionId && d.type === "payment.completed")?.signatureOk,
    ).toBe(true);
  }, 45_000);

  it("an outage (500, 503, then Cloudflare's 522) is waited out: never FAILED, EXPIRED at its 180 s, the late watch reads the approval", async () => {
    const b = await gen(3200);
    await polled(b, 1);
    const burst = async (httpStatus: number, calls?: number) => {
      const before = twin.twin.state.faultAnswers.length;
      await fault({ mode: "outage", httpStatus, ...(calls === undefined ? {} : { calls }) });
      if (calls !== undefined)
        await waitFor(() => twin.twin.state.fault.mode === "ok", 15_000, 50, `a burst of ${calls} × ${httpStatus}`);
      return before;
    };
    await burst(500, 4);
    await burst(503, 4);
    const from = await burst(522);
    // More failed polls in a row than ever failed a payment before (10), Cloudflare's HTML page among them.
    await waitFor(() => twin.twin.state.faultAnswers.length - from >= 6, 15_000, 50, "polls in the 522 outage");
    expect(twin.twin.state.faultAnswers.slice(-6).every((a) => a.status === 522)).toBe(true);
    // What a caller meets meanwhile: Cloudflare's error page, not the API's JSON.
    const direct = await fetch(`${twin.apiOrigin}/api/pw-app/v1/payment-link/check-payment-status`, { method: "POST" });
    expect(direct.status).toBe(522);
    expect(direct.headers.get("cf-ray")).toMatch(/^[0-9a-f]{16}-SIN$/);
    expect(await direct.text()).toMatch(/Error 522: Connection timed out \| Cloudflare/);
    expect((await twin.post("/sim/payway/fault", { mode: "outage", httpStatus: 418 })).status).toBe(400);
    expect((await row(b.transactionId)).status).toBe("PENDING");

    // Still down at its 180 s: EXPIRED then, at once.
    toAfterExpiry(b, -300);
    await expired(b);
    const r = await row(b.transactionId);
    expect(r.status).toBe("EXPIRED");
    const lateBy = (r.completedAt as number) - Date.parse(b.expiredAt);
    expect(lateBy).toBeGreaterThanOrEqual(0);
    expect(lateBy).toBeLessThan(1500);
    expect(await outbox(b.transactionId)).toEqual(["payment.created", "payment.expired"]);

    // The API comes back; the payer's approval is read by the late watch.
    await fault({ mode: "ok" });
    expect((await twin.post("/sim/link/approve", { clientId: b.data.clientId })).status).toBe(200);
    await waitFor(async () => (await row(b.transactionId)).status === "SUCCESS", 15_000, 100, "late SUCCESS");
    expect(await outbox(b.transactionId)).toEqual(["payment.created", "payment.expired", "payment.completed"]);
    expect((await t.app.core.store.get(b.transactionId))?.upstream.late).toBe(true);
  }, 45_000);

  it("polls are jittered, and a 429 holds them back for its Retry-After (seconds, then an HTTP date)", async () => {
    const b = await gen(3400);
    await polled(b, 21);
    const times = client(b).pollTimes.slice(-21);
    const gaps = times.slice(1).map((x, i) => x - times[i]);
    // 500 ms ± 10 %, as the twin saw them. A loaded machine's timers fire late, never early, and by tens to hundreds of
    // ms: 9 of 20 gaps fell within 410–590 ms on a slow 2-core machine running the suite, 11 on another (the pure
    // jitter is tested in poll-pace.test.ts). So the middle gap is within the band, with room above it for that
    // lateness, and the gaps near the band are spread across it: uniform jitter spreads 20 gaps over ~90 ms, a
    // fixed cadence over the few ms of timer noise.
    const sorted = [...gaps].sort((x, y) => x - y);
    const median = sorted[Math.floor(sorted.length / 2)];
    expect({ median: median >= 450 - 40 && median <= 550 + 150, gaps }).toEqual({ median: true, gaps });
    const near = gaps.filter((g) => g >= 450 - 40 && g <= 550 + 40);
    expect({ spread: Math.max(...near) - Math.min(...near) >= 60, gaps }).toEqual({ spread: true, gaps });

    const limited = async (retryAfter: string) => {
      const limitedBefore = watch().stats().rateLimited;
      await fault({ mode: "rate-limited", calls: 1, retryAfter });
      const answered = await waitFor(
        () => twin.twin.state.fault.mode === "ok" && twin.twin.state.faultAnswers.at(-1),
        10_000,
        20,
        "the 429",
      );
      expect(answered.status).toBe(429);
      const polls = client(b).polls;
      await polled(b, polls + 1);
      expect(watch().stats().rateLimited).toBe(limitedBefore + 1);
      return (client(b).lastPollAt as number) - answered.at;
    };
    expect(await limited("2")).toBeGreaterThanOrEqual(2000);
    // An HTTP date 3 s ahead (whole seconds): at least 2 s from when it was written, whatever is left at the 429.
    const written = Date.now();
    const wait = await limited(new Date(written + 3000).toUTCString());
    expect(wait).toBeGreaterThanOrEqual(1000);
    expect((client(b).lastPollAt as number) - written).toBeGreaterThanOrEqual(2000);
    expect((await row(b.transactionId)).status).toBe("PENDING");
  }, 40_000);

  it("an API that hangs at the 180 s: EXPIRED on time, not when the poll in flight gives up", async () => {
    const b = await gen(3300);
    await polled(b, 1);
    await fault({ mode: "slow", slowMs: 30_000 });
    try {
      await waitFor(() => watch().stats().inFlight > 0, 10_000, 20, "a poll in flight");
      toAfterExpiry(b, 0);
      const movedAt = Date.now();
      await expired(b);
      // The poll's own timeout is 10 s: it is still waiting.
      expect(Date.now() - movedAt).toBeLessThan(3000);
      expect(watch().stats().inFlight).toBeGreaterThan(0);
      expect((await row(b.transactionId)).status).toBe("EXPIRED");
    } finally {
      await fault({ mode: "ok" });
    }
  }, 30_000);

  it("an error that is not an outage (HTTP 400, again and again) fails nothing: counted, EXPIRED at 180 s, watched on", async () => {
    const b = await gen(3500);
    await polled(b, 1);
    expect((await twin.post("/sim/link/break", { clientId: b.data.clientId, status: 400 })).status).toBe(200);
    const broken = client(b).polls;
    await polled(b, broken + 11);
    expect((await row(b.transactionId)).status).toBe("PENDING");
    const metrics = await (
      await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    expect(Number(/^link_polls_erring (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    toAfterExpiry(b, 1);
    await expired(b);
    const after = client(b).polls;
    await polled(b, after + 2);
    expect(await outbox(b.transactionId)).toEqual(["payment.created", "payment.expired"]);
  }, 30_000);
});
