import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { RateLimiter } from "../../src/rest/rate-limit.js";

describe("rate limiting per API key", () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: "60" }, { role: "api" });
    a = await createTenant(t);
    b = await createTenant(t, { name: "B" });
  });
  afterAll(async () => t?.stop());

  it("answers 429 with retry-after and the error body once a key's burst is used; other keys are unaffected", async () => {
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof post>> | null = null;
    for (let i = 0; i < 20; i++) {
      const r = await post(`${t.url}/qr/verify`, { qrData: "x" }, AUTH.qr(a.keys.qr));
      statuses.push(r.status);
      if (r.status === 429) limited ??= r;
    }
    expect(statuses.slice(0, 15).every((s) => s === 200)).toBe(true);
    expect(limited).not.toBeNull();
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited!.body).toEqual({ error: { code: "RATE_LIMITED", message: expect.any(String), details: [] } });
    expect((await post(`${t.url}/qr/verify`, { qrData: "x" }, AUTH.qr(b.keys.qr))).status).toBe(200);
  });

  it("refills at the configured rate", () => {
    let now = 0;
    const rl = new RateLimiter(60, () => now);
    for (let i = 0; i < 15; i++) expect(rl.take("k")).toBe(0);
    expect(rl.take("k")).toBe(1);
    now += 1000;
    expect(rl.take("k")).toBe(0);
    expect(rl.take("k")).toBeGreaterThan(0);
  });
});
