import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import type { Browser } from "puppeteer-core";
import { MODULES } from "../../src/app.js";
import { withDemo } from "../../src/demo/index.js";
import { AUTH, post, startTestApp, type TestApp } from "../support/app.js";
import { launchBrowser } from "../support/browser.js";
import { CHECKOUT_ELEMENT, isShown, openCheckout, shownText, watchPage } from "../support/checkout-page.js";

/**
 * The checkout page asks the service only what every transaction has (its status) and takes what the areas add
 * from the checkout view: in an app whose module list has no gateway-link area (so no `receiptUrl` field), it still
 * follows a payment live to Paid.
 */
describe("the checkout page in an app without the gateway-link area", () => {
  let t: TestApp;
  let qrKey: string;
  let browser: Browser;

  beforeAll(async () => {
    const modules = MODULES.filter((m) => m.area?.key.kind !== "gateway_link");
    t = await startTestApp({ QR_MONITOR_INTERVAL_MS: "250" }, { modules: await withDemo(modules) });
    // A merchant and its generic-QR key (createTenant would ask for a payment-link configuration, absent here).
    const { createMerchant: m } = await t.admin<{ createMerchant: { id: string } }>(
      `mutation($input: MerchantInput!) { createMerchant(input: $input) { id } }`,
      {
        input: {
          name: "Two-Area Shop",
          accountType: "merchant",
          bakongAccountId: "test_shop@devb",
          merchantName: "Two-Area Shop",
          merchantCity: "Phnom Penh",
          merchantId: "TS001",
          acquiringBank: "Dev Bank",
          defaultCurrency: 116,
        },
      },
    );
    const { createApiKey } = await t.admin<{ createApiKey: { apiKey: string } }>(
      `mutation($input: ApiKeyInput!) { createApiKey(input: $input) { apiKey } }`,
      { input: { merchantId: m.id, kind: "qr" } },
    );
    qrKey = createApiKey.apiKey;
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("turns Paid live (its subscription is one this schema answers), with no receipt link", async () => {
    const res = await post(
      `${t.url}/qr/generate`,
      { amount: 4000, currency: 116, expiredAfter: 120_000 },
      AUTH.qr(qrKey),
    );
    const g = res.body as {
      checkoutUrl: string;
      data: { md5: string };
    };
    expect(g.checkoutUrl).toMatch(/\/pay\//);
    const page = watchPage(await browser.newPage());
    await openCheckout(page, g.checkoutUrl);
    expect(await shownText(page, ".pqc-status")).toBe("Waiting for payment");
    await page.waitForSelector(`${CHECKOUT_ELEMENT}[data-connection="live"]`, { timeout: 10_000 });
    expect((await post(`${t.url}/sim/network/pay`, { md5: g.data.md5 })).status).toBe(200);
    await page.waitForSelector(`${CHECKOUT_ELEMENT}[data-status="SUCCESS"]`, { timeout: 10_000 });
    expect(await shownText(page, ".pqc-status")).toBe("Paid");
    expect(await page.$eval(`${CHECKOUT_ELEMENT}`, (e) => (e as HTMLElement).dataset.lastEvent)).toBe(
      "payment.completed",
    );
    expect(await isShown(page, ".pqc-receipt")).toBe(false);
    expect(page.problems).toEqual([]);
    await page.close();
  });
});
