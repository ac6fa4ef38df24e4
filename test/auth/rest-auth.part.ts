import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import { ROUTES } from "../../src/app.js";

const HEADER_FOR: Record<string, (key: string) => Record<string, string>> = {
  qr: AUTH.qr,
  gateway: AUTH.gateway,
  gateway_link: AUTH.gatewayLink,
};

describe("API key authentication on every REST path", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  it("covers the contract's eight paths", () => {
    expect(ROUTES.map((r) => r.path).sort()).toEqual([
      "/gateway-link/check",
      "/gateway-link/generate-qr",
      "/gateway/check-status",
      "/gateway/generate-qr",
      "/qr/check",
      "/qr/decode",
      "/qr/generate",
      "/qr/verify",
    ]);
  });

  for (const route of ROUTES) {
    it(`${route.path}: missing, invalid, revoked-looking and wrong-kind keys → 401 with the error body`, async () => {
      const right = HEADER_FOR[route.kind];
      const wrongKind = route.kind === "qr" ? AUTH.gateway(tenant.keys.gateway) : AUTH.qr(tenant.keys.qr);
      const sameKeyWrongType = { ...right(route.kind === "qr" ? tenant.keys.gateway : tenant.keys.qr) };
      const cases: Record<string, string>[] = [
        {},
        { "x-auth-type": right("")["x-auth-type"] },
        right("pqr_qr_not-a-real-key"),
        right(""),
        {
          "x-api-key":
            route.kind === "qr"
              ? tenant.keys.qr
              : route.kind === "gateway"
                ? tenant.keys.gateway
                : tenant.keys.gatewayLink,
        },
        wrongKind,
        sameKeyWrongType,
      ];
      for (const headers of cases) {
        const res = await post(`${t.url}${route.path}`, {}, headers);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: { code: "UNAUTHENTICATED", message: expect.any(String), details: [] } });
      }
    });
  }

  it("GraphQL answers UNAUTHENTICATED for an operation without the right key", async () => {
    const res = await post(
      `${t.url}/graphql`,
      { query: 'mutation { createMerchant(input: {name: "x"}) { id } }' },
      AUTH.qr(tenant.keys.qr),
    );
    expect((res.body as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe(
      "UNAUTHENTICATED",
    );
  });

  it("GraphQL without a key names the missing header as REST does, and each other problem as REST words it", async () => {
    const generate = {
      query: "mutation($input: GenerateQrInput!) { generateQr(input: $input) { transactionId } }",
      variables: { input: { amount: 1.5, currency: 840, expiredAfter: 120000 } },
    };
    const graphql = async (headers: Record<string, string>) => {
      const res = await post(`${t.url}/graphql`, generate, headers);
      const errors = (res.body as { errors: { message: string; extensions: { code: string } }[] }).errors;
      expect(res.status).toBe(401);
      expect(errors[0].extensions.code).toBe("UNAUTHENTICATED");
      return errors[0].message;
    };
    const rest = async (headers: Record<string, string>) =>
      ((await post(`${t.url}/qr/generate`, generate.variables.input, headers)).body as { error: { message: string } })
        .error.message;
    // No key at all: both name the header and the x-auth-type to send it with.
    expect(await rest({})).toMatch(/^The x-api-key header is missing: send your API key .*with x-auth-type: api-key$/);
    expect(await graphql({})).toBe(
      "The x-api-key header is missing: send your API key in x-api-key, with x-auth-type: api-key",
    );
    expect(await graphql({ "x-api-key": tenant.keys.qr })).toBe(
      "The x-auth-type header is missing or unknown: this operation takes x-auth-type: api-key",
    );
    expect(await graphql(AUTH.qr("pqr_qr_not-a-real-key"))).toMatch(/^The API key in x-api-key is not valid/);
    expect(await graphql(AUTH.gateway(tenant.keys.gateway))).toBe(
      "This API key is for the gateway area; this operation needs a key of its own kind, sent with x-auth-type: api-key",
    );
    expect(await graphql({ authorization: `Bearer ${ADMIN_TOKEN}` })).toBe(
      "This operation takes an API key in x-api-key with x-auth-type: api-key, not an Authorization bearer token",
    );
  });

  it("a wrong admin token is refused", async () => {
    const res = await post(
      `${t.url}/graphql`,
      { query: "{ merchants { id } }" },
      { authorization: "Bearer not-the-token-0000000" },
    );
    expect((res.body as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe(
      "UNAUTHENTICATED",
    );
  });

  it("a revoked key stops working at once", async () => {
    const { createApiKey } = await t.admin<{ createApiKey: { apiKey: string; key: { id: string } } }>(
      `mutation($input: ApiKeyInput!) { createApiKey(input: $input) { apiKey key { id } } }`,
      { input: { merchantId: tenant.merchantId, kind: "qr" } },
    );
    const before = await post(`${t.url}/qr/verify`, { qrData: "x" }, AUTH.qr(createApiKey.apiKey));
    expect(before.status).not.toBe(401);
    await t.admin(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: createApiKey.key.id });
    const after = await post(`${t.url}/qr/verify`, { qrData: "x" }, AUTH.qr(createApiKey.apiKey));
    expect(after.status).toBe(401);
  });
});
