import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { linkModule } from "../../src/gateway-link/index.js";
import { simulatedQr } from "../../src/simulators/upstream-qr.js";
import { startTestApp, createTenant, type TestApp, type Tenant } from "../support/app.js";
import { startPaywayTwin, type RunningTwin } from "../support/payway-twin.js";
import {
  generateLinkQr,
  jumpBetweenPolls,
  polled as pollsReached,
  twinClient,
  twinFault,
  txRow,
  type LinkTx,
} from "../support/payway-rig.js";
import { waitFor } from "../support/wait.js";

// A PayWay payment whose API hangs past a poll's timeout and then refuses connections (its port closed), and the end
// of the late watch, in real Chromium against the PayWay twin. The service runs with LINK_LATE_WATCH_MS = 2 h; the
// twin on its own wall clock, the service's clock moved hours ahead. Polls every 500 ms, each given 10 s.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const WATCH_MS = 2 * HOUR;

describe("PayWay poll timeouts, refused connections, and the end of the late watch (LINK_LATE_WATCH_MS = 2 h)", () => {
  let t: TestApp;
  let twin: RunningTwin;
  let tenant: Tenant;
  const watch = () => t.app.module(linkModule).watch;
  const fault = (body: Record<string, unknown>) => twinFault(twin, body);
  const gen = (amount: number) => generateLinkQr(t.url, tenant.keys.gatewayLink, amount);
  const client = (b: LinkTx) => twinClient(twin, b);
  const polled = (b: LinkTx, more: number) => pollsReached(twin, b, more);
  const row = (id: string) => txRow(t.app.core.db, id);
  const events = async (id: string) =>
    (
      await t.app.core.db.query<{ type: string }>(
        `select type from transaction_event where transaction_ref = ? order by seq`,
        [id],
      )
    ).map((e) => e.type);
  const toAfterExpiry = (b: LinkTx, ms: number) =>
    t.clock.advance(Date.parse(b.expiredAt) + ms - t.clock.now().getTime());
  const expired = (b: LinkTx) =>
    waitFor(async () => (await events(b.transactionId)).includes("payment.expired"), 10_000, 50, "payment.expired");
  const outages = () => watch().stats().outages;
  const twoSweeps = async () => {
    const sweeps = watch().stats().sweeps;
    await waitFor(() => watch().stats().sweeps >= sweeps + 2, 10_000, 50, "two claim sweeps");
  };

  beforeAll(async () => {
    twin = await startPaywayTwin({ makeQr: simulatedQr("twin_shop@abaa", "Twin Shop") });
    t = await startTestApp({ PAYWAY_API_ORIGIN: twin.apiOrigin, LINK_LATE_WATCH_MS: String(WATCH_MS) });
    tenant = await createTenant(t, { linkUrl: await twin.link({ currency: "KHR" }), linkProtocol: "payway" });
  }, 60_000);
  afterEach(async () => {
    await twin?.apiUp();
    await twin?.post("/sim/payway/fault", { mode: "ok" });
  });
  afterAll(async () => {
    await t?.stop();
    await twin?.close();
  });

  it("a poll that times out, then connections refused (the API's port closed): PENDING, EXPIRED on time, the approval read once the API is back", async () => {
    const b = await gen(3300);
    await polled(b, 1);
    // The API hangs longer than a poll waits (10 s): the poll gives up, an outage.
    const before = outages();
    await fault({ mode: "slow", slowMs: 12_000 });
    await waitFor(() => outages() > before, 20_000, 50, "a poll timed out");
    expect((await row(b.transactionId)).status).toBe("PENDING");
    await fault({ mode: "ok" });
    await polled(b, client(b).polls + 2);

    // The API's port closed: every poll meets a refused connection.
    await twin.apiDown();
    const down = outages();
    await waitFor(() => outages() >= down + 3, 10_000, 50, "polls refused a connection");
    expect((await row(b.transactionId)).status).toBe("PENDING");
    // Still refused at its 180 s: EXPIRED then, at once.
    toAfterExpiry(b, -300);
    await expired(b);
    const r = await row(b.transactionId);
    expect(r.status).toBe("EXPIRED");
    const lateBy = (r.completedAt as number) - Date.parse(b.expiredAt);
    expect(lateBy).toBeGreaterThanOrEqual(0);
    expect(lateBy).toBeLessThan(1500);
    const late = outages();
    await waitFor(() => outages() >= late + 2, 10_000, 50, "late polls refused a connection");

    // The API listens again; the payer's approval is read by the late watch.
    await twin.apiUp();
    expect((await twin.post("/sim/link/approve", { clientId: b.data.clientId })).status).toBe(200);
    await waitFor(async () => (await row(b.transactionId)).status === "SUCCESS", 15_000, 100, "late SUCCESS");
    expect(await events(b.transactionId)).toEqual(["payment.created", "payment.expired", "payment.completed"]);
    expect((await t.app.core.store.get(b.transactionId))?.upstream.late).toBe(true);
  }, 50_000);

  it("the late watch ends at LINK_LATE_WATCH_MS: its last poll is due by the end, then next_check_at is null and nothing polls it", async () => {
    const b = await gen(3900);
    await polled(b, 1);
    toAfterExpiry(b, 1);
    await expired(b);
    const end = Date.parse(b.expiredAt) + WATCH_MS;
    // Five minutes before the end: polled, and parked no later than the end (not the usual 10 minutes on).
    const polls = await jumpBetweenPolls(watch(), twin, b, () => toAfterExpiry(b, WATCH_MS - 5 * MINUTE));
    await polled(b, polls + 1);
    await waitFor(async () => !watch().holds(b.transactionId) && (await row(b.transactionId)).nextCheckAt, 10_000);
    const last = (await row(b.transactionId)).nextCheckAt as number;
    expect(last).toBeLessThanOrEqual(end);
    expect(last).toBeGreaterThan(t.clock.now().getTime());

    // The payer approves only now, and the window is over: the watch ends without polling again.
    expect((await twin.post("/sim/link/approve", { clientId: b.data.clientId })).status).toBe(200);
    const seen = client(b).polls;
    toAfterExpiry(b, WATCH_MS + MINUTE);
    await waitFor(async () => (await row(b.transactionId)).nextCheckAt === null, 10_000, 50, "next_check_at null");
    await twoSweeps();
    expect(client(b).polls).toBe(seen);
    expect(watch().holds(b.transactionId)).toBe(false);
    expect((await row(b.transactionId)).status).toBe("EXPIRED");
    expect(await events(b.transactionId)).toEqual(["payment.created", "payment.expired"]);
    // Each wait above has its own deadline and says what it waited for; this only bounds their sum (seen past 40 s
    // at a load of 11 on 2 cores).
  }, 90_000);
});
