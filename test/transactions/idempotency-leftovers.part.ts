import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { subscribe } from "../support/ws.js";
import { waitFor } from "../support/wait.js";

const keys = (t: TestApp, keyId: string) =>
  t.app.core.db
    .query<{ key: string }>(`select key from idempotency_key where api_key_ref = ? order by key`, [keyId])
    .then((r) => r.map((x) => x.key));

describe("what idempotency claims and resumed subscriptions leave behind (issue 16)", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  const gen = (key: string) =>
    post(
      `${t.url}/qr/generate`,
      { amount: 1, currency: 840, expiredAfter: 600_000 },
      { ...AUTH.qr(tenant.keys.qr), "idempotency-key": key },
    );

  it("claims are pruned once their 24 h window has passed, newer ones stay", async () => {
    expect((await gen("old-1")).status).toBe(200);
    expect(await keys(t, tenant.keyIds.qr)).toEqual(["old-1"]);
    t.clock.advance(25 * 3600_000);
    expect((await gen("new-1")).status).toBe(200);
    // The service's own idempotency.prune job (every 10 minutes, and once at start) may already have taken old-1
    // once the clock moved; pruning now must leave the newer claim either way.
    await t.app.core.idempotency.prune();
    expect(await keys(t, tenant.keyIds.qr)).toEqual(["new-1"]);
  });

  it("the create's own statement marks the claim with the transaction id", async () => {
    const g = (await gen("mark-1")).body as { transactionId: string };
    const [row] = await t.app.core.db.query<{ transaction_ref: string }>(
      `select transaction_ref from idempotency_key where api_key_ref = ? and key = 'mark-1'`,
      [tenant.keyIds.qr],
    );
    expect(row.transaction_ref).toBe(g.transactionId);
  });

  it("a subscription resumed with lastEventId gets an event that took a lower number but committed later", async () => {
    const store = t.app.core.store;
    const db = t.app.core.db;
    const g = (await gen("")).body as { transactionId: string };
    // A concurrent writer takes a sequence number now and commits only after the next event.
    const [{ seq }] = await db.query<{ seq: string }>(
      `select nextval(pg_get_serial_sequence('transaction_event', 'seq'))::text as seq`,
    );
    const later = await store.transition({ id: g.transactionId, event: "transaction.updated", upstream: { n: 1 } });
    // The client saw `later` and disconnected; now the slower writer's event commits with its lower number.
    await db.query(
      `insert into transaction_event (seq, id, transaction_ref, api_key_ref, area, type, status, payload, created_at)
       select ?::bigint, 'evt_late_' || md5(random()::text), transaction_ref, api_key_ref, area, 'transaction.updated',
         status, payload, created_at from transaction_event where id = ?`,
      [seq, later.event!.id],
    );
    const { sub } = subscribe<{ transactionUpdates: { id: string } }>(
      t.url,
      AUTH.qr(tenant.keys.qr),
      `subscription($last: ID) { transactionUpdates(lastEventId: $last) { id } }`,
      { last: later.event!.id },
    );
    await waitFor(async () => sub.events.some((e) => e.transactionUpdates.id.startsWith("evt_late_")), 5000).catch(
      () => undefined,
    );
    sub.close();
    expect(sub.error).toBeNull();
    expect(sub.events.map((e) => e.transactionUpdates.id).filter((id) => id.startsWith("evt_late_"))).toHaveLength(1);
    expect(sub.events.map((e) => e.transactionUpdates.id)).not.toContain(later.event!.id);
  });
});
