import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import { subscribe } from "../support/ws.js";
import { waitFor } from "../support/wait.js";
import { keepOutput, withOutput } from "../support/child-output.js";
import { eventsModule } from "../../src/events/index.js";
import { SubscriptionsResolver } from "../../src/events/subscriptions.resolver.js";

const ONE = `subscription($id: ID!, $last: ID) { transactionUpdated(transactionId: $id, lastEventId: $last) { id type transaction { transactionId status } meta } }`;
type One = {
  transactionUpdated: {
    id: string;
    type: string;
    transaction: { transactionId: string; status: string };
    meta: Record<string, unknown>;
  };
};

describe("GraphQL subscriptions", () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  const gen = async () =>
    (
      await post(
        `${t.url}/qr/generate`,
        { amount: 1, currency: 840, expiredAfter: 120000, meta: { k: "v" } },
        AUTH.qr(tenant.keys.qr),
      )
    ).body as { transactionId: string; data: { md5: string }; clientToken: string };
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    tenant = await createTenant(t);
    other = await createTenant(t, { name: "Other" });
  });
  afterAll(async () => t?.stop());
  /** Live streams the service follows the bus for now (opened, not yet closed). */
  const liveStreams = () =>
    t.app.module(eventsModule).resolvers!.find((r) => r instanceof SubscriptionsResolver)!.live.listening;

  it("a subscriber on process A receives SUCCESS for a payment settled by a worker in process B within 1 s", async () => {
    // Process B: a real worker process (the built service) on the same database.
    const dataDir = mkdtempSync(join(tmpdir(), "pqr-worker-"));
    const worker: ChildProcess = spawn(process.execPath, ["dist/src/main.js", "worker"], {
      env: {
        ...process.env,
        NODE_OPTIONS: "",
        DATABASE_URL: t.dbUrl,
        PORT: "0",
        LOG_LEVEL: "warn",
        DATA_DIR: dataDir,
        ADMIN_TOKEN,
        SECRET_KEY: "test-secret-key-0123456789-0123456789",
        SIMULATORS: "true",
        DEMO: "false",
        NETWORK_API_URL: `${t.url}/sim/network-api`,
        NETWORK_API_TOKEN: "sim-network-token",
        QR_MONITOR_INTERVAL_MS: "500",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = keepOutput(worker);
    try {
      await withOutput(output, async () => {
        const g = await gen();
        const { sub } = subscribe<One>(t.url, AUTH.qr(tenant.keys.qr), ONE, { id: g.transactionId });
        // Open once its current state has arrived (sent after the service follows the bus for it): the payment
        // below is then a live change, not the state a late subscription would find.
        await waitFor(() => sub.events.length > 0, 10_000, 20, "the subscription's current state");
        await post(`${t.url}/sim/network/pay`, { md5: g.data.md5 });
        // When the worker commits SUCCESS, A hears it through LISTEN/NOTIFY.
        const seen = await waitFor(
          async () => sub.events.find((e) => e.transactionUpdated.transaction.status === "SUCCESS"),
          20_000,
          20,
        );
        const [row] = await t.app.core.db.query<{ created_at: string }>(
          `select created_at from transaction_event where id = ?`,
          [seen.transactionUpdated.id],
        );
        const committed = Date.parse(row.created_at.replace(" ", "T").replace(/\+00$/, "Z"));
        expect(Date.now() - committed).toBeLessThan(1000);
        expect(seen.transactionUpdated.meta).toEqual({ k: "v" });
        await sub.done; // terminal → the subscription completes
      });
    } finally {
      worker.kill("SIGTERM");
      await new Promise((r) => worker.once("exit", r));
    }
  }, 60_000);

  it("a clientToken follows its own transaction and cannot subscribe to another", async () => {
    const x = await gen();
    const y = await gen();
    // The checkout view: no meta, no ids beyond the transaction's own (test/faults/input/live-surfaces.test.ts).
    const VIEW = `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id type transaction { transactionId status } } }`;
    const own = subscribe<One>(t.url, { clientToken: x.clientToken }, VIEW, { id: x.transactionId });
    const stolen = subscribe<One>(t.url, { clientToken: x.clientToken }, VIEW, { id: y.transactionId });
    await stolen.sub.done;
    expect(JSON.stringify(stolen.sub.error)).toMatch(/not found/i);
    expect(stolen.sub.events).toHaveLength(0);
    // Open: its current state has arrived.
    await waitFor(async () => own.sub.events.length > 0 || undefined, 10_000);
    await t.app.core.store.transition({ id: x.transactionId, to: "SUCCESS", event: "payment.completed" });
    await own.sub.done;
    // Its current state first (the subscription opened on a pending payment), then the change.
    expect(own.sub.events.map((e) => e.transactionUpdated.type)).toEqual(["payment.created", "payment.completed"]);
  });

  it("an invalid key is rejected at connection_init", async () => {
    const { sub } = subscribe<One>(t.url, { "x-api-key": "pqr_qr_nope", "x-auth-type": "api-key" }, ONE, {
      id: "txn_x",
    });
    await sub.done;
    expect(sub.error).toMatchObject({ code: 4403 });
  });

  it("another key's transaction is not found; an already terminal one sends its final state then completes", async () => {
    const g = await gen();
    const foreign = subscribe<One>(t.url, AUTH.qr(other.keys.qr), ONE, { id: g.transactionId });
    await foreign.sub.done;
    expect(JSON.stringify(foreign.sub.error)).toMatch(/not found/i);
    await t.app.core.store.transition({ id: g.transactionId, to: "FAILED", event: "payment.failed" });
    const late = subscribe<One>(t.url, AUTH.qr(tenant.keys.qr), ONE, { id: g.transactionId });
    await late.sub.done;
    expect(late.sub.events.map((e) => e.transactionUpdated.transaction.status)).toEqual(["FAILED"]);
  });

  it("a reconnecting client passes its last event id and receives what it missed", async () => {
    const g = await gen();
    const [created] = await t.app.core.db.query<{ id: string }>(
      `select id from transaction_event where transaction_ref = ? order by seq limit 1`,
      [g.transactionId],
    );
    await t.app.core.store.transition({ id: g.transactionId, event: "transaction.updated", upstream: { note: 1 } });
    await t.app.core.store.transition({ id: g.transactionId, to: "SUCCESS", event: "payment.completed" });
    const { sub } = subscribe<One>(t.url, AUTH.qr(tenant.keys.qr), ONE, { id: g.transactionId, last: created.id });
    await sub.done;
    expect(sub.events.map((e) => e.transactionUpdated.type)).toEqual(["transaction.updated", "payment.completed"]);
  });

  it("transactionUpdates streams only the caller's own transactions", async () => {
    // The earlier tests' streams have all ended: none is still closing while this one is counted.
    await waitFor(() => liveStreams() === 0, 10_000, 20, "the earlier streams closed");
    const mine = subscribe<{ transactionUpdates: { transaction: { transactionId: string } } }>(
      t.url,
      AUTH.qr(tenant.keys.qr),
      `subscription { transactionUpdates(area: qr) { transaction { transactionId } } }`,
    );
    // This stream sends nothing until a change: it is open once the service follows the bus for it.
    await waitFor(() => liveStreams() === 1, 10_000, 20, "the service following the stream");
    const g = await gen();
    await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 60000 }, AUTH.qr(other.keys.qr));
    // A later one of mine: once it is here, the other tenant's (published before it) would have been too.
    const g2 = await gen();
    await waitFor(async () => mine.sub.events.length >= 2, 10_000, 100, "my two transactions");
    mine.sub.close();
    expect(mine.sub.events.map((e) => e.transactionUpdates.transaction.transactionId)).toEqual([
      g.transactionId,
      g2.transactionId,
    ]);
  });
});
