import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { AUTH, createTenant, post, startTestApp, type Tenant, type TestApp } from "../support/app.js";
import { returnUrlProblem } from "../../src/validation/return-url.js";

type View = { returnUrl: string | null };
type Generated = { transactionId: string; clientToken: string };

/**
 * A shop's way back from the checkout page: per generate request (all three areas) or per merchant, the request's
 * winning; https only, http only on loopback while the service itself answers there; a legacy body is unchanged.
 */
describe("returnUrl", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    // The gateway simulator knows the tenant's gateway account (as a merchant registers with the gateway).
    await post(`${t.url}/sim/gateway/merchants`, {
      merchantId: `m_${tenant.merchantId.slice(-8)}`,
      apiKey: "sim-secret-0123456789",
    });
  });
  afterAll(async () => t?.stop());

  const view = async (g: Generated): Promise<View> => {
    const res = await fetch(`${t.url}/checkout/view/${g.transactionId}`, {
      headers: { authorization: `Bearer ${g.clientToken}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as View;
  };
  const qr = (extra: Record<string, unknown> = {}) =>
    post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 60_000, ...extra }, AUTH.qr(tenant.keys.qr));

  it("a request's returnUrl reaches the checkout view, in each area; a legacy body answers as before", async () => {
    const shop = "https://shop.example/orders/42?x=1";
    const withIt = await qr({ returnUrl: shop });
    expect(withIt.status).toBe(200);
    expect((await view(withIt.body as Generated)).returnUrl).toBe(shop);
    const gw = await post(
      `${t.url}/gateway/generate-qr`,
      { qrData: { orderId: `RU${Date.now() % 1e10}`, amount: 2.25, currency: "USD" }, returnUrl: shop },
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(gw.status).toBe(200);
    expect((await view(gw.body as Generated)).returnUrl).toBe(shop);
    // The legacy answer has exactly the keys it had: the field is accepted, never echoed.
    const legacy = await qr();
    expect(Object.keys(legacy.body as object).sort()).toEqual(Object.keys(withIt.body as object).sort());
    expect(JSON.stringify(withIt.body)).not.toContain("shop.example");
    expect((await view(legacy.body as Generated)).returnUrl).toBeNull();
  });

  it("the merchant's returnUrl is the fallback; the request's wins; null clears it", async () => {
    const merchantUrl = "https://shop.example/back";
    await t.admin(`mutation($id: ID!, $i: MerchantInput!) { updateMerchant(id: $id, input: $i) { id returnUrl } }`, {
      id: tenant.merchantId,
      i: { returnUrl: merchantUrl },
    });
    expect((await view((await qr()).body as Generated)).returnUrl).toBe(merchantUrl);
    const own = "https://shop.example/this-order";
    expect((await view((await qr({ returnUrl: own })).body as Generated)).returnUrl).toBe(own);
    await t.admin(`mutation($id: ID!, $i: MerchantInput!) { updateMerchant(id: $id, input: $i) { id } }`, {
      id: tenant.merchantId,
      i: { returnUrl: null },
    });
    expect((await view((await qr()).body as Generated)).returnUrl).toBeNull();
  });

  it("refuses what a payer's browser must not be sent to, naming the field, and writes nothing", async () => {
    const [{ count: before }] = await t.app.core.db.query<{ count: string }>(
      `select count(*)::text as count from "transaction"`,
    );
    for (const bad of [
      "http://shop.example/",
      "javascript:alert(1)",
      "data:text/html,x",
      "//shop.example/",
      "https://user:pass@shop.example/",
      "shop.example",
      "",
      `https://shop.example/${"a".repeat(2000)}`,
      42,
    ]) {
      const r = await qr({ returnUrl: bad });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain('"field":"returnUrl"');
    }
    const [{ count: after }] = await t.app.core.db.query<{ count: string }>(
      `select count(*)::text as count from "transaction"`,
    );
    expect(after).toBe(before);
    await expect(
      t.admin(`mutation($id: ID!, $i: MerchantInput!) { updateMerchant(id: $id, input: $i) { id } }`, {
        id: tenant.merchantId,
        i: { returnUrl: "http://shop.example/" },
      }),
    ).rejects.toThrow(/returnUrl|Invalid merchant/);
  });

  it("http on loopback only where the service itself runs on loopback http", async () => {
    // This test app answers on http://127.0.0.1: a developer's shop on localhost is a fine way back.
    const local = await qr({ returnUrl: "http://localhost:3000/done" });
    expect(local.status).toBe(200);
    expect((await view(local.body as Generated)).returnUrl).toBe("http://localhost:3000/done");
    // A deployment (an https public address) refuses it: the rule the services apply with their own address.
    expect(returnUrlProblem("http://127.0.0.1:3000/done", "https://pay.example.com")).toMatch(/https/);
    expect(returnUrlProblem("http://localhost/done", "http://10.0.0.5:4000")).toMatch(/https/);
    expect(returnUrlProblem("https://shop.example/", "https://pay.example.com")).toBeNull();
    expect(returnUrlProblem("http://[::1]:8080/", "http://127.0.0.1:4000")).toBeNull();
  });
});
