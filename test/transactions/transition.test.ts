import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import pg from "pg";
import { startTestApp, createTenant, type TestApp, type Tenant } from "../support/app.js";
import { newId } from "../../src/ids.js";
import { snapshot } from "../../src/transactions/record.js";
import { waitFor } from "../support/wait.js";

describe("transition(): the one way a status changes", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  const create = async (status: "PENDING" | "CHECKOUT" = "PENDING", expiresInMs = 60_000) =>
    (
      await t.app.core.store.create({
        id: newId("txn"),
        area: "qr",
        merchantRef: tenant.merchantId,
        apiKeyRef: tenant.keyIds.qr,
        status,
        amount: "1.50",
        currency: "USD",
        upstreamRef: newId("md5"),
        meta: { order: "A-1" },
        expiresAt: new Date(t.clock.now().getTime() + expiresInMs),
      })
    ).tx;
  const events = async (txId: string) =>
    t.app.core.db.query<{ type: string; status: string }>(
      `select type, status from transaction_event where transaction_ref = ? order by seq`,
      [txId],
    );

  it("two concurrent transitions of one transaction: exactly one wins and one event is written", async () => {
    const tx = await create();
    const results = await Promise.all([
      t.app.core.store.transition({ id: tx.id, to: "SUCCESS", event: "payment.completed" }),
      t.app.core.store.transition({ id: tx.id, to: "FAILED", event: "payment.failed" }),
      t.app.core.store.transition({ id: tx.id, to: "EXPIRED", event: "payment.expired" }),
    ]);
    expect(results.filter((r) => r.won)).toHaveLength(1);
    const winner = results.find((r) => r.won)!;
    for (const r of results) expect(r.tx.status).toBe(winner.tx.status);
    const ev = await events(tx.id);
    expect(ev.map((e) => e.type)).toEqual(["payment.created", winner.event!.type]);
  });

  it("transitions committed together: each wins or fails on its own (ones with unstorable text fail alone)", async () => {
    const txs = await Promise.all(Array.from({ length: 12 }, () => create()));
    const outcomes = await Promise.allSettled(
      txs.map((tx, i) =>
        t.app.core.store.transition({
          id: tx.id,
          to: "SUCCESS",
          event: "payment.completed",
          upstream: { payment: { hash: i === 5 ? "bad\u0000hash" : `h${i}` } },
          ...(i === 7 ? { upstreamRef: "client\u0000id" } : {}),
        }),
      ),
    );
    const bad = outcomes[5];
    expect(bad.status).toBe("rejected");
    // PostgreSQL refuses a NUL escape in jsonb (22P05), the service a NUL in text before sending it: the group
    // each was in is tried again item by item.
    expect(((bad as PromiseRejectedResult).reason as { code?: string }).code).toBe("22P05");
    expect(outcomes[7].status).toBe("rejected");
    expect(((outcomes[7] as PromiseRejectedResult).reason as { code?: string }).code).toBe("BAD_USER_INPUT");
    for (const [i, o] of outcomes.entries()) {
      if (i === 5 || i === 7) continue;
      expect(o.status).toBe("fulfilled");
      expect((o as PromiseFulfilledResult<{ won: boolean }>).value.won).toBe(true);
      expect((await events(txs[i].id)).map((e) => e.type)).toEqual(["payment.created", "payment.completed"]);
    }
    // Nothing of the failed ones was written: still pending, no event beyond their creation.
    for (const i of [5, 7]) {
      expect((await t.app.core.store.get(txs[i].id))?.status).toBe("PENDING");
      expect((await events(txs[i].id)).map((e) => e.type)).toEqual(["payment.created"]);
    }
  });

  it("one transaction changed twice in one group: both events, in order, the second's snapshot after the first", async () => {
    // Two transitions already in flight fill both lanes, so the next ones wait and commit as one group.
    const [a, b, x] = await Promise.all([create(), create(), create()]);
    const results = await Promise.all([
      t.app.core.store.transition({ id: a.id, to: "SUCCESS", event: "payment.completed" }),
      t.app.core.store.transition({ id: b.id, to: "SUCCESS", event: "payment.completed" }),
      t.app.core.store.transition({ id: x.id, event: "transaction.updated", upstream: { scanned: true } }),
      t.app.core.store.transition({ id: x.id, to: "SUCCESS", event: "payment.completed", upstream: { paid: 1 } }),
      t.app.core.store.transition({ id: x.id, to: "FAILED", event: "payment.failed" }),
    ]);
    expect(results.map((r) => r.won)).toEqual([true, true, true, true, false]);
    const rows = await t.app.core.db.query<{ type: string; payload: { transaction: { status: string } } }>(
      `select type, payload from transaction_event where transaction_ref = ? order by seq`,
      [x.id],
    );
    expect(rows.map((r) => r.type)).toEqual(["payment.created", "transaction.updated", "payment.completed"]);
    expect(rows.map((r) => r.payload.transaction.status)).toEqual(["PENDING", "PENDING", "SUCCESS"]);
    const stored = await t.app.core.store.get(x.id);
    expect(stored).toMatchObject({ status: "SUCCESS", upstream: { scanned: true, paid: 1 }, version: 3 });
    expect(results[3].event?.payload).toEqual({
      transaction: snapshot(stored!, t.app.core.store.views),
      meta: { order: "A-1" },
    });
  });

  it("a terminal transaction never changes again", async () => {
    const tx = await create();
    await t.app.core.store.transition({
      id: tx.id,
      to: "SUCCESS",
      event: "payment.completed",
      upstream: { payment: { hash: "abc" } },
    });
    const again = await t.app.core.store.transition({ id: tx.id, to: "EXPIRED", event: "payment.expired" });
    const touch = await t.app.core.store.transition({ id: tx.id, event: "transaction.updated", upstream: { note: 1 } });
    const scanned = await t.app.core.store.transition({
      id: tx.id,
      event: "payment.scanned",
      upstream: { receiptUrl: "https://x" },
    });
    expect(again.won).toBe(false);
    expect(touch.won).toBe(false);
    expect(scanned.won).toBe(false);
    const now = await t.app.core.store.get(tx.id);
    expect(now?.status).toBe("SUCCESS");
    expect(now?.upstream.receiptUrl).toBeUndefined();
    expect(now?.upstream.note).toBeUndefined();
    expect((await events(tx.id)).map((e) => e.type)).toEqual(["payment.created", "payment.completed"]);
  });

  /**
   * Runs `body` while every webhook delivery-row insert raises (a trigger), with an endpoint of the key so the
   * outbox statement writes one: a real failure half-way through the statement that records an event.
   */
  const whileDeliveriesFail = async (endpointId: string, body: () => Promise<void>) => {
    await t.app.core.db.query(
      `insert into webhook_endpoint (id, api_key_ref, url, events, secret_enc, enabled, created_at)
       values (?, ?, 'http://127.0.0.1:9/x', '[]', 'v1.x', true, now())`,
      [endpointId, tenant.keyIds.qr],
    );
    await t.app.core.db.query(
      `create or replace function fail_delivery() returns trigger as $$ begin raise exception 'boom'; end $$ language plpgsql`,
    );
    await t.app.core.db.query(
      `create trigger fail_delivery before insert on webhook_delivery for each row execute function fail_delivery()`,
    );
    try {
      await body();
    } finally {
      await t.app.core.db.query(`drop trigger fail_delivery on webhook_delivery`);
      await t.app.core.db.query(`delete from webhook_endpoint where id = ?`, [endpointId]);
    }
  };

  it("a failure inside the database transaction rolls back the status and leaves no event", async () => {
    const tx = await create();
    // A real failure half-way through: the delivery-row insert raises after the update and the event insert.
    await whileDeliveriesFail("whe_guard", async () => {
      await expect(
        t.app.core.store.transition({ id: tx.id, to: "SUCCESS", event: "payment.completed" }),
      ).rejects.toThrow();
    });
    expect((await t.app.core.store.get(tx.id))?.status).toBe("PENDING");
    expect((await events(tx.id)).map((e) => e.type)).toEqual(["payment.created"]);
  });

  it("creation is all or nothing too: a failing delivery-row insert leaves no transaction and no event", async () => {
    const id = newId("txn");
    await whileDeliveriesFail("whe_guard2", async () => {
      await expect(
        t.app.core.store.create({
          id,
          area: "qr",
          merchantRef: tenant.merchantId,
          apiKeyRef: tenant.keyIds.qr,
          status: "PENDING",
          amount: "1.50",
          currency: "USD",
          upstreamRef: newId("md5"),
          expiresAt: new Date(t.clock.now().getTime() + 60_000),
        }),
      ).rejects.toThrow();
    });
    expect(await t.app.core.store.get(id)).toBeNull();
    expect(await events(id)).toEqual([]);
  });

  it("creation writes the event, one delivery row per matching endpoint and the notify in the same statement", async () => {
    await t.app.core.db.query(
      `insert into webhook_endpoint (id, api_key_ref, url, events, secret_enc, enabled, created_at) values
      ('whe_all', ?, 'http://127.0.0.1:9/a', '[]', 'v1.x', false, now()), ('whe_created', ?, 'http://127.0.0.1:9/b', '["payment.created"]', 'v1.x', true, now()),
      ('whe_paid', ?, 'http://127.0.0.1:9/c', '["payment.completed"]', 'v1.x', true, now())`,
      [tenant.keyIds.qr, tenant.keyIds.qr, tenant.keyIds.qr],
    );
    const listener = new pg.Client({ connectionString: t.dbUrl });
    await listener.connect();
    const notified: string[] = [];
    listener.on("notification", (m) => notified.push(...(m.payload ?? "").split(",")));
    await listener.query(`listen pqr_events`);
    try {
      const { tx, event } = await t.app.core.store.create({
        id: newId("txn"),
        area: "qr",
        merchantRef: tenant.merchantId,
        apiKeyRef: tenant.keyIds.qr,
        status: "PENDING",
        amount: "1.50",
        currency: "USD",
        upstreamRef: newId("md5"),
        expiresAt: new Date(t.clock.now().getTime() + 60_000),
      });
      const deliveries = await t.app.core.db.query<{ endpoint_ref: string }>(
        `select endpoint_ref from webhook_delivery where event_ref = ?`,
        [event.id],
      );
      expect(deliveries.map((d) => d.endpoint_ref)).toEqual(["whe_created"]); // the disabled and the filtered-out endpoints get none
      expect(event.deliveries).toBe(1);
      expect(event.transactionId).toBe(tx.id);
      await waitFor(async () => notified.includes(event.id));
    } finally {
      await listener.end();
      await t.app.core.db.query(
        `delete from webhook_delivery where endpoint_ref in ('whe_all','whe_created','whe_paid')`,
      );
      await t.app.core.db.query(`delete from webhook_endpoint where id in ('whe_all','whe_created','whe_paid')`);
    }
  });

  it("concurrent creates share statements; one the database refuses fails alone and leaves nothing behind", async () => {
    const listener = new pg.Client({ connectionString: t.dbUrl });
    await listener.connect();
    const payloads: string[] = [];
    listener.on("notification", (m) => payloads.push(m.payload ?? ""));
    await listener.query(`listen pqr_events`);
    try {
      const input = (i: number) => ({
        id: newId("txn"),
        merchantRef: tenant.merchantId,
        apiKeyRef: tenant.keyIds.qr,
        status: "PENDING" as const,
        amount: `${i + 1}.25`,
        currency: "USD" as const,
        expiresAt: new Date(t.clock.now().getTime() + 60_000),
        area: "qr" as const,
        upstreamRef: newId("md5"),
      });
      const checkCreated = async (created: Awaited<ReturnType<typeof t.app.core.store.create>>[]) => {
        for (const { tx, event } of created) {
          expect(await t.app.core.store.get(tx.id)).toEqual(tx);
          expect(await events(tx.id)).toEqual([{ type: "payment.created", status: "PENDING" }]);
          expect(event.transactionId).toBe(tx.id);
        }
        // Every committed event is notified (several ids to a notification when they shared a statement).
        await waitFor(async () => created.every(({ event }) => payloads.some((p) => p.split(",").includes(event.id))));
      };

      const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => t.app.core.store.create(input(i))));
      await checkCreated(burst);
      expect(payloads.some((p) => p.includes(","))).toBe(true);

      // Two gateway orders with one order id among 40 creates: the unique index refuses whichever is written second.
      const orderId = newId("o").slice(0, 20);
      const inputs = Array.from({ length: 40 }, (_, i) =>
        i === 7 || i === 23 ? { ...input(i), area: "gateway" as const, upstreamRef: orderId } : input(i),
      );
      const results = await Promise.allSettled(inputs.map((x) => t.app.core.store.create(x)));
      const failed = results.flatMap((r, i) =>
        r.status === "rejected" ? [{ i, code: (r.reason as { code?: string }).code }] : [],
      );
      expect(failed).toHaveLength(1);
      expect([7, 23]).toContain(failed[0].i);
      expect(failed[0].code).toBe("23505");
      await checkCreated(results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : [])));
      const loser = inputs[failed[0].i].id;
      expect(await t.app.core.store.get(loser)).toBeNull();
      expect(await events(loser)).toEqual([]);
    } finally {
      await listener.end();
    }
  });

  it("the payment.created payload is the snapshot of the row as it reads back (every area's columns)", async () => {
    const inputs = [
      {
        area: "qr" as const,
        amount: "1.5",
        currency: "USD" as const,
        upstreamRef: newId("md5"),
        meta: { order: "A-1", nested: { z: 1, a: [1, 2] } },
      },
      {
        area: "gateway" as const,
        status: "CHECKOUT" as const,
        amount: "5000",
        currency: "KHR" as const,
        upstreamRef: newId("o").slice(0, 20),
        upstream: { gatewayStatus: { code: "0", message: "Success." }, deeplink: "x" },
      },
      {
        area: "gateway_link" as const,
        amount: "0.05",
        currency: "USD" as const,
        upstreamRef: "cl_1",
        qr: "000201",
        nextCheckAt: t.clock.now(),
      },
    ];
    for (const input of inputs) {
      const { tx, event } = await t.app.core.store.create({
        id: newId("txn"),
        merchantRef: tenant.merchantId,
        apiKeyRef: tenant.keyIds.qr,
        status: "PENDING",
        expiresAt: new Date(t.clock.now().getTime() + 60_000),
        ...input,
      });
      const back = (await t.app.core.store.get(tx.id))!;
      expect(tx).toEqual(back);
      expect(event.payload).toEqual({ transaction: snapshot(back, t.app.core.store.views), meta: back.meta });
      const [stored] = await t.app.core.db.query<{ payload: unknown }>(
        `select payload from transaction_event where id = ?`,
        [event.id],
      );
      expect(stored.payload).toEqual(event.payload);
    }
  });

  it("refuses an amount the numeric column would round", async () => {
    await expect(
      t.app.core.store.create({
        id: newId("txn"),
        area: "qr",
        merchantRef: tenant.merchantId,
        apiKeyRef: tenant.keyIds.qr,
        status: "PENDING",
        amount: "1.505",
        currency: "USD",
        upstreamRef: newId("md5"),
        expiresAt: new Date(t.clock.now().getTime() + 60_000),
      }),
    ).rejects.toThrow(/at most 2 decimals/);
  });

  it("a read past expiry performs the EXPIRED transition itself, once", async () => {
    const tx = await create("PENDING", 1000);
    t.clock.advance(1500 + t.app.core.store.graceMs("qr"));
    const [a, b] = await Promise.all([
      t.app.core.store.findForKey(tenant.keyIds.qr, { id: tx.id, area: "qr" }),
      t.app.core.store.findForKey(tenant.keyIds.qr, { upstreamRef: tx.upstreamRef!, area: "qr" }),
    ]);
    expect(a?.status).toBe("EXPIRED");
    expect(b?.status).toBe("EXPIRED");
    expect((await events(tx.id)).map((e) => e.type)).toEqual(["payment.created", "payment.expired"]);
  });

  it("another key's transaction reads as missing", async () => {
    const tx = await create();
    expect(await t.app.core.store.findForKey(tenant.keyIds.gateway, { id: tx.id, area: "qr" })).toBeNull();
    expect(await t.app.core.store.findForKey("key_nobody", { upstreamRef: tx.upstreamRef!, area: "qr" })).toBeNull();
  });

  it("stores money exactly (numeric), never as a float", async () => {
    const tx = await create();
    const [row] = await t.app.core.db.query<{ t: string }>(
      `select pg_typeof(amount)::text as t from "transaction" where id = ?`,
      [tx.id],
    );
    expect(row.t).toBe("numeric");
    expect(tx.amount).toBe("1.50");
  });
});
