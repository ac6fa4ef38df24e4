import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import type { Browser, Page } from "puppeteer-core";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import {
  clickWhenShown,
  fillForm,
  launchBrowser,
  screenshot,
  textOf,
  VIEWPORTS,
  waitForText,
} from "../support/browser.js";
import { waitFor } from "../support/wait.js";

// Issue 36, item 2, in real headless Chromium: a held payment (money arrived that is not what was asked) is flagged
// in the live transactions table and on its page, where an operator accepts it as paid; who and when are shown.

describe("dashboard: a held payment is flagged and resolved", () => {
  let t: TestApp;
  let tenant: Tenant;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
    tenant = await createTenant(t);
    page = await (await browser.createBrowserContext()).newPage();
    page.setDefaultTimeout(15_000);
    await page.setViewport(VIEWPORTS.desktop);
    await page.goto(`${t.url}/dashboard/`);
    await fillForm((await page.waitForSelector("form.signin-form"))!, { token: ADMIN_TOKEN });
    await clickWhenShown(page, "form.signin-form button[type=submit]");
    await page.waitForSelector("nav a[aria-current=page]");
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("the live table flags it, the held filter lists it, its page accepts it as paid", async () => {
    await page.evaluate(() => void (location.hash = "#/transactions"));
    await page.waitForSelector("pqr-transactions .live-state[data-state=live]");
    const g = (
      await post(`${t.url}/qr/generate`, { amount: 1.5, currency: 840, expiredAfter: 600_000 }, AUTH.qr(tenant.keys.qr))
    ).body as { transactionId: string; data: { md5: string } };
    const row = `pqr-transactions tr[data-id="${g.transactionId}"]`;
    await page.waitForSelector(row);
    expect(await page.$(`${row} .badge.held`)).toBeNull();
    await post(`${t.url}/sim/network/pay`, { md5: g.data.md5, amount: "1.00" });
    // Live: the row gets its flag without a reload.
    await waitForText(page, `${row} .badge.held`, "held: not what was asked");
    expect(await page.$eval(row, (tr) => tr.getAttribute("data-status"))).toBe("PENDING");
    await page.select('form[aria-label="Filter transactions"] [name="status"]', "HELD");
    await waitFor(async () => (await page.$$("pqr-transactions tbody tr[data-id]")).length === 1, 10_000);
    await screenshot(page, "held-payment-list");

    await clickWhenShown(page, `${row} a`);
    await waitForText(page, "pqr-transaction .held-payment h2", "Held: not what was asked");
    const held = await textOf(page, "pqr-transaction .held-payment");
    expect(held).toContain("amount");
    expect(held).toMatch(/Asked\s*\$?1\.50/);
    expect(held).toMatch(/Arrived\s*\$?1\.00/);
    expect(held).toContain("network check_transaction_by_md5");
    await page.type("#held-note", "short by 0.50; customer topped up in cash");
    // A second press confirms; the first only arms the button.
    await clickWhenShown(page, 'pqr-transaction button[data-resolve="accept"]');
    await waitForText(page, 'pqr-transaction button[data-resolve="accept"]', "Confirm: accept as paid");
    await clickWhenShown(page, 'pqr-transaction button[data-resolve="accept"]');
    await waitForText(page, "pqr-transaction .held-payment", "accepted as paid by dashboard");
    expect(await textOf(page, "pqr-transaction .held-payment")).toContain("customer topped up in cash");
    expect(await page.$('pqr-transaction button[data-resolve="accept"]')).toBeNull();
    await waitForText(page, "pqr-transaction h1", "SUCCESS");
    await screenshot(page, "held-payment-resolved");
    const { transaction } = await t.admin<{
      transaction: { status: string; mismatch: { resolution: { by: string } } };
    }>(`query($id: ID!) { transaction(id: $id) { status mismatch { resolution { by } } } }`, { id: g.transactionId });
    expect(transaction).toEqual({ status: "SUCCESS", mismatch: { resolution: { by: "dashboard" } } });
  });
});
