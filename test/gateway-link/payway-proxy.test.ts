import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { PAYWAY_PATHS } from "../../src/upstreams/payway.js";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { startProxy, type TestProxy } from "../support/proxy.js";
import { waitFor } from "../support/wait.js";
import { statusOf } from "../support/http.js";

// PayWay refuses datacenter and foreign addresses with 403; LINK_PROXY sends Chromium's page and the worker's own
// status polls through a proxy. Here the twin refuses the service's address (127.0.0.1), and a real proxy that
// connects out from 127.0.0.2 (with Basic credentials) is the only way in.

describe("LINK_PROXY: the PayWay page and the status polls through an outbound proxy", () => {
  let proxy: TestProxy;
  let t: TestApp;
  let tenant: Tenant;
  let linkUrl: string;

  beforeAll(async () => {
    proxy = await startProxy({ localAddress: "127.0.0.2", credentials: { username: "pq", password: "s3cr:et" } });
    const withCredentials = new URL(proxy.url);
    withCredentials.username = "pq";
    withCredentials.password = encodeURIComponent("s3cr:et");
    t = await startTestApp({ LINK_PROXY: withCredentials.toString() });
    const link = (await post(`${t.url}/sim/payway/links`, { currency: "KHR" })).body as { code: string };
    linkUrl = `${t.url}/sim/payway/${link.code}`;
    tenant = await createTenant(t, { linkUrl, linkProtocol: "payway" });
    await post(`${t.url}/sim/payway/fault`, { mode: "forbidden", address: "127.0.0.1" });
  });
  afterAll(async () => {
    await t?.stop();
    await proxy?.close();
  });

  it("an address the page refuses gets through the proxy: QR, polls and the approval", async () => {
    // Direct, this machine's address is refused.
    expect(await statusOf(linkUrl)).toBe(403);

    const res = await post(
      `${t.url}/gateway-link/generate-qr`,
      { amount: 6000, currency: 116 },
      AUTH.gatewayLink(tenant.keys.gatewayLink),
    );
    expect(res.status).toBe(200);
    const { transactionId, data } = res.body as { transactionId: string; data: { clientId: string } };
    // Chromium's page and its API call went through the proxy, and the worker's polls too (a CONNECT tunnel).
    expect(proxy.seen).toContain(`GET ${linkUrl}`);
    const listCall = proxy.seen.find((s) => s.startsWith("POST ") && s.endsWith(PAYWAY_PATHS.listPaymentOptions)) ?? "";
    expect(listCall).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/api\//);
    const apiHost = new URL(listCall.slice("POST ".length)).host;
    await waitFor(async () => proxy.seen.includes(`CONNECT ${apiHost}`), 15_000);

    expect((await post(`${t.url}/sim/link/approve`, { clientId: data.clientId })).status).toBe(200);
    const done = await waitFor(async () => {
      const c = (
        await post(`${t.url}/gateway-link/check`, { transactionId }, AUTH.gatewayLink(tenant.keys.gatewayLink))
      ).body as { status: string; receiptUrl?: string };
      return c.status === "SUCCESS" ? c : null;
    }, 30_000);
    expect(done.receiptUrl).toMatch(/download-receipt/);
    const ready = (await (await fetch(`${t.url}/readyz`)).json()) as { details?: { gatewayLink?: unknown } };
    expect(ready.details?.gatewayLink).toBeUndefined();
  }, 60_000);
});
