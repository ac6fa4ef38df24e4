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
import { outbox } from "../support/recheck.js";

// Issue 37, item 1, in real headless Chromium: the transaction page's "Recheck with upstream" button asks the network
// again and shows what it said; a payment found after the expiry is recorded as a late SUCCESS. The late watch is
// off (QR_LATE_WATCH_MS=0): only the button can find it.

describe("dashboard: recheck with upstream", () => {
  let t: TestApp;
  let tenant: Tenant;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    [t, browser] = await Promise.all([
      startTestApp({ QR_LATE_WATCH_MS: "0", QR_EXPIRY_GRACE_MS: "0" }),
      launchBrowser(),
    ]);
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

  it("not paid → 'Not paid'; paid after the expiry → 'Paid', a late SUCCESS, and the button is gone", async () => {
    const g = (
      await post(`${t.url}/qr/generate`, { amount: 1.5, currency: 840, expiredAfter: 60_000 }, AUTH.qr(tenant.keys.qr))
    ).body as { transactionId: string; data: { md5: string } };
    await page.evaluate((id) => void (location.hash = `#/transactions/${id}`), g.transactionId);
    await waitForText(page, "pqr-transaction h1", "PENDING");
    await clickWhenShown(page, "pqr-transaction button[data-recheck]");
    await waitForText(page, 'pqr-transaction .recheck-result[data-outcome="NOT_PAID"]', "Not paid");
    expect(await textOf(page, "pqr-transaction .recheck-result")).toMatch(/no payment of this QR.*Nothing recorded/);
    await waitForText(page, "pqr-transaction h1", "PENDING");

    // The QR expires unpaid; the payer pays afterwards; the service's late watch is off.
    t.clock.advance(61_000);
    await waitForText(page, "pqr-transaction h1", "EXPIRED");
    expect((await post(`${t.url}/sim/network/pay`, { md5: g.data.md5 })).status).toBe(200);
    t.clock.advance(10_000);
    await clickWhenShown(page, "pqr-transaction button[data-recheck]");
    await waitForText(page, 'pqr-transaction .recheck-result[data-outcome="PAID"]', "Paid");
    expect(await textOf(page, "pqr-transaction .recheck-result")).toMatch(/recorded as a late payment.*Recorded\./);
    await waitForText(page, "pqr-transaction h1", "SUCCESS");
    await waitForText(page, 'pqr-transaction .timeline li[data-type="payment.completed"]', "payment.completed");
    expect(await page.$eval("pqr-transaction button[data-recheck]", (b) => (b as HTMLElement).hidden)).toBe(true);
    await screenshot(page, "recheck-late-payment");
    expect((await outbox(t, g.transactionId)).at(-1)).toEqual({
      type: "payment.completed",
      status: "SUCCESS",
      late: true,
    });
  }, 60_000);
});
