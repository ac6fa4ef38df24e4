// REST answers in the words of REST: a body's field and what it must be, the header to fix, the method to use;
// never GraphQL's variables and types (`Variable "$input" … Float cannot represent …`, `"GatewayQrDataInput!"`).
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import fc from "fast-check";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { anyValue, numberish, objectish, stringish, toJson, type J } from "../support/values.js";
import { GRAPHQL_WORDS } from "../support/contract.js";
import { statusOf } from "../support/http.js";

type Kind = keyof Tenant["keys"];
const ROUTES: Record<string, { kind: Kind; base: Record<string, J>; fields: Record<string, fc.Arbitrary<J>> }> = {
  "/qr/generate": {
    kind: "qr",
    base: { amount: 1.5, currency: 840, expiredAfter: 60_000, meta: { a: 1 } },
    fields: { amount: numberish, currency: numberish, expiredAfter: numberish, meta: objectish },
  },
  "/qr/check": { kind: "qr", base: { md5: "0".repeat(32) }, fields: { md5: stringish } },
  "/qr/verify": { kind: "qr", base: { qrData: "000201" }, fields: { qrData: stringish } },
  "/qr/decode": { kind: "qr", base: { qrData: "000201" }, fields: { qrData: stringish } },
  "/gateway/generate-qr": {
    kind: "gateway",
    base: { qrData: { orderId: "o-1", amount: 5, currency: "USD", items: [{ name: "a", quantity: 1, price: 5 }] } },
    fields: {
      qrData: anyValue,
      metaData: objectish,
      "qrData.orderId": stringish,
      "qrData.amount": numberish,
      "qrData.currency": stringish,
      "qrData.items": anyValue,
      "qrData.items.0": anyValue,
      "qrData.items.0.quantity": numberish,
      "qrData.lifetime": numberish,
    },
  },
  "/gateway/check-status": { kind: "gateway", base: { orderId: "o-1" }, fields: { orderId: anyValue } },
  // USD for a KHR key: refused, so that no mutation opens a browser page.
  "/gateway-link/generate-qr": {
    kind: "gatewayLink",
    base: { amount: 1000, currency: 840 },
    fields: { amount: numberish, currency: stringish, meta: objectish, expiredAfter: numberish },
  },
  "/gateway-link/check": { kind: "gatewayLink", base: { transactionId: "txn_x" }, fields: { transactionId: anyValue } },
};
const AUTH_OF = { qr: AUTH.qr, gateway: AUTH.gateway, gatewayLink: AUTH.gatewayLink };

/** base with one field (a dotted path) set to value, or removed when value is undefined. */
function withField(base: Record<string, J>, path: string, value: J | undefined): Record<string, J> {
  const copy = structuredClone(base) as Record<string, J>;
  const parts = path.split(".");
  let target = copy as Record<string, J> | J[];
  for (const p of parts.slice(0, -1)) target = (target as Record<string, J>)[p] as Record<string, J>;
  const last = parts[parts.length - 1] as string;
  if (value === undefined) delete (target as Record<string, J>)[last];
  else (target as Record<string, J>)[last] = value;
  return copy;
}

/** The corpus: each field removed, null, and 25 hostile values of the fuzz suite's kinds (fixed seed). */
function corpus(route: string): string[] {
  const { base, fields } = ROUTES[route];
  const bodies: string[] = [];
  Object.entries(fields).forEach(([path, arb], i) => {
    bodies.push(toJson(withField(base, path, undefined)), toJson(withField(base, path, null)));
    for (const v of fc.sample(fc.oneof(arb, anyValue), { numRuns: 25, seed: 4242 + i }))
      bodies.push(toJson(withField(base, path, v)));
  });
  return bodies;
}

