import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import pg from "pg";
import { simulatedQr } from "../../src/simulators/upstream-qr.js";
import { AUTH, createTenant, post, type Tenant } from "../support/app.js";
import { Cluster, type ServiceProcess } from "../support/cluster.js";
import { createTestDatabase } from "../support/db.js";
import { admin } from "../support/traffic.js";
import { startPaywayTwin, type RunningTwin } from "../support/payway-twin.js";
import { waitFor } from "../support/wait.js";

// A worker killed (SIGKILL) while it follows a PayWay payment: another worker takes the payment over from what is
// stored on the transaction (token, client id, request_time, cookies) once the dead one's lease runs out, and
// finishes it without opening any page. Real processes, the PayWay twin in this test process.

describe("a PayWay payment whose worker is killed is finished by another, without a page", () => {
  let db: { url: string; drop(): Promise<void> };
  let twin: RunningTwin;
  let cluster: Cluster;
  let a: ServiceProcess;
  let tenant: Tenant;

  beforeAll(async () => {
    db = await createTestDatabase();
    twin = await startPaywayTwin({ makeQr: simulatedQr("twin_shop@abaa", "Twin Shop") });
    cluster = new Cluster({
      name: "payway-takeover",
      databaseUrl: db.url,
      // Polls every 500 ms instead of the real page's 3 s: the twin answers at once, and the wait that matters
      // here is the lease's, not the cadence's.
      env: { SIMULATORS: "true", PAYWAY_API_ORIGIN: twin.apiOrigin, LOG_LEVEL: "info", LINK_POLL_INTERVAL_MS: "500" },
    });
    a = await cluster.add("serve-a", "serve");
    const linkUrl = await twin.link({ currency: "KHR" });
    tenant = await createTenant(
      { url: a.url, admin: (query, variables) => admin(a.url, query, variables) },
      { linkUrl, linkProtocol: "payway" },
    );
  }, 120_000);

  afterAll(async () => {
    await cluster?.dispose();
    await twin?.close();
    await db?.drop();
  });

  it("kill -9 mid-payment → worker B claims it after the lease, polls with the stored session, records SUCCESS", async () => {
    const res = await post(
      `${a.url}/gateway-link/generate-qr`,
      { amount: 7000, currency: 116 },
      AUTH.gatewayLink(tenant.keys.gatewayLink),
    );
    expect(res.status).toBe(200);
    const { transactionId, data } = res.body as { transactionId: string; data: { clientId: string } };
    const client = () => twin.twin.store.client(data.clientId);
    // A follows it: its polls reach the twin. Worker B starts once A polls (A holds the lease: B cannot take it).
    await waitFor(async () => (client()?.polls ?? 0) >= 1, 20_000);
    const [b] = await Promise.all([
      cluster.add("worker-b", "worker"),
      waitFor(async () => (client()?.polls ?? 0) >= 2, 20_000),
    ]);
    await a.kill9();
    const killedAt = Date.now();
    const pollsAtKill = client()?.polls ?? 0;
    // Paid while nobody follows it.
    expect((await twin.post("/sim/link/approve", { clientId: data.clientId })).status).toBe(200);

    const pgc = new pg.Client({ connectionString: db.url });
    await pgc.connect();
    try {
      const final = await waitFor(async () => {
        const r = await pgc.query<{ status: string; receipt_url: string | null }>(
          `select status, upstream ->> 'receiptUrl' as receipt_url from "transaction" where id = $1`,
          [transactionId],
        );
        return r.rows[0]?.status === "SUCCESS" ? r.rows[0] : null;
      }, 90_000);
      expect(final.receipt_url).toMatch(/download-receipt\?file=/);
      const events = await pgc.query<{ type: string }>(
        `select type from transaction_event where transaction_ref = $1 order by seq`,
        [transactionId],
      );
      // B's first poll sees processing-payment (the payer's app at work: scanned), then approved.
      expect(events.rows.map((e) => e.type)).toEqual(["payment.created", "payment.scanned", "payment.completed"]);
    } finally {
      await pgc.end();
    }
    // B polled with the stored session (same client, same token: the twin refuses anything else), and never
    // started a browser for it.
    expect(client()?.polls).toBeGreaterThan(pollsAtKill);
    expect(b.descendants()).toEqual([]);
    console.log(
      `payway takeover: SUCCESS recorded by worker B ${Math.round((Date.now() - killedAt) / 1000)} s after the kill`,
    );
  }, 180_000);

  it("an api process issues, a worker follows; SIGTERM hands the payment to another worker at once (before its lease ends)", async () => {
    const api = await cluster.add("api-c", "api");
    const res = await post(
      `${api.url}/gateway-link/generate-qr`,
      { amount: 8000, currency: 116 },
      AUTH.gatewayLink(tenant.keys.gatewayLink),
    );
    expect(res.status).toBe(200);
    const { data } = res.body as { data: { clientId: string } };
    const client = () => twin.twin.store.client(data.clientId);
    // The api process follows nothing: worker B claims the payment and polls it. Worker D starts once B polls (B
    // holds the lease from then: D cannot take it before B stops).
    await waitFor(async () => (client()?.polls ?? 0) >= 1, 20_000);
    const [d] = await Promise.all([
      cluster.add("worker-d", "worker"),
      waitFor(async () => (client()?.polls ?? 0) >= 2, 20_000),
    ]);
    const stoppedAt = Date.now();
    await cluster.get("worker-b").stop();
    const polls = client()?.polls ?? 0;
    await waitFor(async () => ((client()?.polls ?? 0) > polls ? true : null), 30_000);
    const resumedS = (Date.now() - stoppedAt) / 1000;
    // Handed over, not left to its lease: renewed every 5 s for 20 s, a lease has at least 15 s left when B stops.
    expect(resumedS).toBeLessThan(10);
    expect((await twin.post("/sim/link/approve", { clientId: data.clientId })).status).toBe(200);
    await waitFor(async () => {
      const r = await post(
        `${api.url}/gateway-link/check`,
        { transactionId: (res.body as { transactionId: string }).transactionId },
        AUTH.gatewayLink(tenant.keys.gatewayLink),
      );
      return (r.body as { status: string }).status === "SUCCESS";
    }, 30_000);
    expect(d.descendants()).toEqual([]);
    console.log(`payway hand-over: polls resumed on worker D ${resumedS.toFixed(1)} s after SIGTERM of worker B`);
  }, 180_000);
});
