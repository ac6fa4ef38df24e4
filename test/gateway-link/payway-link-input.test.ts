import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";

// What a PayWay link asks beyond an amount, through the service (REST and GraphQL), in real Chromium against the
// service's own PayWay twin: its bounds, a fixed amount and fields it requires are the caller's to meet — 400 naming
// what, nothing stored — and the request's optional payer fields fill the page's.

interface LinkTx {
  transactionId: string;
  requestData: Record<string, unknown>;
  data: { qr: string; clientId: string };
}
interface ErrorBody {
  error: { code: string; message: string; details: { field: string; message: string }[] };
}

describe("a PayWay link that asks more than an amount", () => {
  let t: TestApp;
  let tenant: Tenant;
  const gen = (body: Record<string, unknown>) =>
    post(`${t.url}/gateway-link/generate-qr`, { currency: 840, ...body }, AUTH.gatewayLink(tenant.keys.gatewayLink));
  const fault = (body: Record<string, unknown>) => post(`${t.url}/sim/payway/fault`, body);
  const rows = async () =>
    (
      await t.app.core.db.query<{ n: number }>(`select count(*)::int as n from "transaction" where api_key_ref = ?`, [
        tenant.keyIds.gatewayLink,
      ])
    )[0]?.n;
  const twinClient = async (clientId: string) =>
    (await (await fetch(`${t.url}/sim/link/clients/${clientId}`)).json()) as { additionalFields: object };

  beforeAll(async () => {
    // A GraphQL operation's time budget shorter than a page that takes its time to hydrate (the default is 10 s).
    t = await startTestApp({ GRAPHQL_TIME_BUDGET_MS: "1000" });
    const link = (await post(`${t.url}/sim/payway/links`, { currency: "USD", minAmount: "0.50", maxAmount: "100" }))
      .body as { code: string };
    tenant = await createTenant(t, {
      linkUrl: `${t.url}/sim/payway/${link.code}`,
      linkProtocol: "payway",
      linkCurrency: 840,
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("an amount above the link's maximum → 400 naming it (as exact decimals), nothing stored", async () => {
    const before = await rows();
    const res = await gen({ amount: 100.01 });
    expect(res.status).toBe(400);
    expect((res.body as ErrorBody).error).toMatchObject({
      code: "BAD_USER_INPUT",
      details: [{ field: "amount", message: "must be at most 100.00, the payment link's maximum" }],
    });
    expect(await rows()).toBe(before);
    expect((await gen({ amount: 100 })).status).toBe(200);
  }, 60_000);

  it("a fixed amount: the same → a QR; another → 400 naming the link's amount, nothing stored", async () => {
    await fault({ mode: "fixed-amount", fixedAmount: "12.50" });
    try {
      const ok = await gen({ amount: 12.5 });
      expect(ok.status).toBe(200);
      expect((await twinClient((ok.body as LinkTx).data.clientId)).additionalFields).toEqual({ amount: "12.50" });
      const before = await rows();
      const res = await gen({ amount: 10 });
      expect(res.status).toBe(400);
      expect((res.body as ErrorBody).error.details).toEqual([
        { field: "amount", message: "must be 12.50, the payment link's fixed amount" },
      ]);
      expect(await rows()).toBe(before);
    } finally {
      await fault({ mode: "ok" });
    }
  }, 60_000);

  it("required fields: given → the page's fields filled, the values neither echoed nor stored; missing → 400 naming each, nothing stored", async () => {
    await fault({ mode: "required-fields", requiredFields: ["remark", "full_name", "email", "phone"] });
    try {
      const before = await rows();
      const missing = await gen({ amount: 5, remark: "Table 4", payerPhone: "+85512345678" });
      expect(missing.status).toBe(400);
      expect((missing.body as ErrorBody).error.details).toEqual([
        { field: "payerName", message: "is required by the payment link" },
        { field: "payerEmail", message: "is required by the payment link" },
      ]);
      expect(await rows()).toBe(before);

      const payer = {
        remark: "Table 4",
        payerName: "Sok Dara",
        payerEmail: "dara@example.com",
        payerPhone: "012345678",
      };
      const res = await gen({ amount: 5, ...payer });
      expect(res.status).toBe(200);
      const b = res.body as LinkTx;
      expect((await twinClient(b.data.clientId)).additionalFields).toEqual({
        amount: "5.00",
        remark: "Table 4",
        full_name: "Sok Dara",
        email: "dara@example.com",
        phone: "012345678",
      });
      expect(JSON.stringify(res.body)).not.toMatch(/Sok Dara|dara@example|012345678|Table 4/);
      const tx = await t.app.core.store.get(b.transactionId);
      expect(JSON.stringify(tx)).not.toMatch(/Sok Dara|dara@example|012345678|Table 4/);
      expect(tx?.request).toMatchObject({ payerFields: ["remark", "payerName", "payerEmail", "payerPhone"] });
    } finally {
      await fault({ mode: "ok" });
    }
  }, 60_000);

  it("the payer fields' shapes are checked before any page is opened", async () => {
    const res = await gen({
      amount: 5,
      payerEmail: "not-an-address",
      payerPhone: "012 345",
      payerName: "x".repeat(101),
    });
    expect(res.status).toBe(400);
    expect((res.body as ErrorBody).error.details).toEqual([
      { field: "payerName", message: "must be at most 100 characters" },
      { field: "payerEmail", message: "must be an e-mail address (name@domain.tld)" },
      {
        field: "payerPhone",
        message: "must be 8 to 15 digits, optionally after one '+', without spaces or punctuation",
      },
    ]);
  });

  it("GraphQL: the same fields; a page slower than the operation's time budget still answers the QR it made", async () => {
    // Continue disabled until the page hydrates, 1.5 s after it loads; an optional phone field first.
    await fault({ mode: "hydration", hydrationMs: 1500 });
    try {
      const started = Date.now();
      const res = await post(
        `${t.url}/graphql`,
        {
          query: `mutation($i: GenerateGatewayLinkQrInput!) { generateGatewayLinkQr(input: $i) {
            transactionId status requestData { amount currency } data { qr clientId } } }`,
          variables: { i: { amount: 3, currency: 840, payerPhone: "012345678" } },
        },
        AUTH.gatewayLink(tenant.keys.gatewayLink),
      );
      const body = res.body as { data?: { generateGatewayLinkQr: LinkTx }; errors?: unknown[] };
      expect(body.errors).toBeUndefined();
      const made = body.data?.generateGatewayLinkQr as LinkTx;
      expect(made.data.qr).toMatch(/^000201/);
      expect((await twinClient(made.data.clientId)).additionalFields).toEqual({ amount: "3.00", phone: "012345678" });
      expect(Date.now() - started).toBeGreaterThan(1500);
    } finally {
      await fault({ mode: "ok" });
    }
  }, 60_000);
});
