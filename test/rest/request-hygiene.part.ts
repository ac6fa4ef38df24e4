import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { loadConfig } from "../../src/config.js";

const raw = (url: string, body: string, headers: Record<string, string>) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

describe("request hygiene (issue 16, finding 6)", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  const count = async () =>
    Number(
      (
        await t.app.core.db.query<{ n: string }>(
          `select count(*)::text as n from "transaction" where api_key_ref = ?`,
          [tenant.keyIds.qr],
        )
      )[0].n,
    );

  it("a repeated key ({amount:1, amount:1000000}) is refused with 400 and creates nothing, on REST and GraphQL", async () => {
    const before = await count();
    const r = await raw(
      `${t.url}/qr/generate`,
      `{"amount":1,"currency":840,"expiredAfter":60000,"amount":1000000}`,
      AUTH.qr(tenant.keys.qr),
    );
    expect(r.status).toBe(400);
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("BAD_USER_INPUT");
    expect(body.error.message).toMatch(/"amount" twice/);
    const g = await raw(
      `${t.url}/graphql`,
      JSON.stringify({
        query: `mutation($i: GenerateQrInput!) { generateQr(input: $i) { transactionId } }`,
        variables: { i: { amount: 1, currency: 840, expiredAfter: 60000 } },
      }).replace(`"amount":1,`, `"amount":1,"amount":1000000,`),
      AUTH.qr(tenant.keys.qr),
    );
    expect(g.status).toBe(400);
    expect(await count()).toBe(before);
    // Nested objects are separate scopes: the same key in two objects is fine.
    const ok = await raw(
      `${t.url}/qr/generate`,
      `{"amount":1,"currency":840,"expiredAfter":60000,"meta":{"amount":2,"x":{"amount":3}}}`,
      AUTH.qr(tenant.keys.qr),
    );
    expect(ok.status).toBe(200);
  });

  it("x-request-id is echoed only when short and plain; API answers carry Cache-Control: no-store", async () => {
    const send = (id: string) =>
      raw(`${t.url}/qr/generate`, `{"amount":1,"currency":840,"expiredAfter":60000}`, {
        ...AUTH.qr(tenant.keys.qr),
        "x-request-id": id,
      });
    const good = await send("req-123_abc");
    expect(good.headers.get("x-request-id")).toBe("req-123_abc");
    expect(good.headers.get("cache-control")).toBe("no-store");
    for (const bad of ["<script>alert(1)</script>", "a".repeat(300), 'x" injected="1', "line\u00e9"]) {
      const r = await send(bad);
      expect(r.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
    const gql = await raw(`${t.url}/graphql`, JSON.stringify({ query: "{ __typename }" }), AUTH.qr(tenant.keys.qr));
    expect(gql.headers.get("cache-control")).toBe("no-store");
  });

  it("demo mode listens on 127.0.0.1 unless HOST says otherwise", () => {
    expect(loadConfig({}).host).toBe("127.0.0.1");
    expect(loadConfig({ HOST: "0.0.0.0" }).host).toBe("0.0.0.0");
    expect(loadConfig({ DEMO: "false" }).host).toBe("0.0.0.0");
  });
});
