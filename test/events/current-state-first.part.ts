import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { waitFor } from "../support/wait.js";
import { subscribe } from "../support/ws.js";

const ONE = `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id type transaction { transactionId status } } }`;
type One = { transactionUpdated: { id: string; type: string; transaction: { transactionId: string; status: string } } };

/**
 * A checkout page that opens its subscription on a pending payment learns where the payment stands at once, not
 * only at its next change: the current state comes first, then the changes, each once and in order.
 */
describe("a subscription on one transaction sends its current state first", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({ QR_MONITOR_INTERVAL_MS: "300" });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  const generate = async () =>
    (await post(`${t.url}/qr/generate`, { amount: 2, currency: 840, expiredAfter: 120000 }, AUTH.qr(tenant.keys.qr)))
      .body as { transactionId: string; data: { md5: string }; clientToken: string };

  it("a pending payment: PENDING first (the key and a client token alike), then SUCCESS, then the stream completes", async () => {
    const g = await generate();
    const byKey = subscribe<One>(t.url, AUTH.qr(tenant.keys.qr), ONE, { id: g.transactionId }).sub;
    const byToken = subscribe<One>(t.url, { clientToken: g.clientToken }, ONE, { id: g.transactionId }).sub;
    try {
      for (const sub of [byKey, byToken]) {
        const first = await waitFor(async () => sub.events[0], 10_000, 20);
        expect(first.transactionUpdated.transaction).toEqual({ transactionId: g.transactionId, status: "PENDING" });
      }
      // Nothing changed meanwhile: the current state is all either has.
      const [{ count }] = await t.app.core.db.query<{ count: string }>(
        `select count(*)::text as count from transaction_event where transaction_ref = ?`,
        [g.transactionId],
      );
      expect(byKey.events).toHaveLength(Number(count));
      await post(`${t.url}/sim/network/pay`, { md5: g.data.md5 });
      await Promise.all([byKey.done, byToken.done]);
      for (const sub of [byKey, byToken]) {
        expect(sub.events.map((e) => e.transactionUpdated.transaction.status)).toEqual(["PENDING", "SUCCESS"]);
        expect(new Set(sub.events.map((e) => e.transactionUpdated.id)).size).toBe(2);
      }
    } finally {
      byKey.close();
      byToken.close();
    }
  });

  it("a payment finished before the subscription: its final state only, then the stream completes", async () => {
    const g = await generate();
    await post(`${t.url}/sim/network/pay`, { md5: g.data.md5 });
    await waitFor(async () => {
      const [row] = await t.app.core.db.query<{ status: string }>(`select status from "transaction" where id = ?`, [
        g.transactionId,
      ]);
      return row?.status === "SUCCESS" ? true : undefined;
    }, 20_000);
    const { sub } = subscribe<One>(t.url, AUTH.qr(tenant.keys.qr), ONE, { id: g.transactionId });
    await sub.done;
    // Finished before the subscription: its final state only, then complete (never PENDING after SUCCESS).
    expect(sub.events.map((e) => e.transactionUpdated.transaction.status)).toEqual(["SUCCESS"]);
  });
});
