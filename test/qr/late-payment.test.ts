import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { startTestApp, createTenant, moreJobRuns, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { waitFor } from "../support/wait.js";

// Paid before expiry is paid (issue 20, docs/decisions/0107-late-payments.md): a generic QR transaction
// becomes EXPIRED only after a check at or after its expiry answers "not paid", or once the grace is over; a
// payment seen afterwards is still recorded, as payment.completed with late: true, for reconciliation.

interface QrTx {
  transactionId: string;
  status: string;
  data: { qr: string; md5: string };
}

interface TxView {
  status: string;
  latePayment: boolean;
  events: { type: string; transaction: { status: string; late: boolean | null; payment: unknown } }[];
}

const GRACE_MS = 30_000;

describe("generic QR: paid before expiry is paid", () => {
  let t: TestApp;
  let tenant: Tenant;
  const gen = (expiredAfter: number) =>
    post(`${t.url}/qr/generate`, { amount: 2.5, currency: 840, expiredAfter }, AUTH.qr(tenant.keys.qr)).then(
      (r) => r.body as QrTx,
    );
  const status = async (md5: string) =>
    ((await post(`${t.url}/qr/check`, { md5 }, AUTH.qr(tenant.keys.qr))).body as QrTx).status;
  const fault = (mode: string) => post(`${t.url}/sim/network/fault`, { mode });
  const view = async (id: string): Promise<TxView> => {
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTH.qr(tenant.keys.qr) },
      body: JSON.stringify({
        query: `query($id: ID!) { transaction(id: $id) { status latePayment
          events { type transaction { status late payment } } } }`,
        variables: { id },
      }),
    });
    const json = (await res.json()) as { data: { transaction: TxView }; errors?: unknown };
    expect(json.errors).toBeUndefined();
    return json.data.transaction;
  };
  /** Waits until the monitor has tried (and failed) at least `n` more checks of the transaction. */
  const failedChecks = async (id: string, n: number) => {
    const read = async () =>
      Number(
        (
          await t.app.core.db.query<{ f: number }>(`select check_failures as f from "transaction" where id = ?`, [id])
        )[0].f,
      );
    const start = await read();
    await waitFor(async () => (await read()) >= start + n, 20_000);
  };

  beforeAll(async () => {
    t = await startTestApp({
      QR_EXPIRY_GRACE_MS: String(GRACE_MS),
      QR_LATE_WATCH_MS: "3600000",
      QR_LATE_CHECK_INTERVAL_MS: "500",
    });
    tenant = await createTenant(t);
  });
  afterEach(async () => {
    await fault("ok");
  });
  afterAll(async () => t?.stop());

  it("an outage over the expiry: paid before it, seen after it → SUCCESS (never EXPIRED), not late", async () => {
    const tx = await gen(60_000);
    await fault("error500");
    expect((await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5 })).status).toBe(200);
    t.clock.advance(61_000);
    // Checks after the expiry fail: no answer, so no verdict — it stays PENDING (reads included).
    await failedChecks(tx.transactionId, 2);
    expect(await status(tx.data.md5)).toBe("PENDING");
    await fault("ok");
    await waitFor(async () => (await status(tx.data.md5)) === "SUCCESS", 20_000);
    const v = await view(tx.transactionId);
    expect(v.latePayment).toBe(false);
    expect(v.events.map((e) => e.type)).toEqual(["payment.created", "payment.completed"]);
    expect(v.events[1].transaction.late).toBeNull();
  });

  it("a slow acknowledgement: the check at expiry says not paid → EXPIRED; the payment seen later → late payment.completed", async () => {
    const tx = await gen(60_000);
    // Sent now (before the expiry), recorded by the network two minutes later.
    await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5, acknowledgeAfterMs: 120_000 });
    t.clock.advance(61_000);
    await waitFor(async () => (await status(tx.data.md5)) === "EXPIRED", 20_000);
    t.clock.advance(60_000);
    await waitFor(async () => (await status(tx.data.md5)) === "SUCCESS", 20_000);
    const v = await view(tx.transactionId);
    expect(v.latePayment).toBe(true);
    expect(v.events.map((e) => [e.type, e.transaction.status, e.transaction.late])).toEqual([
      ["payment.created", "PENDING", null],
      ["payment.expired", "EXPIRED", null],
      ["payment.completed", "SUCCESS", true],
    ]);
    expect(v.events[2].transaction.payment).toMatchObject({ amount: "2.50", currency: "USD" });
    // Listed for reconciliation.
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTH.qr(tenant.keys.qr) },
      body: JSON.stringify({
        query: `{ transactions(first: 50, filter: { latePayment: true }) { edges { node { id latePayment } } } }`,
      }),
    });
    const list = (await res.json()) as { data: { transactions: { edges: { node: { id: string } }[] } } };
    expect(list.data.transactions.edges.map((e) => e.node.id)).toContain(tx.transactionId);
  });

  it("an outage longer than the grace → EXPIRED anyway; the payment seen after recovery → late SUCCESS", async () => {
    const tx = await gen(60_000);
    await fault("error500");
    await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5 });
    t.clock.advance(61_000);
    await failedChecks(tx.transactionId, 1);
    expect(await status(tx.data.md5)).toBe("PENDING");
    t.clock.advance(GRACE_MS);
    expect(await status(tx.data.md5)).toBe("EXPIRED");
    await fault("ok");
    await waitFor(async () => (await status(tx.data.md5)) === "SUCCESS", 20_000);
    const v = await view(tx.transactionId);
    expect(v.latePayment).toBe(true);
    expect(v.events.map((e) => e.type)).toEqual(["payment.created", "payment.expired", "payment.completed"]);
  });

  it("sent after the expiry (createdDateMs > expiredAt), seen during the grace → SUCCESS flagged late", async () => {
    const tx = await gen(60_000);
    await fault("error500");
    t.clock.advance(62_000);
    await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5 });
    await fault("ok");
    await waitFor(async () => (await status(tx.data.md5)) === "SUCCESS", 20_000);
    const v = await view(tx.transactionId);
    expect(v.latePayment).toBe(true);
    expect(v.events.at(-1)?.transaction.late).toBe(true);
  });

  it("unpaid → EXPIRED after the check at its expiry, and a failure is never turned into a late payment", async () => {
    const tx = await gen(60_000);
    t.clock.advance(61_000);
    await waitFor(async () => (await status(tx.data.md5)) === "EXPIRED", 20_000);
    await post(`${t.url}/sim/network/fail`, { md5: tx.data.md5 });
    t.clock.advance(2_000);
    // A few late-watch rounds (each monitor run ends with one; the transaction is due every 500 ms).
    await moreJobRuns(t, "qr.monitor", 3);
    expect(await status(tx.data.md5)).toBe("EXPIRED");
    expect((await view(tx.transactionId)).events.map((e) => e.type)).toEqual(["payment.created", "payment.expired"]);
  });
});
