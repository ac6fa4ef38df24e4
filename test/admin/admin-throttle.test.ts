import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, ADMIN_TOKEN, type TestApp } from "../support/app.js";
import { weakAdminToken } from "../../src/config.js";

const query = (t: TestApp, token: string) =>
  fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: "{ merchants { id } }" }),
  });

describe("admin token guessing (issue 16)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ BEARER_FAILURES_PER_MINUTE: "" }); // the default: 10 a minute
  });
  afterAll(async () => t?.stop());

  it("after 10 wrong bearer tokens from one address: 429 with retry-after, even for the right token, for a minute", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await query(t, `guess-${i}-${"x".repeat(20)}`)).status);
    expect(statuses.slice(0, 10).every((s) => s !== 429)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    const blocked = await query(t, ADMIN_TOKEN);
    expect(blocked.status).toBe(429);
    const wait = Number(blocked.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(((await blocked.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    // Requests without a bearer token (API keys, health) are not affected.
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });

  it("the production token rule: length, diversity and entropy", () => {
    for (const weak of ["aaaaaaaaaaaaaaaa", "password12345678", "password12345678password12345678", "ab".repeat(40)])
      expect(weakAdminToken(weak)).not.toBeNull();
    expect(weakAdminToken("0f3a9c1e7b2d4f6a8c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d0f1a3c5e7b9d2f4a")).toBeNull();
    expect(weakAdminToken("Ec6bXamUTowVNsxtJoUTnxoX_mS1j5pRN4oAu5jjiF4")).toBeNull();
  });
});