describe("REST speaks of the JSON body and its headers, never of GraphQL", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  it.each(Object.keys(ROUTES))(
    "%s: no error of the generated corpus names a variable or a GraphQL type",
    async (route) => {
      const headers = AUTH_OF[ROUTES[route].kind](tenant.keys[ROUTES[route].kind]);
      const leaks: string[] = [];
      let errors = 0;
      for (const body of corpus(route)) {
        const res = await post(`${t.url}${route}`, body, headers);
        expect(res.status).toBeLessThan(500);
        if (res.status < 400) continue;
        errors++;
        const e = (res.body as { error: { message: string; details: { field: string; message: string }[] } }).error;
        for (const text of [e.message, ...e.details.flatMap((d) => [d.field, d.message])])
          if (GRAPHQL_WORDS.test(text)) leaks.push(`${body.slice(0, 120)} → ${text}`);
      }
      expect(errors).toBeGreaterThan(10);
      expect(leaks).toEqual([]);
    },
  );

  it("names the body's field and what it must be", async () => {
    const q = AUTH.qr(tenant.keys.qr);
    const amount = await post(`${t.url}/qr/generate`, { amount: "abc", currency: 840, expiredAfter: 60000 }, q);
    expect(amount.body).toEqual({
      error: {
        code: "BAD_USER_INPUT",
        message: "Invalid request: amount must be a number",
        details: [{ field: "amount", message: "must be a number" }],
      },
    });
    const qrData = await post(`${t.url}/gateway/generate-qr`, {}, AUTH.gateway(tenant.keys.gateway));
    expect(qrData.body).toMatchObject({ error: { message: "Invalid request: qrData is required" } });
    const items = await post(
      `${t.url}/gateway/generate-qr`,
      { qrData: { orderId: "o-2", amount: 5, currency: "USD", items: 5 } },
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(items.body).toMatchObject({ error: { details: [{ field: "qrData.items", message: "must be an array" }] } });
    const md5 = await post(`${t.url}/qr/check`, { md5: null }, q);
    expect(md5.body).toMatchObject({ error: { details: [{ field: "md5", message: "must be a string, not null" }] } });
  });

  it("a missing key, a wrong x-auth-type, another area's key and an unknown key read differently (all 401)", async () => {
    const other = await createTenant(t, { name: "Other Shop" });
    for (const [route, { kind }] of Object.entries(ROUTES)) {
      const right = AUTH_OF[kind](tenant.keys[kind]);
      const foreignKind: Kind = kind === "qr" ? "gateway" : "qr";
      const cases = {
        missingKey: { "x-auth-type": right["x-auth-type"] },
        missingType: { "x-api-key": tenant.keys[kind] },
        wrongType: { ...right, "x-auth-type": AUTH_OF[foreignKind]("k")["x-auth-type"] },
        otherArea: { ...right, "x-api-key": tenant.keys[foreignKind] },
        otherAreaOwnType: AUTH_OF[foreignKind](other.keys[foreignKind]),
        unknownKey: { ...right, "x-api-key": "pqr_qr_" + "A".repeat(43) },
        bearer: { authorization: "Bearer nope" },
      };
      const messages: Record<string, string> = {};
      for (const [name, headers] of Object.entries(cases)) {
        const res = await post(`${t.url}${route}`, ROUTES[route].base, headers);
        expect({ name, status: res.status }).toEqual({ name, status: 401 });
        const e = (res.body as { error: { code: string; message: string; details: unknown[] } }).error;
        expect(e.code).toBe("UNAUTHENTICATED");
        expect(e.details).toEqual([]);
        messages[name] = e.message;
        // Nothing about anyone's keys or merchants: only headers, areas and kinds.
        for (const secret of [...Object.values(tenant.keys), ...Object.values(other.keys), other.merchantId])
          expect(e.message).not.toContain(secret);
      }
      const area = route.split("/")[1];
      expect(messages.missingKey).toMatch(/x-api-key header is missing/);
      expect(messages.missingType).toMatch(/x-auth-type header is missing/);
      expect(messages.wrongType).toMatch(new RegExp(`x-auth-type must be ${right["x-auth-type"]} on /${area}/`));
      expect(messages.otherArea).toMatch(
        new RegExp(`This API key is for /${foreignKind === "qr" ? "qr" : "gateway"}/`),
      );
      expect(messages.otherAreaOwnType).toBe(messages.otherArea);
      expect(messages.unknownKey).toMatch(/not valid/);
      expect(messages.bearer).toMatch(/not an Authorization bearer token/);
      const distinct = new Set(
        Object.entries(messages)
          .filter(([n]) => n !== "otherAreaOwnType")
          .map(([, m]) => m),
      );
      expect(distinct.size).toBe(6);
    }
  });

  it("other methods on the eight paths are 405 with Allow: POST, whatever the credentials", async () => {
    for (const route of Object.keys(ROUTES)) {
      for (const method of ["GET", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]) {
        for (const path of [route, `${route}/`]) {
          const res = await fetch(`${t.url}${path}`, { method });
          expect({ method, path, status: res.status, allow: res.headers.get("allow") }).toEqual({
            method,
            path,
            status: 405,
            allow: "POST",
          });
          if (method === "HEAD") continue;
          expect(await res.json()).toEqual({
            error: { code: "METHOD_NOT_ALLOWED", message: `${route} takes POST with a JSON body`, details: [] },
          });
        }
      }
    }
    expect(await statusOf(`${t.url}/qr/generate-nope`)).toBe(404);
  });
});
