import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createTenant, startTestApp, post, type TestApp, ADMIN_TOKEN } from "../support/app.js";

type Gql = {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions: { code: string; details: { field: string; message: string }[] } }[];
};

/**
 * The operator API's create-or-update inputs apply the same field rules as the input classes
 * (docs/decisions/0224-one-validation-mechanism.md): the text rule's storability among them, where its own copy of
 * the text rule used to pass a lone surrogate on to the database.
 */
describe("the operator API's inputs follow the one set of field rules", () => {
  let t: TestApp;
  let merchantId: string;
  const gql = (query: string, variables: Record<string, unknown>) =>
    post(`${t.url}/graphql`, { query, variables }, { authorization: `Bearer ${ADMIN_TOKEN}` }).then(
      (r) => r.body as Gql,
    );
  beforeAll(async () => {
    t = await startTestApp();
    ({ merchantId } = await createTenant(t));
  });
  afterAll(async () => t?.stop());

  it("refuses text that cannot be stored, and reports it with the other fields' details in one answer", async () => {
    const body = await gql(`mutation($i: GatewayConfigInput!) { createGatewayConfig(input: $i) { id } }`, {
      i: { merchantId, name: "Shop \ud800", upstreamMerchantId: "", apiSecret: "secret-0123456789" },
    });
    expect(body.errors?.[0].extensions.code).toBe("BAD_USER_INPUT");
    expect(body.errors?.[0].message).toBe(
      "Invalid gateway configuration: name must not contain NUL characters or unpaired surrogates (they cannot be " +
        "stored); upstreamMerchantId is required",
    );
    expect(body.errors?.[0].extensions.details).toEqual([
      { field: "name", message: "must not contain NUL characters or unpaired surrogates (they cannot be stored)" },
      { field: "upstreamMerchantId", message: "is required" },
    ]);
  });

  it("answers a currency outside 116 and 840 with the same detail on merchants and payment-link configurations", async () => {
    const merchant = await gql(`mutation($id: ID!, $i: MerchantInput!) { updateMerchant(id: $id, input: $i) { id } }`, {
      id: merchantId,
      i: { defaultCurrency: 978 },
    });
    expect(merchant.errors?.[0].extensions.details).toEqual([
      { field: "defaultCurrency", message: "must be 116 (KHR) or 840 (USD)" },
    ]);
    const link = await gql(`mutation($i: LinkConfigInput!) { createLinkConfig(input: $i) { id } }`, {
      i: { merchantId, name: "Rules link", url: "", currency: 978 },
    });
    expect(link.errors?.[0].extensions.details).toEqual([
      { field: "url", message: "is required" },
      { field: "currency", message: "must be 116 (KHR) or 840 (USD)" },
    ]);
  });
});
