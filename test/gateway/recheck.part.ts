import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { outbox, recheck, rechecked, refusal } from "../support/recheck.js";

// Issue 37, item 1: recheckPayment asks the hosted gateway again (check-transaction-2) about one order. The service
// runs as an API process (no monitor, no pushback hint acted on): whatever is recorded here, the recheck recorded.
// The area has no late watch: an approval given as the QR's lifetime ends is found by a recheck or never.

interface Order {
  orderId: string;
  transactionId: string;
  expiredAt: string;
}

const DAY = 24 * 3600_000;

describe("recheckPayment, hosted gateway area", () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  let n = 0;
  const key = () => AUTH.gateway(tenant.keys.gateway);
  const gen = async (amount = 10.5, lifetime = 3): Promise<Order> => {
    const orderId = `rc-${Date.now().toString(36)}-${n++}`;
    const r = await post(
      `${t.url}/gateway/generate-qr`,
      { qrData: { orderId, amount, currency: "USD", lifetime } },
      key(),
    );
    expect(r.status).toBe(200);
    const b = r.body as { transactionId: string; expiresAt: string };
    return { orderId, transactionId: b.transactionId, expiredAt: b.expiresAt };
  };
  const pay = (orderId: string, amount?: string) =>
    post(`${t.url}/sim/gateway/pay`, { tranId: orderId, outcome: "APPROVED", ...(amount ? { amount } : {}) });
  const status = async (orderId: string) =>
    ((await post(`${t.url}/gateway/check-status`, { orderId }, key())).body as { status: string }).status;

  beforeAll(async () => {
    t = await startTestApp({ GATEWAY_PUSHBACK: "false" }, { role: "api" });
    tenant = await createTenant(t, { gatewayMerchantId: "gw_rc_1", gatewaySecret: "gw-rc-secret-0123456789" });
    other = await createTenant(t, { name: "Other Shop", gatewayMerchantId: "gw_rc_2" });
    await post(`${t.url}/sim/gateway/merchants`, { merchantId: "gw_rc_1", apiKey: "gw-rc-secret-0123456789" });
    await post(`${t.url}/sim/gateway/merchants`, { merchantId: "gw_rc_2", apiKey: "sim-secret-0123456789" });
  });
  afterAll(async () => t?.stop());

  it("waiting: NOT_PAID; approved: SUCCESS on time with the gateway's status; then terminal is an error", async () => {
    const before = t.clock.now().getTime();
    const o = await gen();
    const waiting = await rechecked(t, o.transactionId, key());
    expect(waiting).toMatchObject({ outcome: "NOT_PAID", recorded: false, transaction: { status: "CHECKOUT" } });
    expect(waiting.detail).toMatch(/^gateway check-transaction-2 reports payment_status .* \(not paid\)$/);
    // check-transaction-2's 7 days (the expiry, 3 minutes away, plus a day is earlier).
    expect(Date.parse(waiting.windowEndsAt) - (before + 7 * DAY)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(waiting.windowEndsAt) - (before + 7 * DAY)).toBeLessThan(5_000);
    expect((await pay(o.orderId)).status).toBe(200);
    t.clock.advance(10_000);
    const paid = await rechecked(t, o.transactionId, key());
    expect(paid).toMatchObject({
      outcome: "PAID",
      recorded: true,
      transaction: { status: "SUCCESS", latePayment: false },
    });
    expect(paid.detail).toBe("gateway check-transaction-2 reports payment_status APPROVED");
    expect(await outbox(t, o.transactionId)).toEqual([
      { type: "payment.created", status: "CHECKOUT", late: undefined },
      { type: "payment.completed", status: "SUCCESS", late: undefined },
    ]);
    const done = await refusal(t, o.transactionId, key());
    expect(done.extensions?.code).toBe("BAD_USER_INPUT");
    expect(done.message).toMatch(/is SUCCESS: its outcome is recorded/);
  });

  it("approved as the lifetime ended, seen after EXPIRED: a late SUCCESS, payment.completed with late: true", async () => {
    const o = await gen(4.25);
    t.clock.advance(Date.parse(o.expiredAt) - t.clock.now().getTime() - 1_000);
    expect((await pay(o.orderId)).status).toBe(200);
    t.clock.advance(2_000);
    // Read after its expiry: EXPIRED (the area expires at expiredAt, with no check and no late watch).
    expect(await status(o.orderId)).toBe("EXPIRED");
    const r = await rechecked(t, o.transactionId, key());
    expect(r).toMatchObject({ outcome: "PAID", recorded: true, transaction: { status: "SUCCESS", latePayment: true } });
    expect(await outbox(t, o.transactionId)).toEqual([
      { type: "payment.created", status: "CHECKOUT", late: undefined },
      { type: "payment.expired", status: "EXPIRED", late: undefined },
      { type: "payment.completed", status: "SUCCESS", late: true },
    ]);
    expect(await status(o.orderId)).toBe("SUCCESS");
  });

  it("an approval of another amount: MISMATCHED, held (payment.mismatched); a held payment is not rechecked", async () => {
    const o = await gen(7.5);
    await pay(o.orderId, "7.00");
    const r = await rechecked(t, o.transactionId, key());
    expect(r).toMatchObject({ outcome: "MISMATCHED", recorded: true, transaction: { status: "CHECKOUT" } });
    expect((await outbox(t, o.transactionId)).map((e) => e.type)).toEqual(["payment.created", "payment.mismatched"]);
    t.clock.advance(10_000);
    expect((await refusal(t, o.transactionId, key())).message).toMatch(/is held .*resolveMismatch/);
  });

  it("another key's order is NOT_FOUND, as a missing one; the admin token rechecks it", async () => {
    const o = await gen();
    const foreign = await refusal(t, o.transactionId, AUTH.gateway(other.keys.gateway));
    expect(foreign).toEqual(await refusal(t, "txn_doesnotexist0000000000", AUTH.gateway(other.keys.gateway)));
    expect(foreign.extensions?.code).toBe("NOT_FOUND");
    await pay(o.orderId);
    expect(await rechecked(t, o.transactionId, null)).toMatchObject({
      outcome: "PAID",
      transaction: { status: "SUCCESS" },
    });
  });

  it("outside its window (7 days from creation, at least a day past expiry): an error naming the window's end", async () => {
    const o = await gen(3, 3);
    const created = t.clock.now().getTime();
    t.clock.advance(7 * DAY + 60_000);
    const r = await recheck(t, o.transactionId, key());
    expect(r.error?.extensions?.code).toBe("BAD_USER_INPUT");
    const end = Date.parse(r.error?.extensions?.windowEndsAt ?? "");
    expect(Math.abs(end - (created + 7 * DAY))).toBeLessThan(5_000);
    expect(r.error?.message).toMatch(
      new RegExp(`is outside its recheck window: it ended at ${new Date(end).toISOString()} \\(a hosted-gateway`),
    );
  });
});
