import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { outbox, recheck, rechecked, refusal } from "../support/recheck.js";

// Issue 37, item 1: recheckPayment polls a PayWay link's own status call once, with the payment's stored (sealed)
// poll session, in real Chromium for the generate and against the service's PayWay twin. The service runs as an API
// process: no watch polls these payments, so whatever is recorded here, the recheck recorded.

interface LinkTx {
  transactionId: string;
  status: string;
  expiredAt: string;
  data: { qr: string; clientId: string };
}

const DAY = 24 * 3600_000;

describe("recheckPayment, gateway-link area (PayWay twin)", () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  const key = () => AUTH.gatewayLink(tenant.keys.gatewayLink);
  const gen = async (amount: number, k = tenant.keys.gatewayLink) => {
    const r = await post(`${t.url}/gateway-link/generate-qr`, { amount, currency: 116 }, AUTH.gatewayLink(k));
    expect(r.status).toBe(200);
    return r.body as LinkTx;
  };
  const twin = (control: string, clientId: string) => post(`${t.url}/sim/link/${control}`, { clientId });
  const status = async (id: string) =>
    ((await post(`${t.url}/gateway-link/check`, { transactionId: id }, key())).body as LinkTx).status;
  /** The QR's own expiry (KHQR tag 99), as the generic QR area's decoder reads it. */
  const qrExpiry = async (qr: string) => {
    const r = await post(`${t.url}/qr/decode`, { qrData: qr }, AUTH.qr(tenant.keys.qr));
    return Number((r.body as { data: { expirationTimestamp: string } }).data.expirationTimestamp);
  };

  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    const link = (await post(`${t.url}/sim/payway/links`, { currency: "KHR", merchant: "Twin Coffee" })).body as {
      code: string;
    };
    tenant = await createTenant(t, { linkUrl: `${t.url}/sim/payway/${link.code}`, linkProtocol: "payway" });
    other = await createTenant(t, { name: "Other Shop" });
  });
  afterAll(async () => t?.stop());

  it("waiting: a scan is recorded; an approval reads processing, then PAID on time with the receipt", async () => {
    const b = await gen(5000);
    const created = t.clock.now().getTime();
    const first = await rechecked(t, b.transactionId, key());
    expect(first).toMatchObject({ outcome: "NOT_PAID", recorded: false, transaction: { status: "PENDING" } });
    expect(first.detail).toMatch(/^PayWay reports "request_qr".* \(not paid\)$/);
    // The window is the QR's own life: its tag 99 expiry, 30 days after its creation as PayWay's are.
    const expiry = await qrExpiry(b.data.qr);
    expect(first.windowEndsAt).toBe(new Date(expiry).toISOString());
    expect(Math.abs(expiry - (created + 30 * DAY))).toBeLessThan(10_000);

    expect((await twin("scan", b.data.clientId)).status).toBe(200);
    t.clock.advance(10_000);
    expect(await rechecked(t, b.transactionId, key())).toMatchObject({ outcome: "NOT_PAID", recorded: true });
    expect((await twin("approve", b.data.clientId)).status).toBe(200);
    t.clock.advance(10_000);
    const processing = await rechecked(t, b.transactionId, key());
    expect(processing).toMatchObject({ outcome: "NOT_PAID", recorded: false });
    expect(processing.detail).toMatch(/^PayWay reports "processing-payment"/);
    t.clock.advance(10_000);
    const paid = await rechecked(t, b.transactionId, key());
    expect(paid).toMatchObject({
      outcome: "PAID",
      recorded: true,
      transaction: { status: "SUCCESS", latePayment: false },
    });
    expect(paid.transaction.receiptUrl).toMatch(/\/api\/payment-gateway\/v1\/payments\/download-receipt\?file=/);
    expect(await outbox(t, b.transactionId)).toEqual([
      { type: "payment.created", status: "PENDING", late: undefined },
      { type: "payment.scanned", status: "PENDING", late: undefined },
      { type: "payment.completed", status: "SUCCESS", late: undefined },
    ]);
    const done = await refusal(t, b.transactionId, key());
    expect(done.extensions?.code).toBe("BAD_USER_INPUT");
    expect(done.message).toMatch(/is SUCCESS: its outcome is recorded/);
  }, 60_000);

  it("approved after the 180 s (moved clock): a late SUCCESS, payment.completed with late: true", async () => {
    const b = await gen(3000);
    t.clock.advance(Date.parse(b.expiredAt) - t.clock.now().getTime() + 1_000);
    expect(await status(b.transactionId)).toBe("EXPIRED");
    expect((await twin("approve", b.data.clientId)).status).toBe(200);
    expect((await rechecked(t, b.transactionId, key())).detail).toMatch(/^PayWay reports "processing-payment"/);
    t.clock.advance(10_000);
    const r = await rechecked(t, b.transactionId, null);
    expect(r).toMatchObject({ outcome: "PAID", recorded: true, transaction: { status: "SUCCESS", latePayment: true } });
    expect(r.detail).toMatch(/recorded as a late payment/);
    expect(await outbox(t, b.transactionId)).toEqual([
      { type: "payment.created", status: "PENDING", late: undefined },
      { type: "payment.expired", status: "EXPIRED", late: undefined },
      { type: "payment.completed", status: "SUCCESS", late: true },
    ]);
  }, 60_000);

  it("another key's payment is NOT_FOUND as a missing one; a payment without a poll session cannot be rechecked", async () => {
    const b = await gen(2000);
    const foreign = await refusal(t, b.transactionId, AUTH.gatewayLink(other.keys.gatewayLink));
    expect(foreign).toEqual(await refusal(t, "txn_doesnotexist0000000000", AUTH.gatewayLink(other.keys.gatewayLink)));
    expect(foreign.extensions?.code).toBe("NOT_FOUND");
    // A payment the retired simulated page issued before an upgrade: its row has no poll session.
    const old = await gen(2000, other.keys.gatewayLink);
    await t.app.core.db.query(
      `update "transaction" set upstream = (upstream - 'poll') || '{"protocol":"simulated"}' where id = ?`,
      [old.transactionId],
    );
    const r = await refusal(t, old.transactionId, AUTH.gatewayLink(other.keys.gatewayLink));
    expect(r.extensions?.code).toBe("BAD_USER_INPUT");
    expect(r.message).toBe(
      `Transaction ${old.transactionId} cannot be rechecked: it has no stored status call to ask without its page ` +
        "(a payment of the retired simulated page); only a PayWay link payment is rechecked",
    );
  }, 60_000);

  it("a recheck goes through the worker's poll gate: while a 429 holds the polls back it is not sent, and says when to ask again", async () => {
    const b = await gen(2500);
    const polls = async () =>
      ((await (await fetch(`${t.url}/sim/link/clients/${b.data.clientId}`)).json()) as { polls: number }).polls;
    expect((await post(`${t.url}/sim/payway/fault`, { mode: "rate-limited", calls: 1, retryAfter: "30" })).status).toBe(
      200,
    );
    try {
      const limited = await rechecked(t, b.transactionId, key());
      expect(limited).toMatchObject({ outcome: "UPSTREAM_UNAVAILABLE", recorded: false });
      expect(limited.detail).toMatch(/HTTP 429/);
      // The twin answers again (its one 429 is spent), but the worker holds its polls back 30 s: nothing is sent.
      const before = await polls();
      t.clock.advance(11_000); // past the 10 s between two rechecks of one transaction
      const held = await rechecked(t, b.transactionId, key());
      expect(held).toMatchObject({ outcome: "UPSTREAM_UNAVAILABLE", recorded: false });
      expect(held.detail).toMatch(
        /not sent: PayWay answered a status poll with 429: this worker's polls are held back until \S+Z; ask again in (2\d|30) s$/,
      );
      expect(await polls()).toBe(before);
      expect(await status(b.transactionId)).toBe("PENDING");
    } finally {
      await post(`${t.url}/sim/payway/fault`, { mode: "ok" });
    }
  }, 60_000);

  it("outside the QR's life: an error naming its end (the QR's tag 99 expiry)", async () => {
    const b = await gen(1500);
    const end = new Date(await qrExpiry(b.data.qr)).toISOString();
    t.clock.advance(30 * DAY + 60_000);
    const r = await recheck(t, b.transactionId, key());
    expect(r.error?.extensions).toMatchObject({ code: "BAD_USER_INPUT", windowEndsAt: end });
    expect(r.error?.message).toBe(
      `Transaction ${b.transactionId} is outside its recheck window: it ended at ${end} ` +
        "(the life of the QR the page issued (its KHQR tag 99))",
    );
  }, 60_000);
});
