import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { cli, outbox, recheck, rechecked, refusal } from "../support/recheck.js";

// Issue 37, item 1: recheckPayment asks the national network again about one generic QR payment. The service runs as
// an API process (no monitor, no late watch): whatever is recorded here, the recheck recorded.

interface QrTx {
  transactionId: string;
  status: string;
  expiredAt: string;
  data: { md5: string };
}

describe("recheckPayment, generic QR area", () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  const key = () => AUTH.qr(tenant.keys.qr);
  const gen = async (expiredAfter = 600_000) =>
    (await post(`${t.url}/qr/generate`, { amount: 2.5, currency: 840, expiredAfter }, key())).body as QrTx;
  const pay = (md5: string) => post(`${t.url}/sim/network/pay`, { md5 });
  const status = async (md5: string) => ((await post(`${t.url}/qr/check`, { md5 }, key())).body as QrTx).status;

  beforeAll(async () => {
    t = await startTestApp({ QR_EXPIRY_GRACE_MS: "0" }, { role: "api" });
    tenant = await createTenant(t);
    other = await createTenant(t, { name: "Other Shop", bakongAccountId: "other_shop@devb" });
  });
  afterAll(async () => t?.stop());

  it("not paid: NOT_PAID, nothing recorded; a second recheck within 10 s is refused, after them it asks again", async () => {
    const tx = await gen();
    const r = await rechecked(t, tx.transactionId, key());
    expect(r).toMatchObject({ outcome: "NOT_PAID", recorded: false, transaction: { status: "PENDING" } });
    expect(r.detail).toMatch(/no payment of this QR.*not found/);
    expect(Date.parse(r.windowEndsAt)).toBe(Date.parse(tx.expiredAt) + 30 * 24 * 3600_000);
    expect((await outbox(t, tx.transactionId)).map((e) => e.type)).toEqual(["payment.created"]);
    const again = await refusal(t, tx.transactionId, key());
    expect(again.extensions?.code).toBe("RATE_LIMITED");
    expect(again.message).toMatch(/the next recheck may be asked from .*one per 10 s/);
    t.clock.advance(10_000);
    expect((await rechecked(t, tx.transactionId, key())).outcome).toBe("NOT_PAID");
  });

  it("paid while PENDING: SUCCESS on time (no late flag), payment.completed", async () => {
    const tx = await gen();
    expect((await pay(tx.data.md5)).status).toBe(200);
    const r = await rechecked(t, tx.transactionId, key());
    expect(r).toMatchObject({
      outcome: "PAID",
      recorded: true,
      transaction: { status: "SUCCESS", latePayment: false },
    });
    expect(r.detail).toMatch(/the network reports it paid \(hash [0-9a-f]{64}/);
    expect(await outbox(t, tx.transactionId)).toEqual([
      { type: "payment.created", status: "PENDING", late: undefined },
      { type: "payment.completed", status: "SUCCESS", late: undefined },
    ]);
    // Terminal now: a clear error, and no upstream call.
    const done = await refusal(t, tx.transactionId, key());
    expect(done.extensions?.code).toBe("BAD_USER_INPUT");
    expect(done.message).toMatch(/is SUCCESS: its outcome is recorded/);
  });

  it("paid after its expiry (moved clock): a late SUCCESS, payment.completed with late: true in the outbox", async () => {
    const tx = await gen(60_000);
    t.clock.advance(61_000);
    expect(await status(tx.data.md5)).toBe("EXPIRED");
    // No late watch runs here: without a recheck the payment would stay unseen.
    expect((await pay(tx.data.md5)).status).toBe(200);
    const r = await rechecked(t, tx.transactionId, key());
    expect(r).toMatchObject({
      outcome: "PAID",
      recorded: true,
      transaction: { status: "SUCCESS", latePayment: true },
    });
    expect(r.detail).toMatch(/recorded as a late payment/);
    expect(await outbox(t, tx.transactionId)).toEqual([
      { type: "payment.created", status: "PENDING", late: undefined },
      { type: "payment.expired", status: "EXPIRED", late: undefined },
      { type: "payment.completed", status: "SUCCESS", late: true },
    ]);
  });

  it("another key's transaction is NOT_FOUND, exactly as a missing one; the admin token and the CLI recheck any", async () => {
    const tx = await gen();
    const foreign = await refusal(t, tx.transactionId, AUTH.qr(other.keys.qr));
    const missing = await refusal(t, "txn_doesnotexist0000000000", AUTH.qr(other.keys.qr));
    expect(foreign).toEqual(missing);
    expect(foreign.extensions?.code).toBe("NOT_FOUND");
    // The same merchant's key of another area did not create it either.
    expect((await refusal(t, tx.transactionId, AUTH.gateway(tenant.keys.gateway))).extensions?.code).toBe("NOT_FOUND");
    // Nothing was asked or recorded for them.
    expect((await outbox(t, tx.transactionId)).map((e) => e.type)).toEqual(["payment.created"]);

    expect(await rechecked(t, tx.transactionId, null)).toMatchObject({ outcome: "NOT_PAID" });
    await pay(tx.data.md5);
    t.clock.advance(10_000);
    const run = await cli(t, ["recheck", "--id", tx.transactionId]);
    expect(run).toMatchObject({ code: 0, err: "" });
    expect(run.out.split("\n")).toHaveLength(1);
    expect(run.out).toMatch(
      new RegExp(`^${tx.transactionId} \\(qr\\): PAID, recorded, now SUCCESS: the network reports it paid`),
    );
    const bad = await cli(t, ["recheck"]);
    expect(bad).toMatchObject({ code: 2, err: "recheck needs --id TRANSACTION_ID" });
  });

  it("outside its window (30 days after its expiry): an error naming the window's end, and nothing asked", async () => {
    const tx = await gen(60_000);
    const end = new Date(Date.parse(tx.expiredAt) + 30 * 24 * 3600_000).toISOString();
    t.clock.advance(30 * 24 * 3600_000 + 61_000);
    const r = await recheck(t, tx.transactionId, key());
    expect(r.error?.extensions).toMatchObject({ code: "BAD_USER_INPUT", windowEndsAt: end });
    expect(r.error?.message).toBe(
      `Transaction ${tx.transactionId} is outside its recheck window: it ended at ${end} ` +
        "(a generic QR payment is rechecked until 30 days after its expiry)",
    );
    expect((await outbox(t, tx.transactionId)).map((e) => e.type)).toEqual(["payment.created", "payment.expired"]);
  });
});
