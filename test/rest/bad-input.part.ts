// Regressions found by the bad-input fuzz suite (test/faults/input/rest-fuzz.test.ts): each case once
// answered 500, Node's bare 400 without a body, or the wrong status.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import net from "node:net";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";

const errorBody = (code: string) => ({ error: { code, message: expect.any(String), details: expect.any(Array) } });
const fields = (body: unknown) =>
  (body as { error: { details: { field: string }[] } }).error.details.map((d) => d.field);

/** One request written byte for byte; resolves with the whole answer as text. */
function raw(url: string, request: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), u.hostname, () => s.write(request));
    let out = "";
    s.on("data", (d) => (out += d.toString("latin1")));
    s.on("close", () => resolve(out));
    s.on("error", () => undefined);
    s.setTimeout(5000, () => s.destroy());
  });
}

describe("REST: hostile input is refused with the documented error body", () => {
  let t: TestApp;
  let tenant: Tenant;
  const rows = async () =>
    Number((await t.app.core.db.query<{ n: string }>(`select count(*)::text as n from "transaction"`))[0].n);
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  it("bad credentials are 401 even when the body is malformed or of the wrong type (401 before anything else)", async () => {
    const bad = AUTH.qr("pqr_qr_not-a-real-key");
    expect(await post(`${t.url}/qr/generate`, '{"amount":', bad)).toMatchObject({
      status: 401,
      body: errorBody("UNAUTHENTICATED"),
    });
    const res = await fetch(`${t.url}/qr/check`, {
      method: "POST",
      headers: { ...AUTH.gateway(tenant.keys.gateway), "content-type": "text/plain" },
      body: "x",
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { code: "UNAUTHENTICATED", message: expect.any(String), details: [] } });
  });

  it("a request Node's HTTP parser refuses (CR inside a header value) still gets the JSON error body", async () => {
    const answer = await raw(
      t.url,
      `POST /qr/check HTTP/1.1\r\nhost: x\r\nx-auth-type: api-key\rx-evil: 1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({
      error: { code: "BAD_USER_INPUT", message: expect.any(String), details: [] },
    });
  });

  it("meta holding NUL or an unpaired surrogate, or nested thousands deep, is 400 naming meta and stores nothing", async () => {
    const before = await rows();
    const deep = `${"[".repeat(6000)}${"]".repeat(6000)}`;
    const bodies = [
      `{"amount":1,"currency":840,"expiredAfter":60000,"meta":{"k":"\\u0000"}}`,
      `{"amount":1,"currency":840,"expiredAfter":60000,"meta":{"\\ud800":"v"}}`,
      `{"amount":1,"currency":840,"expiredAfter":60000,"meta":{"k":"x\\udc00"}}`,
      `{"amount":1,"currency":840,"expiredAfter":60000,"meta":{"a":${deep}}}`,
    ];
    for (const body of bodies) {
      for (const extra of [{}, { "idempotency-key": `deep-${Math.random()}` }] as Record<string, string>[]) {
        const res = await post(`${t.url}/qr/generate`, body, { ...AUTH.qr(tenant.keys.qr), ...extra });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(errorBody("BAD_USER_INPUT"));
      }
    }
    expect(fields((await post(`${t.url}/qr/generate`, bodies[0], AUTH.qr(tenant.keys.qr))).body)).toEqual(["meta"]);
    expect(await rows()).toBe(before);
  });

  it("amounts a KHQR cannot carry are 400 naming amount: below a cent in exponent form, or longer than 13 characters", async () => {
    for (const [amount, currency] of [
      ["1e-300", 840],
      ["5e-324", 116],
      ["1e13", 116],
      ["12345678901.5", 840],
    ] as const) {
      const res = await post(
        `${t.url}/qr/generate`,
        `{"amount":${amount},"currency":${currency},"expiredAfter":60000}`,
        AUTH.qr(tenant.keys.qr),
      );
      expect(res.status).toBe(400);
      expect(fields(res.body)).toEqual(["amount"]);
    }
    // The largest amounts that fit are accepted.
    expect(
      (
        await post(
          `${t.url}/qr/generate`,
          { amount: 9_999_999_999_999, currency: 116, expiredAfter: 60000 },
          AUTH.qr(tenant.keys.qr),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await post(
          `${t.url}/qr/generate`,
          { amount: 9_999_999_999.99, currency: 840, expiredAfter: 60000 },
          AUTH.qr(tenant.keys.qr),
        )
      ).status,
    ).toBe(200);
  });

  it("a gateway customer field or item name with NUL or an unpaired surrogate is 400 naming it", async () => {
    const res = await post(
      `${t.url}/gateway/generate-qr`,
      {
        qrData: {
          orderId: "sur-1",
          amount: 1,
          currency: "USD",
          firstName: "a\udc00b",
          items: [{ name: "x\ud800", quantity: 1, price: 1 }],
        },
      },
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(res.status).toBe(400);
    expect(fields(res.body).sort()).toEqual(["qrData.firstName", "qrData.items.0.name"]);
    const nul = await post(
      `${t.url}/gateway/generate-qr`,
      { qrData: { orderId: "nul-1", amount: 1, currency: "USD", lastName: "a\u0000b" } },
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(nul.status).toBe(400);
    expect(fields(nul.body)).toEqual(["qrData.lastName"]);
  });

  it("/qr/verify and /qr/decode still judge any string, NUL included (false / a non-zero status)", async () => {
    expect((await post(`${t.url}/qr/verify`, { qrData: "0002\u0000" }, AUTH.qr(tenant.keys.qr))).body).toBe(false);
    expect((await post(`${t.url}/qr/decode`, { qrData: "0002\u0000" }, AUTH.qr(tenant.keys.qr))).body).toMatchObject({
      status: { code: 1 },
    });
  });

  it("an identifier with NUL is 400, not a database error", async () => {
    for (const [path, body, auth] of [
      ["/gateway-link/check", { transactionId: "txn_\u0000" }, AUTH.gatewayLink(tenant.keys.gatewayLink)],
      ["/gateway/check-status", { orderId: "o\u0000" }, AUTH.gateway(tenant.keys.gateway)],
      ["/gateway/check-status", { transactionId: "txn_\u0000" }, AUTH.gateway(tenant.keys.gateway)],
    ] as const) {
      const res = await post(`${t.url}${path}`, body, auth);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody("BAD_USER_INPUT"));
    }
  });
});
