import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp } from "../support/app.js";
import { Client, statusOf } from "../support/http.js";

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

describe("/metrics scrapes have a budget of their own (BEARER_FAILURES_PER_MINUTE at its default, 10)", () => {
  let t: TestApp;
  const METRICS_TOKEN = "metrics-Zp4Qw8Lk2Nx7Rt5Vb9Hc3Jd6";
  /** A request from `from` (a loopback address: the service sees it as the client's). */
  const from = async (address: string, path: string, token: string) => {
    const client = new Client(t.url, 1, address);
    try {
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      if (path === "/metrics") return await client.send({ method: "GET", path, headers });
      const body = Buffer.from(JSON.stringify({ query: "{ merchants { id } }" }));
      return await client.send({ method: "POST", path, headers, body });
    } finally {
      client.close();
    }
  };
  beforeAll(async () => {
    t = await startTestApp({ METRICS_TOKEN, BEARER_FAILURES_PER_MINUTE: "" });
  });
  afterAll(async () => t?.stop());

  it("a scraper with METRICS_TOKEN, 40 scrapes in a minute from one address, never locks the admin token out of it", async () => {
    const scraper = "127.0.0.12";
    const answers = [];
    for (let i = 0; i < 40; i++) answers.push(await from(scraper, "/metrics", METRICS_TOKEN));
    // A burst of 30, then one more every half second: the budget answers, never the failed-credential throttle.
    expect(answers.slice(0, 30).map((a) => a.status)).toEqual(Array<number>(30).fill(200));
    expect(answers.filter((a) => a.status !== 200 && a.status !== 429)).toEqual([]);
    const refused = answers.find((a) => a.status === 429);
    expect(refused?.json).toEqual({
      error: {
        code: "RATE_LIMITED",
        message: expect.stringMatching(/^Too many scrapes of \/metrics from this address; retry in \d+ s$/),
        details: [],
      },
    });
    expect((await from(scraper, "/graphql", ADMIN_TOKEN)).status).toBe(200);
    // With the admin token as the scrape's credential it is the same.
    for (let i = 0; i < 12; i++) await from("127.0.0.13", "/metrics", ADMIN_TOKEN);
    expect((await from("127.0.0.13", "/graphql", ADMIN_TOKEN)).status).toBe(200);
  });

  it("wrong tokens at /metrics still count: after 10 the address is refused there and for the admin token", async () => {
    const guesser = "127.0.0.14";
    for (let i = 0; i < 10; i++)
      expect((await from(guesser, "/metrics", `wrong-${i}-${"x".repeat(30)}`)).status).toBe(401);
    expect((await from(guesser, "/metrics", METRICS_TOKEN)).status).toBe(429);
    expect((await from(guesser, "/graphql", ADMIN_TOKEN)).status).toBe(429);
    expect((await from("127.0.0.15", "/metrics", METRICS_TOKEN)).status).toBe(200);
  });
});
