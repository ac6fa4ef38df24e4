import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import { statusOf } from "../support/http.js";

const errorBody = (code: string) => ({ error: { code, message: expect.any(String), details: expect.any(Array) } });

describe("REST shim: bodies and errors", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  it("malformed JSON → 400 with the error body", async () => {
    const res = await post(`${t.url}/qr/generate`, '{"amount": 1,', AUTH.qr(tenant.keys.qr));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody("BAD_USER_INPUT"));
  });

  it("wrong content type → 400 naming the header", async () => {
    const res = await fetch(`${t.url}/qr/generate`, {
      method: "POST",
      headers: { "content-type": "text/plain", ...AUTH.qr(tenant.keys.qr) },
      body: "amount=1",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        code: "BAD_USER_INPUT",
        message: expect.any(String),
        details: [{ field: "content-type", message: expect.any(String) }],
      },
    });
  });

  it("a body over 64 KiB → 413 with the error body", async () => {
    const res = await post(
      `${t.url}/qr/generate`,
      { amount: 1, currency: 840, expiredAfter: 60000, meta: { pad: "x".repeat(70_000) } },
      AUTH.qr(tenant.keys.qr),
    );
    expect(res.status).toBe(413);
    expect(res.body).toEqual(errorBody("BAD_USER_INPUT"));
  });

  it("a JSON array or scalar body → 400", async () => {
    for (const body of ["[1,2]", '"x"', "3"]) {
      const res = await post(`${t.url}/qr/check`, body, AUTH.qr(tenant.keys.qr));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody("BAD_USER_INPUT"));
    }
  });

  it("an unknown path → 404 with the error body; GET on a POST path → 405", async () => {
    const res = await post(`${t.url}/qr/nope`, {}, AUTH.qr(tenant.keys.qr));
    expect(res.status).toBe(404);
    expect(res.body).toEqual(errorBody("NOT_FOUND"));
    const get = await fetch(`${t.url}/qr/generate`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("every response carries a request id", async () => {
    const res = await post(`${t.url}/qr/verify`, { qrData: "x" }, AUTH.qr(tenant.keys.qr));
    expect(res.headers.get("x-request-id")).toMatch(/.+/);
  });

  it("health, readiness and metrics", async () => {
    expect(await statusOf(`${t.url}/healthz`)).toBe(200);
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ok: true,
      checks: { database: true, statements: true, migrations: true, jobs: true, startup: true },
    });
    expect(await statusOf(`${t.url}/metrics`)).toBe(401);
    const metrics = await (
      await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    expect(metrics).toContain("http_request_duration_seconds_bucket");
    expect(metrics).toContain("# TYPE transactions_rows_estimate gauge");
  });
});
