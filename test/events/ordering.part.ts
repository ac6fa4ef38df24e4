import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { WEBHOOK_OUTBOX } from "../../src/webhooks/index.js";
import { systemClock } from "../../src/clock.js";
import { Db, type Query } from "../../src/db/sql.js";
import { EventBus } from "../../src/events/event-bus.js";
import { TransactionStore } from "../../src/transactions/transition.js";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { subscribe } from "../support/ws.js";
import { waitFor } from "../support/wait.js";

type Update = { transactionUpdates: { id: string; transaction: { transactionId: string } } };

/** A committer that stops just before COMMIT until released: its outbox row already holds its sequence number. */
class HeldDb extends Db {
  reached!: Promise<void>;
  release!: () => void;
  override async transaction<T>(fn: (q: Query) => Promise<T>): Promise<T> {
    let reached!: () => void;
    this.reached = new Promise<void>((r) => (reached = r));
    const released = new Promise<void>((r) => (this.release = r));
    return super.transaction(async (q) => {
      const result = await fn(q);
      reached();
      await released;
      return result;
    });
  }
}

describe("event order across committers", () => {
  let t: TestApp;
  let tenant: Tenant;
  const gen = async () =>
    (
      (await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 120000 }, AUTH.qr(tenant.keys.qr)))
        .body as { transactionId: string }
    ).transactionId;
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  /** A key's stream, live once it has seen an event (transitions of `ping` are sent until one arrives). */
  const liveKeyStream = async (ping: string) => {
    const { sub } = subscribe<Update>(
      t.url,
      AUTH.qr(tenant.keys.qr),
      `subscription { transactionUpdates(area: qr) { id transaction { transactionId } } }`,
    );
    await waitFor(
      async () => {
        await t.app.core.store.transition({ id: ping, event: "transaction.updated", upstream: { ping: Date.now() } });
        return sub.events.length > 0;
      },
      10_000,
      300,
    );
    return sub;
  };
  const received = (sub: Awaited<ReturnType<typeof liveKeyStream>>, eventId: string | undefined) =>
    sub.events.some((e) => e.transactionUpdates.id === eventId);

  /**
   * Another process (its own store and bus: this instance learns of it only through NOTIFY) takes the lower
   * sequence number for x and is slow to commit; meanwhile y commits here with a higher one and reaches the
   * stream. `whileHeld` runs before x commits. Returns x's event, numbered below y's.
   */
  const commitOutOfOrder = async (
    x: string,
    y: string,
    sub: Awaited<ReturnType<typeof liveKeyStream>>,
    whileHeld = async () => {},
  ) => {
    const held = new HeldDb(t.app.core.orm);
    const slow = new TransactionStore(held, new EventBus(), systemClock, WEBHOOK_OUTBOX).transition({
      id: x,
      event: "transaction.updated",
      upstream: { slow: true },
    });
    await held.reached;
    const fast = await t.app.core.store.transition({ id: y, event: "transaction.updated", upstream: { fast: true } });
    await waitFor(async () => received(sub, fast.event?.id), 5000, 20);
    await whileHeld();
    held.release();
    const late = await slow;
    expect(BigInt(late.event?.seq ?? 0)).toBeLessThan(BigInt(fast.event?.seq ?? 0));
    return late;
  };

  it("a key's stream receives an event whose commit lands after a later-numbered one (two committers)", async () => {
    const [x, y, z] = [await gen(), await gen(), await gen()];
    const sub = await liveKeyStream(z);
    const late = await commitOutOfOrder(x, y, sub);
    await waitFor(async () => received(sub, late.event?.id), 5000, 20);
    sub.close();
    const order = sub.events.map((e) => e.transactionUpdates.transaction.transactionId).filter((id) => id !== z);
    expect(order).toEqual([y, x]);
  });

  it("an event committed out of order while the listener was disconnected still reaches the stream after it reconnects", async () => {
    const [x, y] = [await gen(), await gen()];
    const sub = await liveKeyStream(y);
    // The instance's LISTEN connection drops; x commits (and notifies) while nobody listens.
    const listeners = `select pid from pg_stat_activity where datname = current_database() and query ilike 'listen %' and pid <> pg_backend_pid()`;
    const late = await commitOutOfOrder(x, y, sub, async () => {
      await t.app.core.db.query(`select pg_terminate_backend(pid) from (${listeners}) l`);
      await waitFor(async () => (await t.app.core.db.query(listeners)).length === 0, 5000, 20);
    });
    // The reconnect's catch-up starts a little before the last number seen, so the lower-numbered x is found.
    await waitFor(async () => received(sub, late.event?.id), 10_000, 50);
    sub.close();
  });
});
