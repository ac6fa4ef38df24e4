import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { createTestDatabase } from "../support/db.js";
import { startPgGate, type PgGate } from "../support/pg-gate.js";
import { subscribe } from "../support/ws.js";
import { waitFor } from "../support/wait.js";

const FOLLOW = `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id type transaction { status } } }`;

// Found by the lifecycle bench (one `serve` at 400/s on a busy machine): now and then a checkout subscriber never
// saw SUCCESS. Its subscription read the transaction (PENDING), the payment completed and was published, and only
// then did the subscription start listening: the event had gone by. The gate between the service and PostgreSQL
// holds the read's answer while the payment completes, which the busy machine did by chance.
describe("a subscription that opens while its payment completes", () => {
  let db: { url: string; drop(): Promise<void> };
  let gate: PgGate;
  let t: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    db = await createTestDatabase();
    gate = await startPgGate();
    t = await startTestApp({}, { dbUrl: gate.url(db.url) });
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t?.stop();
    await gate?.close();
    await db?.drop();
  });

  const generate = async () =>
    (await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 120000 }, AUTH.qr(tenant.keys.qr)))
      .body as { transactionId: string; clientToken: string };

  const cases = [
    {
      who: "a checkout page (client token)",
      params: (g: { clientToken: string }) => ({ clientToken: g.clientToken }),
      read: `select * from "transaction" where id = any(`,
    },
    {
      who: "a merchant's backend (API key)",
      params: () => AUTH.qr(tenant.keys.qr),
      // A prepared statement (decision 0243): its name is sent with every execution, its text only with the first.
      read: "pqr_one_for_key",
    },
  ];

  for (const c of cases)
    it(`${c.who} gets SUCCESS when the payment completes between the subscription's read and its start`, async () => {
      const g = await generate();
      const held = gate.holdAnswer(c.read);
      const { sub } = subscribe(t.url, c.params(g), FOLLOW, { id: g.transactionId });
      try {
        // The subscription's read of the transaction has run (PENDING); its answer is not back yet.
        const answer = await held;
        // Committed and published in this process before `transition` returns.
        await t.app.core.store.transition({ id: g.transactionId, to: "SUCCESS", event: "payment.completed" });
        answer.release();
        await waitFor(async () => sub.events.length > 0 || sub.error !== null, 10_000, 20);
        await sub.done;
      } finally {
        sub.close();
      }
      expect(sub.error).toBeNull();
      expect(sub.events.map((e) => [e.transactionUpdated.type, e.transactionUpdated.transaction.status])).toEqual([
        ["payment.completed", "SUCCESS"],
      ]);
    });
});
