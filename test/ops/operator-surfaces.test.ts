import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp } from "../support/app.js";
import { statusOf } from "../support/http.js";

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const gql = (url: string, token: string) =>
  fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(token) },
    body: JSON.stringify({ query: "{ merchants { id } }" }),
  });

describe("/metrics on the public port (issue 16)", () => {
  let t: TestApp;
  const METRICS_TOKEN = "metrics-Zp4Qw8Lk2Nx7Rt5Vb9Hc3Jd6";
  beforeAll(async () => {
    t = await startTestApp({ METRICS_TOKEN });
  });
  afterAll(async () => t?.stop());

  it("needs a bearer token and tells nobody the business volume per area and status", async () => {
    const tenant = await createTenant(t);
    await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 60000 }, AUTH.qr(tenant.keys.qr));
    const anonymous = await fetch(`${t.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toMatch(/transaction/);
    expect(await statusOf(`${t.url}/metrics`, { headers: bearer("wrong-token-0123456789") })).toBe(401);
    for (const token of [METRICS_TOKEN, ADMIN_TOKEN]) {
      const r = await fetch(`${t.url}/metrics`, { headers: bearer(token) });
      expect(r.status).toBe(200);
      const text = await r.text();
      expect(text).toMatch(/^transactions_rows_estimate \d+$/m);
      // The per-scrape `count(*) … group by area, status` is gone.
      expect(text).not.toMatch(/^transactions\{/m);
    }
  });
});

describe("the operator listener (ADMIN_PORT)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ADMIN_PORT: "0", ADMIN_HOST: "127.0.0.1" });
  });
  afterAll(async () => t?.stop());

  it("serves admin API, dashboard and metrics; the public port serves none of them", async () => {
    const admin = t.app.adminUrl as string;
    expect(admin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(admin).not.toBe(t.url);
    expect((await gql(admin, ADMIN_TOKEN)).status).toBe(200);
    expect(await statusOf(`${admin}/metrics`)).toBe(200);
    expect(await statusOf(`${admin}/dashboard/`)).toBe(200);

    expect((await gql(t.url, ADMIN_TOKEN)).status).toBe(403);
    expect(await statusOf(`${t.url}/metrics`, { headers: bearer(ADMIN_TOKEN) })).toBe(404);
    expect(await statusOf(`${t.url}/dashboard/`)).toBe(404);
    // The public API itself is unchanged.
    const tenant = await createTenant(t); // through the operator listener (t.admin)
    const g = await post(
      `${t.url}/qr/generate`,
      { amount: 1, currency: 840, expiredAfter: 60000 },
      AUTH.qr(tenant.keys.qr),
    );
    expect(g.status).toBe(200);
  });
});
