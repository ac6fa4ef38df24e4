import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { ignoredFieldsHeader, IGNORED_FIELDS_MAX } from "../../src/rest/body-fields.js";
import { namesTarget } from "../../src/gateway-link/link-target.js";

const ignored = (res: { headers: Headers }) => res.headers.get("x-ignored-fields");

describe("legacy REST bodies: unknown fields are ignored and named in x-ignored-fields; GraphQL stays strict", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    tenant = await createTenant(t, { gatewayMerchantId: "legacy_gw", gatewaySecret: "legacy-secret-0123456789" });
    expect(
      (await post(`${t.url}/sim/gateway/merchants`, { merchantId: "legacy_gw", apiKey: "legacy-secret-0123456789" }))
        .status,
    ).toBeLessThan(300);
  });
  afterAll(async () => t?.stop());

  it("generic QR: generate, check, verify and decode ignore unknown fields and say which", async () => {
    const g = await post(
      `${t.url}/qr/generate`,
      { amount: 1, currency: 840, expiredAfter: 60000, url: "x", callback: { a: 1 }, billNumber: "B-1" },
      AUTH.qr(tenant.keys.qr),
    );
    expect(g.status).toBe(200);
    expect(ignored(g)).toBe("billNumber,callback,url");
    const { data } = g.body as { data: { md5: string; qr: string } };
    const c = await post(`${t.url}/qr/check`, { md5: data.md5, merchantId: "m1" }, AUTH.qr(tenant.keys.qr));
    expect(c.status).toBe(200);
    expect(ignored(c)).toBe("merchantId");
    const v = await post(`${t.url}/qr/verify`, { qrData: data.qr, strict: true }, AUTH.qr(tenant.keys.qr));
    expect(v).toMatchObject({ status: 200, body: true });
    expect(ignored(v)).toBe("strict");
    const d = await post(`${t.url}/qr/decode`, { qrData: data.qr, lang: "km" }, AUTH.qr(tenant.keys.qr));
    expect(d.status).toBe(200);
    expect(ignored(d)).toBe("lang");
    // Nothing unknown: no header.
    expect(ignored(await post(`${t.url}/qr/check`, { md5: data.md5 }, AUTH.qr(tenant.keys.qr)))).toBeNull();
  });

  it("an error answer still names what was ignored", async () => {
    const res = await post(
      `${t.url}/qr/generate`,
      { amount: 0, currency: 840, expiredAfter: 60000, note: "n" },
      AUTH.qr(tenant.keys.qr),
    );
    expect(res.status).toBe(400);
    expect((res.body as { error: { details: { field: string }[] } }).error.details.map((d) => d.field)).toEqual([
      "amount",
    ]);
    expect(ignored(res)).toBe("note");
  });

  it("hosted gateway: unknown fields at any depth of the input (qrData, items) are ignored by path", async () => {
    const orderId = `lg-${Date.now().toString(36)}`;
    const res = await post(
      `${t.url}/gateway/generate-qr`,
      {
        qrData: {
          orderId,
          amount: 1.5,
          currency: "USD",
          items: [{ name: "tea", quantity: 1, price: 1.5, sku: "T-1" }],
          returnUrl: "https://shop.example",
        },
        metaData: { kept: { anything: true } },
        paymentOption: "abapay",
      },
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(res.status).toBe(200);
    expect(ignored(res)).toBe("paymentOption,qrData.items.0.sku,qrData.returnUrl");
    const s = await post(
      `${t.url}/gateway/check-status`,
      { orderId, merchant_id: "x" },
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(s.status).toBe(200);
    expect(ignored(s)).toBe("merchant_id");
  });

  it("gateway-link check ignores unknown fields too", async () => {
    const res = await post(
      `${t.url}/gateway-link/check`,
      { transactionId: "txn_missing", verbose: 1 },
      AUTH.gatewayLink(tenant.keys.gatewayLink),
    );
    expect(res.status).toBe(404);
    expect(ignored(res)).toBe("verbose");
  });

  it("a gateway-link generate naming a target is refused before anything runs (400 naming each such field)", async () => {
    const cases: [Record<string, unknown>, string[]][] = [
      [{ url: "https://evil.example" }, ["url"]],
      [{ link: "https://evil.example", note: "n" }, ["link"]],
      [{ paymentLink: "x", redirect_url: "y" }, ["paymentLink", "redirect_url"]],
      [{ options: { targetURL: "x", size: 1 } }, ["options.targetURL"]],
    ];
    for (const [extra, fields] of cases) {
      const res = await post(
        `${t.url}/gateway-link/generate-qr`,
        { amount: 1000, currency: 116, ...extra },
        AUTH.gatewayLink(tenant.keys.gatewayLink),
      );
      expect(res.status).toBe(400);
      expect((res.body as { error: { code: string; details: { field: string }[] } }).error).toMatchObject({
        code: "BAD_USER_INPUT",
      });
      expect((res.body as { error: { details: { field: string }[] } }).error.details.map((d) => d.field)).toEqual(
        fields,
      );
    }
    const rows = await t.app.core.db.query(`select id from "transaction" where api_key_ref = ?`, [
      tenant.keyIds.gatewayLink,
    ]);
    expect(rows).toHaveLength(0);
  });

  it("a target is refused at any depth and breadth; a body too large to check is refused whole", async () => {
    const send = (extra: string) =>
      fetch(`${t.url}/gateway-link/generate-qr`, {
        method: "POST",
        headers: { "content-type": "application/json", ...AUTH.gatewayLink(tenant.keys.gatewayLink) },
        body: `{"amount":1000,"currency":116,${extra}}`,
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { error?: { details: { field: string }[] } },
      }));
    const nested = (depth: number) => `"options":${"[".repeat(depth)}{"targetURL":"x"}${"]".repeat(depth)}`;
    // Found where it is, with its path.
    const deep = await send(nested(5000));
    expect(deep.status).toBe(400);
    expect(deep.body.error?.details[0].field).toBe(`options.${"0.".repeat(5000)}targetURL`);
    const wideButFew = await send(`"options":{"list":[${Array(5000).fill(0).join(",")}],"x":{"targetURL":"y"}}`);
    expect(wideButFew.status).toBe(400);
    expect(wideButFew.body.error?.details.map((d) => d.field)).toEqual(["options.x.targetURL"]);
    // Beyond what is checked (the scan stopped at 10,000 values and let the rest through with 200): refused.
    for (const extra of [
      nested(12_000),
      `"options":{"list":[${Array(20_000).fill(0).join(",")}],"x":{"targetURL":"y"}}`,
      `"options":{"list":[${Array(20_000).fill(0).join(",")}]}`,
    ]) {
      const res = await send(extra);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "BAD_USER_INPUT", details: [{ field: "options" }] });
    }
    const rows = await t.app.core.db.query(`select id from "transaction" where api_key_ref = ?`, [
      tenant.keyIds.gatewayLink,
    ]);
    expect(rows).toHaveLength(0);
  });

  it("GraphQL stays strict: an unknown input field is BAD_USER_INPUT naming it", async () => {
    const res = await post(
      `${t.url}/graphql`,
      {
        query: `mutation($i: GenerateQrInput!) { generateQr(input: $i) { transactionId } }`,
        variables: { i: { amount: 1, currency: 840, expiredAfter: 60000, url: "x" } },
      },
      AUTH.qr(tenant.keys.qr),
    );
    const errors = (res.body as { errors: { extensions: { code: string; details: { field: string }[] } }[] }).errors;
    expect(errors[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", details: [{ field: "i.url" }] });
    expect(ignored(res)).toBeNull();
  });

  it("names are %-encoded (commas, dots, non-ASCII), sorted, de-duplicated, and capped at 1024 characters with +N", async () => {
    const res = await post(
      `${t.url}/qr/check`,
      { md5: "0".repeat(32), "a,b": 1, "x.y": 2, ស: 3 },
      AUTH.qr(tenant.keys.qr),
    );
    expect(ignored(res)).toBe("%E1%9E%9F,a%2Cb,x%2Ey");
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`field_${String(i).padStart(3, "0")}`, i]));
    const big = await post(`${t.url}/qr/check`, { md5: "0".repeat(32), ...many }, AUTH.qr(tenant.keys.qr));
    const header = ignored(big) as string;
    expect(header.length).toBeLessThanOrEqual(IGNORED_FIELDS_MAX);
    const items = header.split(",");
    const rest = Number(items.pop()?.slice(1));
    expect(items.length + rest).toBe(300);
    expect(items[0]).toBe("field_000");
    expect(ignoredFieldsHeader([["b"], ["a"], ["b"]])).toBe("a,b");
  });

  it("a key holding a lone surrogate half (valid JSON, not UTF-8) is named as U+FFFD, not a 500", async () => {
    const res = await post(
      `${t.url}/qr/check`,
      `{"md5":"${"0".repeat(32)}","x\\ud800":1,"\\udc00y":2}`,
      AUTH.qr(tenant.keys.qr),
    );
    expect(res.status).toBe(404);
    expect(ignored(res)).toBe("%EF%BF%BDy,x%EF%BF%BD");
  });

  it("the target rule: words url/uri/link/href, or a whole name like target, redirect, endpoint", () => {
    for (const f of [
      "url",
      "URL",
      "link",
      "paymentLink",
      "payment_link",
      "redirectUrl",
      "redirect_uri",
      "targetURL",
      "href",
      "links",
      "target",
      "redirect",
      "endpoint",
      "host",
      "domain",
      "callbackUrl",
    ])
      expect([f, namesTarget(f)]).toEqual([f, true]);
    for (const f of ["amount", "meta", "note", "linked", "curl", "targetAmount", "description", "orderId", "hostess"])
      expect([f, namesTarget(f)]).toEqual([f, false]);
  });
});
