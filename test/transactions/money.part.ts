import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import * as money from "../../src/money/money.js";
import { AUTH, createTenant, post, startTestApp, type Tenant, type TestApp } from "../support/app.js";
import { waitFor } from "../support/wait.js";

const { moneyText, formatMoney } = money;

describe("the one money rule: text with the currency's decimals (KHR 0, USD 2)", () => {
  it("writes every amount with its currency's decimals, never rounding money", () => {
    expect(moneyText("4000.00", "KHR")).toBe("4000");
    expect(moneyText(4000, "KHR")).toBe("4000");
    expect(moneyText("1.5", "USD")).toBe("1.50");
    expect(moneyText(1.5, "USD")).toBe("1.50");
    expect(moneyText("10", "USD")).toBe("10.00");
    expect(moneyText("0.05", "USD")).toBe("0.05");
    // A fraction the currency does not use is kept when it is not zero: nothing is lost.
    expect(moneyText("4000.50", "KHR")).toBe("4000.50");
    expect(moneyText("1.505", "USD")).toBe("1.505");
  });

  it("is shown to people the same way wherever a person reads an amount", () => {
    expect(formatMoney("4000", "KHR")).toBe("4,000 KHR");
    expect(formatMoney("1234.5", "USD")).toBe("1,234.50 USD");
    expect(formatMoney("0.05", "USD")).toBe("0.05 USD");
    expect(formatMoney("1234567", "KHR")).toBe("1,234,567 KHR");
  });

  it("draws each currency with its sign (the KHQR card's centre mark), and knows a currency by its number", () => {
    expect(money.currencySymbol("KHR")).toBe("៛");
    expect(money.currencySymbol("USD")).toBe("$");
    expect(money.currencySymbol("EUR")).toBe("EUR");
    expect(money.currencyCode(840)).toBe("USD");
    expect(money.currencyCode(116)).toBe("KHR");
  });
});

interface Hook {
  type: string;
  data: { transaction: { transactionId: string; amount: string; payment?: { amount: string } } };
}

describe("amounts outside the REST contract's fixed fields follow the rule; the contract's own fields keep their shape", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({ QR_MONITOR_INTERVAL_MS: "250" });
    tenant = await createTenant(t, { gatewayMerchantId: "money_gw", gatewaySecret: "money-secret-0123456789" });
    await post(`${t.url}/sim/gateway/merchants`, { merchantId: "money_gw", apiKey: "money-secret-0123456789" });
    await t.admin(`mutation($input: WebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret } }`, {
      input: { apiKeyId: tenant.keyIds.qr, url: `${t.url}/sim/inbox` },
    });
  }, 60_000);
  afterAll(async () => t?.stop());

  const inbox = async (id: string): Promise<Hook[]> => {
    const entries = (await (await fetch(`${t.url}/sim/inbox`)).json()) as { body: string }[];
    return entries.map((e) => JSON.parse(e.body) as Hook).filter((h) => h.data.transaction.transactionId === id);
  };

  it.each([
    [4000, 116, "4000", "KHR"],
    [1.5, 840, "1.50", "USD"],
  ])(
    "%s (%s): webhooks, the payer's payment, GraphQL and the checkout view say %s; REST echoes the number",
    async (amount, currency, text, code) => {
      const g = await post(`${t.url}/qr/generate`, { amount, currency, expiredAfter: 120000 }, AUTH.qr(tenant.keys.qr));
      const body = g.body as { transactionId: string; clientToken: string; requestData: { amount: unknown } };
      expect(body.requestData.amount).toBe(amount); // the contract's echo: the number sent
      const md5 = (g.body as { data: { md5: string } }).data.md5;
      await post(`${t.url}/sim/network/pay`, { md5 });
      const hooks = await waitFor(async () => {
        const h = await inbox(body.transactionId);
        return h.some((x) => x.type === "payment.completed") ? h : null;
      }, 15_000);
      expect(hooks.map((h) => h.data.transaction.amount)).toEqual([text, text]);
      expect(hooks.find((h) => h.type === "payment.completed")?.data.transaction.payment?.amount).toBe(text);
      const gql = await post(
        `${t.url}/graphql`,
        {
          query: `query($id: ID!) { transaction(id: $id) { amount currency } }`,
          variables: { id: body.transactionId },
        },
        AUTH.qr(tenant.keys.qr),
      );
      expect(gql.body).toEqual({ data: { transaction: { amount: text, currency: code } } });
      const view = await fetch(`${t.url}/checkout/view/${body.transactionId}`, {
        headers: { authorization: `Bearer ${body.clientToken}` },
      });
      expect(((await view.json()) as { amount: string }).amount).toBe(text);
    },
  );

  it("the checkout page and the dashboard load the server's own Money module (one source, served twice)", async () => {
    const checkout = await fetch(`${t.url}/checkout/money.js`);
    expect(checkout.status).toBe(200);
    expect(checkout.headers.get("content-type")).toMatch(/javascript/);
    const text = await checkout.text();
    expect(await (await fetch(`${t.url}/dashboard/js/money.js`)).text()).toBe(text);
    // Loaded as the browser loads it: a plain ES module with no import, whose every function answers as the server's.
    const served = (await import(
      `data:text/javascript;base64,${Buffer.from(text).toString("base64")}`
    )) as typeof money;
    expect(Object.keys(served).sort()).toEqual(Object.keys(money).sort());
    for (const [amount, currency] of [
      ["4000", "KHR"],
      ["1234.5", "USD"],
      ["4000.50", "KHR"],
      ["0.05", "USD"],
    ]) {
      expect(served.formatMoney(amount, currency)).toBe(formatMoney(amount, currency));
      expect(served.moneyText(amount, currency)).toBe(moneyText(amount, currency));
    }
    expect(served.compareDecimals("100.005", "100.00")).toBe(1);
  });

  it("the hosted gateway's check-status keeps the contract's two decimals, KHR too", async () => {
    const orderId = `money-${Date.now() % 1e9}`;
    const g = await post(
      `${t.url}/gateway/generate-qr`,
      { qrData: { orderId, amount: 4000, currency: "KHR" } },
      AUTH.gateway(tenant.keys.gateway),
    );
    expect((g.body as { amount: unknown }).amount).toBe(4000);
    const s = await post(`${t.url}/gateway/check-status`, { orderId }, AUTH.gateway(tenant.keys.gateway));
    expect((s.body as { amount: unknown }).amount).toBe("4000.00");
  });
});
