import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { startTestApp, createTenant, moreJobRuns, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import pg from "pg";
import { gatewayModule } from "../../src/gateway/index.js";
import { Client } from "../support/http.js";
import { gatewaySim } from "../support/simulators.js";
import { waitFor } from "../support/wait.js";

// Issue 20, point 7: the gateway's limits as they are — check-transaction-2 sees 7 days, transaction-detail
// 10 calls a minute per merchant, 429 backs off, the pushback is a hint, error 6 says what to fix.

const DAY = 24 * 3600_000;

async function gatewayTenant(t: TestApp, id: string): Promise<Tenant> {
  const secret = `gw-secret-${id}-0123456789`;
  const tenant = await createTenant(t, { gatewayMerchantId: id, gatewaySecret: secret, name: id });
  expect((await post(`${t.url}/sim/gateway/merchants`, { merchantId: id, apiKey: secret })).status).toBeLessThan(300);
  return tenant;
}

/**
 * Waits until the monitor has claimed the order since it was last made due (its next check is then ~1 minute
 * away), and for a monitor run to complete after that (the check's answer is recorded).
 */
async function checkedOnce(t: TestApp, orderId: string): Promise<void> {
  await waitFor(
    async () => {
      const [row] = await t.app.core.db.query<{ at: Date }>(
        `select next_check_at as at from "transaction" where area = 'gateway' and upstream_ref = ?`,
        [orderId],
      );
      return new Date(row.at).getTime() > t.clock.now().getTime() + 30_000;
    },
    30_000,
    100,
    `a check of ${orderId}`,
  );
  await moreJobRuns(t, "gateway.monitor", 1);
}

let n = 0;
const orderId = () => `lim-${Date.now().toString(36)}-${n++}`;

function helpers(t: () => TestApp) {
  const gen = async (tenant: Tenant, lifetime = 60) => {
    const id = orderId();
    const res = await post(
      `${t().url}/gateway/generate-qr`,
      { qrData: { orderId: id, amount: 2, currency: "USD", lifetime } },
      AUTH.gateway(tenant.keys.gateway),
    );
    return { res, orderId: id };
  };
  const status = async (tenant: Tenant, id: string) =>
    (
      (await post(`${t().url}/gateway/check-status`, { orderId: id }, AUTH.gateway(tenant.keys.gateway))).body as {
        status: string;
      }
    ).status;
  return { gen, status };
}

describe("gateway limits (monitor every 500 ms)", () => {
  let t: TestApp;
  let tenant: Tenant;
  const { gen, status } = helpers(() => t);
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await gatewayTenant(t, "gw_limits_1");
  });
  afterEach(async () => {
    await post(`${t.url}/sim/gateway/fault`, { mode: "ok" });
  });
  afterAll(async () => t?.stop());

  it("error 6 (domain not whitelisted) → UPSTREAM_REJECTED naming the fix", async () => {
    await post(`${t.url}/sim/gateway/fault`, { mode: "domain-not-whitelisted" });
    const { res } = await gen(tenant);
    expect(res.status).toBe(400);
    const error = (res.body as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("UPSTREAM_REJECTED");
    expect(error.message).toMatch(/domain not whitelisted \(code 6/);
    expect(error.message).toMatch(/whitelist this service's domain and outbound IP address for merchant gw_limits_1/);
    expect(error.message).toMatch(/GATEWAY_API_PROXY/);
  });

  it("older than 7 days → transaction-detail, within 10 calls a minute per merchant; a paid one is found", async () => {
    const sim = gatewaySim(t.app);
    const old: { orderId: string; res: { status: number } }[] = [];
    for (let i = 0; i < 12; i++) old.push(await gen(tenant, 30 * 24 * 60));
    for (const o of old) expect(o.res.status).toBe(200);
    const detailBefore = sim.state.calls.detail;
    t.clock.advance(8 * DAY);
    const paid = await post(`${t.url}/sim/gateway/pay`, { tranId: old[0].orderId, outcome: "APPROVED" });
    expect(paid.status).toBe(200);
    await waitFor(async () => sim.state.calls.detail > detailBefore, 20_000);
    // More monitor rounds within the same minute: the two old ones left out are due again each round.
    await moreJobRuns(t, "gateway.monitor", 3);
    expect(sim.state.calls.detail - detailBefore).toBeLessThanOrEqual(10);
    expect(sim.state.calls.detailRefused).toBe(0);
    // A minute later the budget is back: the rest are checked too, and the paid one is SUCCESS although
    // check-transaction-2 no longer sees it.
    t.clock.advance(61_000);
    await waitFor(
      async () => sim.state.calls.detail - detailBefore > 10 && (await status(tenant, old[0].orderId)) === "SUCCESS",
      20_000,
    );
    expect(sim.state.calls.detailRefused).toBe(0);
  });

  it("a 429 pauses the merchant's checks (one call, not one per backoff step)", async () => {
    const sim = gatewaySim(t.app);
    const other = await gatewayTenant(t, "gw_limits_2");
    const { orderId: id } = await gen(other);
    await post(`${t.url}/sim/gateway/fault`, { mode: "rate-limited" });
    const before = sim.state.calls.rateLimited;
    await waitFor(async () => sim.state.calls.rateLimited > before, 10_000);
    // Five more rounds (at least 4 s: the job runs each second, the one that met the 429 may still be counted):
    // per-transaction backoff alone (1 s, then 2 s) would have asked twice more.
    await moreJobRuns(t, "gateway.monitor", 5);
    expect(sim.state.calls.rateLimited - before).toBe(1);
    expect(await status(other, id)).toBe("CHECKOUT");
  });
});

describe("gateway pushback: a hint that triggers an immediate check (monitor every 60 s)", () => {
  let t: TestApp;
  let tenant: Tenant;
  const { gen, status } = helpers(() => t);
  beforeAll(async () => {
    t = await startTestApp({ GATEWAY_MONITOR_INTERVAL_MS: "60000" });
    tenant = await gatewayTenant(t, "gw_push_1");
  });
  afterAll(async () => t?.stop());

  it("the gateway's pushback after payment → SUCCESS long before the next scheduled check", async () => {
    const { orderId: id } = await gen(tenant);
    // Let the first scheduled check pass: the transaction's next check is then a minute away.
    await checkedOnce(t, id);
    const started = Date.now();
    await post(`${t.url}/sim/gateway/pay`, { tranId: id, outcome: "APPROVED" });
    await waitFor(async () => (await status(tenant, id)) === "SUCCESS", 30_000);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("a forged pushback never changes a status by itself; nonsense is 400", async () => {
    const { orderId: id } = await gen(tenant);
    const configId = tenant.gatewayConfigId;
    const forged = await post(`${t.url}/gateway/pushback/${configId}`, { tran_id: id, apv: "123456", status: "00" });
    expect(forged.status).toBe(200);
    // The hint made it due at once, and the check it triggered (the next one is then a minute away) said unpaid.
    await checkedOnce(t, id);
    expect(await status(tenant, id)).toBe("CHECKOUT");
    expect((await post(`${t.url}/gateway/pushback/${configId}`, { nope: 1 })).status).toBe(400);
  });
});

describe("gateway pushback: limited per client address and per configuration (RATE_LIMIT_PER_MINUTE=4: 10 at once, one more each 15 s)", () => {
  let t: TestApp;
  let tenant: Tenant;
  let sql: pg.Client;
  const clients: Client[] = [];
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: "4", GATEWAY_MONITOR_INTERVAL_MS: "60000" });
    tenant = await createTenant(t);
    // Every UPDATE statement on the transaction table is noted, also one that matches no row.
    sql = new pg.Client({ connectionString: t.dbUrl });
    await sql.connect();
    await sql.query(`create table updates_seen (q text);
      create function note_update() returns trigger language plpgsql as
        $$ begin insert into updates_seen values (current_query()); return null; end $$;
      create trigger note_update after update on "transaction" for each statement execute function note_update();`);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await sql?.end();
    await t?.stop();
  });

  const from = (address: string) => {
    const c = new Client(t.url, 1, address);
    clients.push(c);
    return (configId: string) =>
      c.send({
        method: "POST",
        path: `/gateway/pushback/${configId}`,
        headers: { "content-type": "application/json" },
        body: Buffer.from(JSON.stringify({ tran_id: "order-1" })),
      });
  };
  const pushbackUpdates = async () =>
    Number(
      (await sql.query<{ n: string }>(`select count(*) as n from updates_seen where q like '%gateway_config c%'`))
        .rows[0].n,
    );

  it("over the limit → 429 with the error body; another address and another configuration are unaffected", async () => {
    const configB = await t.app.module(gatewayModule).configs.create({
      merchantId: tenant.merchantId,
      name: "second",
      upstreamMerchantId: "gw_push_b",
      apiSecret: "push-b-secret-0123456789",
    });
    const first = from("127.0.0.1");
    for (let i = 0; i < 10; i++) expect((await first(tenant.gatewayConfigId)).status).toBe(200);
    const over = await first(tenant.gatewayConfigId);
    expect(over.status).toBe(429);
    expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
    expect(over.json).toEqual({
      error: { code: "RATE_LIMITED", message: expect.stringMatching(/retry in/), details: [] },
    });

    const second = from("127.0.0.2");
    expect((await second(configB.id)).status).toBe(200);
    // The configuration's own bucket holds from any address.
    expect((await second(tenant.gatewayConfigId)).status).toBe(429);
    expect(await pushbackUpdates()).toBe(11);
  });

  it("a configuration that does not exist costs no update, and one address is limited across names", async () => {
    const before = await pushbackUpdates();
    const third = from("127.0.0.3");
    for (let i = 0; i < 10; i++) expect((await third(`gwc_missing${i}`)).status).toBe(200);
    expect(await pushbackUpdates()).toBe(before);
    expect((await third("gwc_missing_more")).status).toBe(429);
  });
});
