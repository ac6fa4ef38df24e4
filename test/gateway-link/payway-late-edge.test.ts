import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { linkModule } from "../../src/gateway-link/index.js";
import { simulatedQr } from "../../src/simulators/upstream-qr.js";
import { startTestApp, createTenant, capturedLogger, type TestApp, type Tenant } from "../support/app.js";
import { startPaywayTwin, type RunningTwin } from "../support/payway-twin.js";
import {
  generateLinkQr,
  jumpBetweenPolls,
  polled as pollsReached,
  twinClient,
  twinFault,
  txRow,
  type LinkTx,
  type LinkReadiness,
} from "../support/payway-rig.js";
import { waitFor } from "../support/wait.js";

// The late watch where it meets the provider's edge, the payer's app and an approval hours late, in real Chromium
// against the PayWay twin. The twin runs on the service's clock here (as the service's own twin does), so moving
// the clock hours ahead moves the twin's `approve-late` too. Polls every 500 ms (the test app's interval).

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe("PayWay late watch: the edge's block, the payer's app, an approval hours late (twin on the service's clock)", () => {
  let t: TestApp | undefined;
  let twin: RunningTwin;
  const app = () => t as TestApp;
  const tenants: Record<"x" | "y" | "z", Tenant> = {} as Record<"x" | "y" | "z", Tenant>;
  const { logger, lines } = capturedLogger("warn");
  const watch = () => app().app.module(linkModule).watch;
  const fault = (body: Record<string, unknown>) => twinFault(twin, body);
  const gen = (tenant: Tenant, amount: number) => generateLinkQr(app().url, tenant.keys.gatewayLink, amount);
  const client = (b: LinkTx) => twinClient(twin, b);
  const polled = (b: LinkTx, more: number) => pollsReached(twin, b, more);
  const row = (id: string) => txRow(app().app.core.db, id);
  const events = async (id: string) =>
    (
      await app().app.core.db.query<{ type: string }>(
        `select type from transaction_event where transaction_ref = ? order by seq`,
        [id],
      )
    ).map((e) => e.type);
  const readiness = async () =>
    ((await (await fetch(`${app().url}/readyz`)).json()) as { details?: { gatewayLink?: LinkReadiness } }).details
      ?.gatewayLink;
  const now = () => app().clock.now().getTime();
  const toAfterExpiry = (b: LinkTx, ms: number) => app().clock.advance(Date.parse(b.expiredAt) + ms - now());
  const expired = (b: LinkTx) =>
    waitFor(async () => (await events(b.transactionId)).includes("payment.expired"), 10_000, 50, "payment.expired");
  /** Moves the clock to just past a parked payment's next late poll. */
  const toNextCheck = async (b: LinkTx) => {
    const at = (await row(b.transactionId)).nextCheckAt;
    if (at === null) throw new Error("not parked");
    app().clock.advance(at + 500 - now());
  };
  const parked = (b: LinkTx) =>
    waitFor(
      async () => !watch().holds(b.transactionId) && ((await row(b.transactionId)).nextCheckAt ?? 0) > now(),
      10_000,
      50,
      "parked",
    );
  const lateSuccess = async (b: LinkTx) => {
    await waitFor(async () => (await row(b.transactionId)).status === "SUCCESS", 20_000, 100, "late SUCCESS");
    expect(await events(b.transactionId)).toEqual(["payment.created", "payment.expired", "payment.completed"]);
    expect((await app().app.core.store.get(b.transactionId))?.upstream.late).toBe(true);
  };

  beforeAll(async () => {
    twin = await startPaywayTwin({
      makeQr: simulatedQr("twin_shop@abaa", "Twin Shop"),
      // The service's clock once it runs (the app needs the twin's API origin first).
      clock: () => (t === undefined ? Date.now() : t.clock.now().getTime()),
    });
    t = await startTestApp({ PAYWAY_API_ORIGIN: twin.apiOrigin, LOG_LEVEL: "warn" }, { logger });
    for (const k of ["x", "y", "z"] as const)
      tenants[k] = await createTenant(app(), {
        name: `Shop ${k.toUpperCase()}`,
        linkUrl: await twin.link({ currency: "KHR" }),
        linkProtocol: "payway",
      });
  }, 60_000);
  afterEach(async () => {
    await twin?.post("/sim/payway/fault", { mode: "ok" });
  });
  afterAll(async () => {
    await t?.stop();
    await twin?.close();
  });

  it("the edge blocks the polls: a second payment of the configuration keeps /readyz on LINK_PROXY, is polled through a page from its first poll, and the run is logged once", async () => {
    const from = lines.length;
    await fault({ mode: "bot-check" });
    const a = await gen(tenants.x, 4100);
    // Its direct poll refused, it is polled through a held page (the twin counts the polls it lets through).
    await waitFor(() => watch().stats().viaPage === 1 && client(a).polls >= 1, 15_000, 50, "a polled through a page");
    const first = await readiness();
    expect(first?.setting).toBe("LINK_PROXY");
    const blocked = first?.refusals.cloudflareBlock.count ?? 0;
    expect(blocked).toBeGreaterThanOrEqual(1);

    // A new payment's page opens and answers: that says nothing of the polls, whose run goes on.
    const b = await gen(tenants.x, 4200);
    const right = await readiness();
    expect(right?.setting).toBe("LINK_PROXY");
    expect(right?.refused).toMatch(/^the status poll answered HTTP 403 since /);
    await polled(b, 2);
    const later = await readiness();
    expect(later?.setting).toBe("LINK_PROXY");
    // The configuration is known refused: the second payment never tried a direct poll.
    expect(later?.refusals.cloudflareBlock.count).toBe(blocked);
    expect(watch().stats().viaPage).toBe(2);
    const said = lines.slice(from);
    expect(said.filter((l) => l.includes("payment-link page refused with HTTP 403"))).toHaveLength(1);
    expect(said.some((l) => l.includes("pages answer again"))).toBe(false);
  }, 90_000);

  it("the payer's app said processing-payment, then the API went down: back to the late cadence (parked), not polled every interval through the outage", async () => {
    const b = await gen(tenants.z, 3600);
    await polled(b, 1);
    toAfterExpiry(b, 1);
    await expired(b);
    app().clock.advance(2 * MINUTE);
    await parked(b);
    expect(
      (await twin.post("/sim/link/report", { clientId: b.data.clientId, action: "processing-payment" })).status,
    ).toBe(200);
    const before = client(b).polls;
    await toNextCheck(b);
    // processing-payment: looked at again at the page's cadence, held by the worker.
    await polled(b, before + 2);
    expect(watch().holds(b.transactionId)).toBe(true);

    await fault({ mode: "outage", httpStatus: 503 });
    // Its own polls only: the earlier tests' late payments come due too as the clock moves.
    const mine = () => twin.twin.state.faultAnswers.filter((a) => a.token === client(b).token).length;
    await waitFor(() => mine() > 0, 10_000, 20, "a poll in the outage");
    await parked(b);
    expect(((await row(b.transactionId)).nextCheckAt ?? 0) - now()).toBeGreaterThan(20_000);
    const answered = mine();
    const sweeps = watch().stats().sweeps;
    await waitFor(() => watch().stats().sweeps >= sweeps + 2, 10_000, 50, "two claim sweeps");
    expect(mine()).toBe(answered);
    expect((await row(b.transactionId)).status).toBe("EXPIRED");
  }, 90_000);

  it("approve-late {afterMs: 3 h}: not approved two hours on, approved three hours after its creation and read by the late watch", async () => {
    await fault({ mode: "approve-late", afterMs: 3 * HOUR });
    const b = await gen(tenants.z, 3700);
    const created = client(b).createdAt;
    await polled(b, 1);
    toAfterExpiry(b, 1);
    await expired(b);
    const polls = await jumpBetweenPolls(watch(), twin, b, () => app().clock.advance(2 * HOUR));
    await polled(b, polls + 1);
    await parked(b);
    expect(client(b).action).toBe("request_qr");
    expect((await row(b.transactionId)).status).toBe("EXPIRED");

    // Past three hours after its creation (and its next late poll): the twin has approved it; the watch reads it.
    const next = (await row(b.transactionId)).nextCheckAt ?? 0;
    app().clock.advance(Math.max(next, created + 3 * HOUR) + 500 - now());
    await lateSuccess(b);
    expect(client(b).approvedAt).toBe(created + 3 * HOUR);
  }, 90_000);

  it("approved late while the edge blocks direct polls: the claim's refused poll goes through a page in the same round, not parked with its page → late SUCCESS", async () => {
    const b = await gen(tenants.y, 3800);
    await polled(b, 1);
    toAfterExpiry(b, 1);
    await expired(b);
    // More than 80 s after its expiry the next late poll is more than a lease away: parked between polls.
    app().clock.advance(2 * MINUTE);
    await parked(b);
    expect((await twin.post("/sim/link/approve", { clientId: b.data.clientId })).status).toBe(200);
    await fault({ mode: "bot-check" });
    const blocked = (await readiness())?.refusals.cloudflareBlock.count ?? 0;
    await toNextCheck(b);
    await lateSuccess(b);
    // Its claim's direct poll was refused by the edge; the page read processing-payment, then the approval.
    expect((await readiness())?.refusals.cloudflareBlock.count).toBeGreaterThan(blocked);
  }, 90_000);
});
