import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, post, type TestApp, ADMIN_TOKEN } from "../support/app.js";
import { runAdminCli } from "../../src/admin/cli.js";
import { DOCUMENTED_QR_IMAGE_TEMPLATES } from "../support/gateway-documents.js";

type Gql = {
  data?: Record<string, unknown>;
  errors?: { message: string; extensions: { code: string; details: { field: string; message: string }[] } }[];
};
const gql = (t: TestApp, query: string, variables: Record<string, unknown> = {}) =>
  post(`${t.url}/graphql`, { query, variables }, { authorization: `Bearer ${ADMIN_TOKEN}` }).then((r) => r.body as Gql);

/** The CLI's printed answer (it prints the GraphQL data as JSON), its error lines and its exit code. */
async function cli(
  t: TestApp,
  argv: string[],
): Promise<{ code: number; out: Record<string, unknown> | null; errors: string[] }> {
  const lines: string[] = [];
  const errors: string[] = [];
  const [log, error] = [console.log, console.error];
  console.log = (s: string) => void lines.push(s);
  console.error = (s: string) => void errors.push(s);
  try {
    const code = await runAdminCli(argv, { PQR_URL: t.url, ADMIN_TOKEN });
    return { code, out: code === 0 ? (JSON.parse(lines.join("\n")) as Record<string, unknown>) : null, errors };
  } finally {
    [console.log, console.error] = [log, error];
  }
}

const TEMPLATES = DOCUMENTED_QR_IMAGE_TEMPLATES;

/** The QR API requires qr_image_template: each gateway configuration names one, from the page's list. */
describe("a gateway configuration's QR image template", () => {
  let t: TestApp;
  let merchantId: string;
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    const { createMerchant } = await t.admin<{ createMerchant: { id: string } }>(
      `mutation($i: MerchantInput!) { createMerchant(input: $i) { id } }`,
      {
        i: {
          name: "Tpl shop",
          accountType: "individual",
          bakongAccountId: "tpl@devb",
          merchantName: "Tpl",
          merchantCity: "Phnom Penh",
          defaultCurrency: 840,
        },
      },
    );
    merchantId = createMerchant.id;
  });
  afterAll(async () => t?.stop());

  const create = (extra: Record<string, unknown>) =>
    gql(t, `mutation($i: GatewayConfigInput!) { createGatewayConfig(input: $i) { id qrImageTemplate } }`, {
      i: { merchantId, name: "gw", upstreamMerchantId: "tpl_up", apiSecret: "tpl-secret-0123456789", ...extra },
    });

  it("lists the page's templates and the default over the admin API", async () => {
    const res = await gql(t, `{ gatewayQrImageTemplates { names defaultName } }`);
    expect(res.data).toEqual({ gatewayQrImageTemplates: { names: TEMPLATES, defaultName: "template3_color" } });
  });

  it("defaults to template3_color, takes any listed template, and refuses others naming the field", async () => {
    expect((await create({})).data).toEqual({
      createGatewayConfig: { id: expect.any(String), qrImageTemplate: "template3_color" },
    });
    expect((await create({ qrImageTemplate: "template6_color" })).data).toMatchObject({
      createGatewayConfig: { qrImageTemplate: "template6_color" },
    });
    for (const bad of ["qr_template1", "TEMPLATE1", ""]) {
      const res = await create({ qrImageTemplate: bad });
      expect(res.errors?.[0].extensions).toMatchObject({
        code: "BAD_USER_INPUT",
        details: [{ field: "qrImageTemplate", message: expect.stringContaining("template3_color") }],
      });
    }
  });

  it("is kept for configurations made before it existed (the column's default)", async () => {
    await t.app.core.db.query(
      `insert into gateway_config (id, merchant_ref, name, upstream_merchant_id, api_secret_enc, created_at, updated_at)
       values ('gwc_legacy_tpl', ?, 'legacy', 'legacy_up', 'x', now(), now())`,
      [merchantId],
    );
    const res = await gql(t, `{ gatewayConfigs(merchantId: "${merchantId}") { id qrImageTemplate } }`);
    expect(
      (res.data!.gatewayConfigs as { id: string; qrImageTemplate: string }[]).find((g) => g.id === "gwc_legacy_tpl"),
    ).toEqual({ id: "gwc_legacy_tpl", qrImageTemplate: "template3_color" });
  });

  it("is set, changed and listed with the admin CLI", async () => {
    const made = await cli(t, [
      "gateway-config:create",
      ...["--merchantId", merchantId, "--name", "cli", "--upstreamMerchantId", "cli_up"],
      ...["--apiSecret", "cli-secret-0123456789", "--qrImageTemplate", "template2"],
    ]);
    expect(made).toEqual({
      code: 0,
      errors: [],
      out: {
        createGatewayConfig: {
          id: expect.any(String),
          name: "cli",
          upstreamMerchantId: "cli_up",
          qrImageTemplate: "template2",
        },
      },
    });
    const id = (made.out!.createGatewayConfig as { id: string }).id;
    const changed = await cli(t, ["gateway-config:update", "--id", id, "--qrImageTemplate", "template4_color"]);
    expect(changed.out).toMatchObject({ updateGatewayConfig: { id, name: "cli", qrImageTemplate: "template4_color" } });
    const refused = await cli(t, ["gateway-config:update", "--id", id, "--qrImageTemplate", "template9"]);
    expect(refused).toMatchObject({ code: 1, errors: [expect.stringMatching(/qrImageTemplate must be one of/)] });
    const listed = await cli(t, ["gateway-configs"]);
    expect((listed.out!.gatewayConfigs as { id: string }[]).find((g) => g.id === id)).toMatchObject({
      qrImageTemplate: "template4_color",
    });
    expect((await cli(t, ["gateway-qr-templates"])).out).toEqual({
      gatewayQrImageTemplates: { names: TEMPLATES, defaultName: "template3_color" },
    });
  });
});
