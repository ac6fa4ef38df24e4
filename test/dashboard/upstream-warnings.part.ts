import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "puppeteer-core";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp } from "../support/app.js";
import { clickWhenShown, fillForm, launchBrowser, screenshot, textOf } from "../support/browser.js";
import { waitFor } from "../support/wait.js";

// Issue 20 in the dashboard: the network token's expiry warning (from 14 days before) and late payments
// flagged for reconciliation, in real headless Chromium.

function jwt(expiresInMs: number): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const exp = Math.floor((Date.now() + expiresInMs) / 1000);
  return `${part({ alg: "HS256", typ: "JWT" })}.${part({ exp })}.${randomBytes(16).toString("base64url")}`;
}

describe("dashboard: network token warning and late payments", () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let lateId = "";
  beforeAll(async () => {
    [t, browser] = await Promise.all([
      startTestApp({
        NETWORK_API_TOKEN: jwt(5 * 24 * 3600_000),
        QR_LATE_CHECK_INTERVAL_MS: "500",
      }),
      launchBrowser(),
    ]);
    const tenant = await createTenant(t);
    // A late payment: sent before expiry, recorded by the network after the check at expiry said not paid.
    const tx = (
      await post(`${t.url}/qr/generate`, { amount: 9, currency: 840, expiredAfter: 60_000 }, AUTH.qr(tenant.keys.qr))
    ).body as { transactionId: string; data: { md5: string } };
    lateId = tx.transactionId;
    await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5, acknowledgeAfterMs: 120_000 });
    const status = async () =>
      ((await post(`${t.url}/qr/check`, { md5: tx.data.md5 }, AUTH.qr(tenant.keys.qr))).body as { status: string })
        .status;
    t.clock.advance(61_000);
    await waitFor(async () => (await status()) === "EXPIRED", 20_000);
    t.clock.advance(60_000);
    await waitFor(async () => (await status()) === "SUCCESS", 20_000);
    page = await (await browser.createBrowserContext()).newPage();
    page.setDefaultTimeout(10_000);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("shows the token warning above every page and flags the late payment in the transactions list", async () => {
    await page.goto(`${t.url}/dashboard/`);
    await fillForm((await page.waitForSelector("form.signin-form"))!, { token: ADMIN_TOKEN });
    await clickWhenShown(page, "form.signin-form button[type=submit]");
    await page.waitForSelector(".banner.warning:not([hidden])");
    expect(await textOf(page, ".banner.warning")).toMatch(/network API token expires .*in 5 days/);
    // The overview opens first; the list is one link away.
    await clickWhenShown(page, 'nav a[data-section="transactions"]');
    await page.waitForSelector(`tr[data-id="${lateId}"] .badge.late`);
    expect(await textOf(page, `tr[data-id="${lateId}"] .badge.late`)).toBe("late payment");
    await screenshot(page, "late-payment-and-token-warning");
  });
});
