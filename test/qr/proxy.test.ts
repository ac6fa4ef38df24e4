import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { startProxy, type TestProxy } from "../support/proxy.js";
import { waitFor } from "../support/wait.js";

// Issue 20, point 2: the network API refuses callers outside Cambodia with 403; the upstream clients can go
// through an outbound proxy (NETWORK_API_PROXY, GATEWAY_API_PROXY), and "everything refused" is said plainly.

describe("upstream calls through NETWORK_API_PROXY / GATEWAY_API_PROXY", () => {
  let t: TestApp;
  let tenant: Tenant;
  let networkProxy: TestProxy;
  let gatewayProxy: TestProxy;
  beforeAll(async () => {
    networkProxy = await startProxy();
    gatewayProxy = await startProxy();
    t = await startTestApp({ NETWORK_API_PROXY: networkProxy.url, GATEWAY_API_PROXY: gatewayProxy.url });
    tenant = await createTenant(t, { gatewayMerchantId: "gw_proxy_1", gatewaySecret: "gw-secret-proxy-0123456789" });
    const reg = await post(`${t.url}/sim/gateway/merchants`, {
      merchantId: "gw_proxy_1",
      apiKey: "gw-secret-proxy-0123456789",
    });
    expect(reg.status).toBeLessThan(300);
  });
  afterAll(async () => {
    await t?.stop();
    await networkProxy?.close();
    await gatewayProxy?.close();
  });

  it("network checks go through the network proxy, gateway calls through the gateway proxy", async () => {
    const host = new URL(t.url).host;
    const qr = (
      await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 600_000 }, AUTH.qr(tenant.keys.qr))
    ).body as { data: { md5: string } };
    await post(`${t.url}/sim/network/pay`, { md5: qr.data.md5 });
    await waitFor(
      async () =>
        ((await post(`${t.url}/qr/check`, { md5: qr.data.md5 }, AUTH.qr(tenant.keys.qr))).body as { status: string })
          .status === "SUCCESS",
      15_000,
    );
    expect(networkProxy.seen).toContain(`CONNECT ${host}`);
    expect(gatewayProxy.seen).toEqual([]);

    const gw = await post(
      `${t.url}/gateway/generate-qr`,
      { qrData: { orderId: `o-${Date.now().toString(36)}`, amount: 1, currency: "USD" } },
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(gw.status).toBe(200);
    expect(gatewayProxy.seen).toContain(`CONNECT ${host}`);
  });

  it("every network call refused with 403 → /readyz details say what, the two likely causes and the setting", async () => {
    await post(`${t.url}/sim/network/fault`, { mode: "geo-blocked" });
    try {
      await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 600_000 }, AUTH.qr(tenant.keys.qr));
      const details = await waitFor(async () => {
        const r = (await (await fetch(`${t.url}/readyz`)).json()) as {
          details?: { network?: Record<string, unknown> };
        };
        return r.details?.network;
      }, 30_000);
      expect(details).toMatchObject({
        refused: expect.stringMatching(/every network API call answers HTTP 403 since/),
        endpoints: expect.arrayContaining(["/v1/check_transaction_by_md5"]),
        setting: "NETWORK_API_PROXY",
        proxy: networkProxy.url,
      });
      expect(details.likelyCauses).toEqual([expect.stringMatching(/outside Cambodia/), expect.stringMatching(/token/)]);
    } finally {
      await post(`${t.url}/sim/network/fault`, { mode: "ok" });
    }
    await waitFor(async () => {
      const r = (await (await fetch(`${t.url}/readyz`)).json()) as { details?: { network?: unknown } };
      return r.details?.network === undefined;
    }, 30_000);
  });
});
