import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, checkFailures, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { waitFor } from "../support/wait.js";
import { gatewaySim } from "../support/simulators.js";

interface GwQr {
  transactionId: string;
  orderId: string;
  qrString: string;
  qrImage: string;
  deeplink: string;
  appStore: string;
  playStore: string;
  amount: number;
  currency: string;
  status: string;
  gatewayStatus: { code: string; message: string };
  expiresAt: string;
}
interface GwStatus {
  transactionId: string;
  orderId: string;
  status: string;
  amount: string;
  currency: string;
  expiredAt: string;
  createdAt: string;
}

describe("hosted gateway area over REST, against the gateway simulator", () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  let n = 0;
  const orderId = () => `ord-${Date.now().toString(36)}-${n++}`;
  const gen = (qrData: Record<string, unknown>, extra: Record<string, unknown> = {}, key = tenant.keys.gateway) =>
    post(
      `${t.url}/gateway/generate-qr`,
      { qrData: { orderId: orderId(), amount: 10.5, currency: "USD", ...qrData }, ...extra },
      AUTH.gateway(key),
    );
  const status = (body: Record<string, unknown>, key = tenant.keys.gateway) =>
    post(`${t.url}/gateway/check-status`, body, AUTH.gateway(key));
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t, { gatewayMerchantId: "gw_merchant_1", gatewaySecret: "gw-secret-1-0123456789" });
    other = await createTenant(t, {
      name: "Other",
      gatewayMerchantId: "gw_merchant_2",
      gatewaySecret: "gw-secret-2-0123456789",
    });
    for (const [merchantId, apiKey] of [
      ["gw_merchant_1", "gw-secret-1-0123456789"],
      ["gw_merchant_2", "gw-secret-2-0123456789"],
    ]) {
      expect((await post(`${t.url}/sim/gateway/merchants`, { merchantId, apiKey })).status).toBeLessThan(300);
    }
  });
  afterAll(async () => t?.stop());

  it("generate → exactly the contract's fields, CHECKOUT, a PNG data URL, expiresAt = now + lifetime", async () => {
    const res = await gen(
      {
        lifetime: 10,
        firstName: "Sok",
        email: "sok@example.com",
        items: [{ name: "Coffee", quantity: 2, price: 5.25 }],
      },
      { metaData: { cart: "c-1" } },
    );
    expect(res.status).toBe(200);
    const b = res.body as GwQr;
    expect(Object.keys(b).sort()).toEqual([
      "amount",
      "appStore",
      "checkoutUrl",
      "clientToken",
      "currency",
      "deeplink",
      "expiresAt",
      "gatewayStatus",
      "orderId",
      "playStore",
      "qrImage",
      "qrString",
      "status",
      "transactionId",
    ]);
    expect(b).toMatchObject({ amount: 10.5, currency: "USD", status: "CHECKOUT", gatewayStatus: { code: "0" } });
    expect(b.qrImage).toMatch(/^data:image\/png;base64,/);
    expect(Date.parse(b.expiresAt) - Date.now()).toBeGreaterThan(9 * 60_000);
    const verify = await post(`${t.url}/qr/verify`, { qrData: b.qrString }, AUTH.qr(tenant.keys.qr));
    expect(verify.body).toBe(true);
  });

  it("pay APPROVED → check-status SUCCESS within 10 s (by transactionId and by orderId)", async () => {
    const b = (await gen({})).body as GwQr;
    expect((await post(`${t.url}/sim/gateway/pay`, { tranId: b.orderId, outcome: "APPROVED" })).status).toBeLessThan(
      300,
    );
    const done = await waitFor(async () => {
      const r = (await status({ transactionId: b.transactionId })).body as GwStatus;
      return r.status === "SUCCESS" ? r : null;
    }, 10_000);
    expect(done).toEqual({
      transactionId: b.transactionId,
      orderId: b.orderId,
      status: "SUCCESS",
      amount: "10.50",
      currency: "USD",
      expiredAt: expect.any(String),
      createdAt: expect.any(String),
    });
    expect(((await status({ orderId: b.orderId })).body as GwStatus).status).toBe("SUCCESS");
  });

  it("DECLINED → FAILED", async () => {
    const b = (await gen({ amount: 1000, currency: "KHR" })).body as GwQr;
    await post(`${t.url}/sim/gateway/pay`, { tranId: b.orderId, outcome: "DECLINED" });
    await waitFor(async () => ((await status({ orderId: b.orderId })).body as GwStatus).status === "FAILED", 10_000);
  });

  it("untouched with lifetime 3 → EXPIRED after 3 minutes (moved clock)", async () => {
    const b = (await gen({ lifetime: 3 })).body as GwQr;
    expect(((await status({ transactionId: b.transactionId })).body as GwStatus).status).toBe("CHECKOUT");
    // Several monitor rounds see the gateway report PENDING, which is what CHECKOUT means: no transaction.updated.
    const sim = gatewaySim(t.app);
    const checks = sim.state.calls.check;
    await waitFor(async () => sim.state.calls.check >= checks + 3, 15_000);
    const types = async () =>
      (
        await t.app.core.db.query<{ type: string }>(
          `select type from transaction_event where transaction_ref = ? order by seq`,
          [b.transactionId],
        )
      ).map((e) => e.type);
    expect(await types()).toEqual(["payment.created"]);
    t.clock.advance(3 * 60_000 + 1);
    expect(((await status({ transactionId: b.transactionId })).body as GwStatus).status).toBe("EXPIRED");
    expect(await types()).toEqual(["payment.created", "payment.expired"]);
  });

  it("a duplicate orderId → 400; nothing new is stored", async () => {
    const id = orderId();
    expect(
      (
        await post(
          `${t.url}/gateway/generate-qr`,
          { qrData: { orderId: id, amount: 1, currency: "USD" } },
          AUTH.gateway(tenant.keys.gateway),
        )
      ).status,
    ).toBe(200);
    const dup = await post(
      `${t.url}/gateway/generate-qr`,
      { qrData: { orderId: id, amount: 1, currency: "USD" } },
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(dup.status).toBe(400);
    expect((dup.body as { error: { code: string; details: { field: string }[] } }).error).toMatchObject({
      code: "CONFLICT",
      details: [{ field: "qrData.orderId" }],
    });
    const rows = await t.app.core.db.query(`select id from "transaction" where area = 'gateway' and upstream_ref = ?`, [
      id,
    ]);
    expect(rows).toHaveLength(1);
  });

  it("the contract's amount, lifetime and field rules → 400 naming the field and the rule; the gateway sees none", async () => {
    const sim = gatewaySim(t.app);
    const calls = sim.state.calls.generate;
    const khmerItems = [{ name: "ក".repeat(120), quantity: 1, price: 1 }];
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ amount: 0.001 }, "qrData.amount", /decimal/],
      [{ amount: 0 }, "qrData.amount", /greater than 0/],
      [{ amount: 99, currency: "KHR" }, "qrData.amount", /100 KHR/],
      [{ currency: "EUR" }, "qrData.currency", /USD or KHR/],
      [{ lifetime: 2 }, "qrData.lifetime", /3 to 43200/],
      [{ lifetime: 43_201 }, "qrData.lifetime", /3 to 43200 \(the gateway's QR API allows 3 minutes to 30 days\)/],
      [{ lifetime: 172_800 }, "qrData.lifetime", /3 to 43200/],
      [{ orderId: "x".repeat(21) }, "qrData.orderId", /at most 20/],
      [{ orderId: `o_${n}` }, "qrData.orderId", /letters A-Z and a-z, digits and '-'/],
      [{ orderId: `o.${n}` }, "qrData.orderId", /letters A-Z and a-z, digits and '-'/],
      [{ email: "not-an-email" }, "qrData.email", /code 19/],
      [{ firstName: "x".repeat(21) }, "qrData.firstName", /at most 20/],
      [{ firstName: "R2D2" }, "qrData.firstName", /codes 16 and 17/],
      [{ lastName: "Sok!" }, "qrData.lastName", /codes 16 and 17/],
      [{ phone: "+855 12 345 678" }, "qrData.phone", /code 18/],
      [{ qrImageTemplate: "qr_template1" }, "qrData.qrImageTemplate", /template3_color/],
      [{ items: [{ name: "a", quantity: 0, price: 1 }] }, "qrData.items.0.quantity", /whole number/],
      [{ items: khmerItems }, "qrData.items", /at most 500/],
    ];
    for (const [qrData, field, rule] of cases) {
      const res = await gen(qrData);
      expect({ qrData, status: res.status }).toEqual({ qrData, status: 400 });
      const error = (res.body as { error: { code: string; details: { field: string; message: string }[] } }).error;
      expect(error.code).toBe("BAD_USER_INPUT");
      expect(error.details).toContainEqual({ field, message: expect.stringMatching(rule) });
    }
    expect(sim.state.calls.generate).toBe(calls);
  });

  it("KHR and USD, with and without items in Khmer: generated at the strict simulator and checked to SUCCESS", async () => {
    const sim = gatewaySim(t.app);
    const items = [
      { name: "កាហ្វេទឹកដោះគោ", quantity: 2, price: 2.5 },
      { name: "នំបញ្ចុក", quantity: 1, price: 5 },
    ];
    for (const [currency, amount, withItems] of [
      ["USD", 10.5, false],
      ["USD", 10.5, true],
      ["KHR", 42_000, false],
      ["KHR", 42_000, true],
    ] as const) {
      const res = await gen({ currency, amount, firstName: "សុខា", ...(withItems ? { items } : {}) });
      expect({ currency, withItems, status: res.status }).toEqual({ currency, withItems, status: 200 });
      const b = res.body as GwQr;
      const upstream = sim.state.transactions.get(`gw_merchant_1/${b.orderId}`);
      expect(upstream).toMatchObject({ currency, amount: String(amount), qrImageTemplate: "template3_color" });
      await post(`${t.url}/sim/gateway/pay`, { tranId: b.orderId, outcome: "APPROVED" });
      await waitFor(async () => ((await status({ orderId: b.orderId })).body as GwStatus).status === "SUCCESS", 10_000);
    }
  });

  it("sends the configuration's QR image template, the one it is changed to, or the request's own", async () => {
    const sim = gatewaySim(t.app);
    const sent = async (qrData: Record<string, unknown> = {}) => {
      const b = (await gen(qrData)).body as GwQr;
      return sim.state.transactions.get(`gw_merchant_1/${b.orderId}`)?.qrImageTemplate;
    };
    expect(await sent()).toBe("template3_color");
    const update = `mutation($id: ID!, $t: String) { updateGatewayConfig(id: $id, input: { qrImageTemplate: $t }) {
      qrImageTemplate } }`;
    const changed = await t.admin<{ updateGatewayConfig: { qrImageTemplate: string } }>(update, {
      id: tenant.gatewayConfigId,
      t: "template5_color",
    });
    expect(changed.updateGatewayConfig.qrImageTemplate).toBe("template5_color");
    try {
      expect(await sent()).toBe("template5_color");
      expect(await sent({ qrImageTemplate: "template1" })).toBe("template1");
      await expect(t.admin(update, { id: tenant.gatewayConfigId, t: "template7" })).rejects.toThrow(
        /must be one of the gateway's QR image templates/,
      );
    } finally {
      await t.admin(update, { id: tenant.gatewayConfigId, t: null });
    }
    expect(await sent()).toBe("template3_color");
  });

  it("check-status: both or neither id → 400; another key's transaction → 404", async () => {
    const b = (await gen({})).body as GwQr;
    expect((await status({ transactionId: b.transactionId, orderId: b.orderId })).status).toBe(400);
    expect((await status({})).status).toBe(400);
    const res = await status({ transactionId: b.transactionId }, other.keys.gateway);
    expect(res.status).toBe(404);
    expect((await status({ orderId: b.orderId }, other.keys.gateway)).status).toBe(404);
  });

  it("upstream rejection (wrong secret) → 400 with the upstream's status; simulator down → 502; no rows either way", async () => {
    const bad = await createTenant(t, {
      name: "Bad secret",
      gatewayMerchantId: "gw_merchant_1",
      gatewaySecret: "wrong-secret-0123456789",
    });
    const [{ n: before }] = await t.app.core.db.query<{ n: string }>(`select count(*)::text as n from "transaction"`);
    const rejected = await gen({}, {}, bad.keys.gateway);
    expect(rejected.status).toBe(400);
    expect((rejected.body as { error: { code: string; gatewayStatus: { code: string } } }).error).toMatchObject({
      code: "UPSTREAM_REJECTED",
      gatewayStatus: { code: "1" },
    });
    await post(`${t.url}/sim/gateway/fault`, { mode: "down" });
    try {
      const down = await gen({});
      expect(down.status).toBe(502);
      expect((down.body as { error: { code: string } }).error.code).toBe("UPSTREAM_UNAVAILABLE");
    } finally {
      await post(`${t.url}/sim/gateway/fault`, { mode: "ok" });
    }
    const [{ n: after }] = await t.app.core.db.query<{ n: string }>(`select count(*)::text as n from "transaction"`);
    expect(after).toBe(before);
  });

  it("simulator garbage while monitoring → no state change, then SUCCESS after recovery", async () => {
    const b = (await gen({ lifetime: 30 })).body as GwQr;
    await post(`${t.url}/sim/gateway/pay`, { tranId: b.orderId, outcome: "APPROVED" });
    await post(`${t.url}/sim/gateway/fault`, { mode: "garbage" });
    try {
      // Two checks answered with garbage (each a failed check): still CHECKOUT.
      await waitFor(async () => (await checkFailures(t, b.transactionId)) >= 2, 20_000, 100, "two failed checks");
      expect(((await status({ transactionId: b.transactionId })).body as GwStatus).status).toBe("CHECKOUT");
    } finally {
      await post(`${t.url}/sim/gateway/fault`, { mode: "ok" });
    }
    await waitFor(
      async () => ((await status({ transactionId: b.transactionId })).body as GwStatus).status === "SUCCESS",
      20_000,
    );
  });
});
