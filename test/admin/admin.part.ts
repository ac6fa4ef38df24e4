import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, post, type TestApp, ADMIN_TOKEN } from "../support/app.js";

const gql = (t: TestApp, query: string, variables: Record<string, unknown> = {}) =>
  post(`${t.url}/graphql`, { query, variables }, { authorization: `Bearer ${ADMIN_TOKEN}` }).then(
    (r) =>
      r.body as {
        data?: Record<string, unknown>;
        errors?: { message: string; extensions: { code: string; details: { field: string }[] } }[];
      },
  );

describe("admin API", () => {
  let t: TestApp;
  let merchantId: string;
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    const res = await gql(t, `mutation($i: MerchantInput!) { createMerchant(input: $i) { id bakongAccountId } }`, {
      i: {
        name: "Shop",
        accountType: "merchant",
        bakongAccountId: "shop@devb",
        merchantName: "Shop",
        merchantCity: "Phnom Penh",
        merchantId: "S1",
        acquiringBank: "Dev Bank",
        defaultCurrency: 116,
      },
    });
    merchantId = (res.data!.createMerchant as { id: string }).id;
  });
  afterAll(async () => t?.stop());

  it("validates merchant KHQR fields and names every bad field", async () => {
    const res = await gql(t, `mutation($i: MerchantInput!) { createMerchant(input: $i) { id } }`, {
      i: {
        name: "X",
        accountType: "merchant",
        bakongAccountId: "no-at-sign",
        merchantName: "N".repeat(30),
        merchantCity: "C",
        defaultCurrency: 999,
      },
    });
    expect(res.errors![0].extensions.code).toBe("BAD_USER_INPUT");
    expect(res.errors![0].extensions.details.map((d) => d.field).sort()).toEqual([
      "acquiringBank",
      "bakongAccountId",
      "defaultCurrency",
      "merchantId",
      "merchantName",
    ]);
  });

  it("refuses a gateway key without a gateway configuration, and a link key without a link configuration", async () => {
    for (const kind of ["gateway", "gateway_link"]) {
      const res = await gql(t, `mutation($i: ApiKeyInput!) { createApiKey(input: $i) { apiKey } }`, {
        i: { merchantId, kind },
      });
      expect(res.errors![0].extensions.code).toBe("BAD_USER_INPUT");
    }
  });

  it("never returns a gateway API secret, and shows a key's plaintext only once", async () => {
    const cfg = await gql(
      t,
      `mutation($i: GatewayConfigInput!) { createGatewayConfig(input: $i) { id upstreamMerchantId } }`,
      {
        i: { merchantId, name: "gw", upstreamMerchantId: "up1", apiSecret: "very-secret-value" },
      },
    );
    expect(JSON.stringify(cfg)).not.toContain("very-secret-value");
    const [row] = await t.app.core.db.query<{ api_secret_enc: string }>(`select api_secret_enc from gateway_config`);
    expect(row.api_secret_enc).not.toContain("very-secret-value");
    const gwId = (cfg.data!.createGatewayConfig as { id: string }).id;
    const key = await gql(
      t,
      `mutation($i: ApiKeyInput!) { createApiKey(input: $i) { apiKey key { id prefix kind } } }`,
      { i: { merchantId, kind: "gateway", gatewayConfigId: gwId } },
    );
    const created = key.data!.createApiKey as { apiKey: string; key: { prefix: string } };
    expect(created.apiKey).toMatch(/^pqr_gw_[A-Za-z0-9_-]{43}$/);
    expect(created.apiKey.startsWith(created.key.prefix)).toBe(true);
    const list = await gql(t, `{ apiKeys { prefix } }`);
    expect(JSON.stringify(list)).not.toContain(created.apiKey);
    const stored = await t.app.core.db.query<{ hash: string }>(`select hash from api_key`);
    expect(JSON.stringify(stored)).not.toContain(created.apiKey);
  });

  it("the CLI runs the same operations against a running service", async () => {
    const { runAdminCli } = await import("../../src/admin/cli.js");
    const lines: string[] = [];
    const orig = console.log;
    console.log = (s: string) => void lines.push(s);
    try {
      const code = await runAdminCli(
        [
          "link-config:create",
          "--merchantId",
          merchantId,
          "--name",
          "cli",
          "--url",
          "https://pay.example/x",
          "--currency",
          "840",
        ],
        { PQR_URL: t.url, ADMIN_TOKEN },
      );
      expect(code).toBe(0);
    } finally {
      console.log = orig;
    }
    const created = JSON.parse(lines.join("\n")).createLinkConfig as { id: string };
    expect(created).toEqual({
      id: expect.stringMatching(/^lnk_/),
      name: "cli",
      url: "https://pay.example/x",
      currency: 840,
      protocol: "payway",
      expectedPayee: null,
    });
    // The payee every QR of the link must pay: set and listed by the operator's CLI, a bad one refused.
    const run = async (argv: string[]): Promise<{ code: number; out: string }> => {
      const out: string[] = [];
      console.log = (s: string) => void out.push(s);
      try {
        return { code: await runAdminCli(argv, { PQR_URL: t.url, ADMIN_TOKEN }), out: out.join("\n") };
      } finally {
        console.log = orig;
      }
    };
    const updated = await run(["link-config:update", "--id", created.id, "--expectedPayee", "shop@abaa"]);
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.out).updateLinkConfig).toMatchObject({
      id: created.id,
      name: "cli",
      expectedPayee: "shop@abaa",
      expectedPayeeSource: "operator",
    });
    const listed = JSON.parse((await run(["link-configs"])).out) as { linkConfigs: { id: string }[] };
    expect(listed.linkConfigs.find((l) => l.id === created.id)).toMatchObject({
      expectedPayee: "shop@abaa",
      expectedPayeeSource: "operator",
    });
    const errors: string[] = [];
    const origError = console.error;
    console.error = (s: string) => void errors.push(s);
    try {
      expect((await run(["link-config:update", "--id", created.id, "--expectedPayee", "no-bank"])).code).toBe(1);
    } finally {
      console.error = origError;
    }
    expect(errors.join("\n")).toMatch(/Invalid payment-link configuration/);
    const cleared = await run(["link-config:update", "--id", created.id, "--expectedPayee", ""]);
    expect(JSON.parse(cleared.out).updateLinkConfig).toMatchObject({ expectedPayee: null, expectedPayeeSource: null });
  });
});
