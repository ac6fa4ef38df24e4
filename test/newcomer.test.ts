import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createServer, type Server } from "node:http";
import express from "express";
import type { Browser } from "puppeteer-core";
import { ROUTES } from "../src/app.js";
import { verifyWebhook } from "../src/index.js";
import { EVENT_TYPES } from "../src/transactions/transaction-event.entity.js";
import { AUTH, post } from "./support/app.js";
import { launchBrowser, screenshot, VIEWPORTS } from "./support/browser.js";
import { closeNow, listenLoopback } from "./support/listen.js";
import { AdminCli, startDemoService, type DemoService } from "./support/demo-service.js";
import { waitFor } from "./support/wait.js";

/**
 * The three things a newcomer does from the README alone, on `npm start` with nothing configured (embedded
 * database, demo tenant, simulators, default settings): read the REST contract at /docs, watch a fresh QR's
 * checkoutUrl turn paid, and receive a signed webhook on a local receiver through `listen`.
 */
describe("newcomer paths on the zero-setup demo", () => {
  let svc: DemoService;
  let browser: Browser;
  beforeAll(async () => {
    svc = await startDemoService("newcomer");
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.dispose();
  });

  it("reads the REST contract at /docs: every endpoint and webhook, nothing fetched from outside, no error", async () => {
    const page = await browser.newPage();
    await page.setViewport(VIEWPORTS.desktop);
    const outside: string[] = [];
    const problems: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(svc.url) && !r.url().startsWith("data:")) outside.push(r.url());
    });
    page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
    page.on("pageerror", (e) => problems.push(String(e)));
    page.on("response", (r) => void (r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`)));
    await page.goto(`${svc.url}/docs`, { waitUntil: "networkidle0" });
    await page.waitForSelector(".opblock-summary-path", { timeout: 20_000 });
    const paths = await page.$$eval(".opblock-summary-path", (els) => els.map((e) => e.getAttribute("data-path")));
    expect([...paths].sort()).toEqual([...ROUTES.map((r) => r.path), ...EVENT_TYPES].sort());
    await screenshot(page, "openapi-docs");
    expect(outside).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("opens the checkoutUrl of a fresh demo QR and watches it turn paid after POST /sim/network/pay", async () => {
    const g = await post(
      `${svc.url}/qr/generate`,
      { amount: 1.5, currency: 840, expiredAfter: 120000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    const { checkoutUrl, data } = g.body as { checkoutUrl: string; data: { md5: string } };
    expect(checkoutUrl).toMatch(new RegExp(`^${svc.url}/pay/txn_`));
    const page = await browser.newPage();
    await page.setViewport(VIEWPORTS.phone);
    await page.goto(checkoutUrl);
    await page.waitForSelector(`payment-qr-checkout[data-connection="live"]`, { timeout: 15_000 });
    await page.waitForFunction(() => document.querySelector(".pqc-merchant")?.textContent === "Demo Coffee");
    expect(await page.$eval(".pqc-status", (e) => e.textContent)).toBe("Waiting for payment");
    await post(`${svc.url}/sim/network/pay`, { md5: data.md5 });
    // The demo checks the network every 3 s (QR_MONITOR_INTERVAL_MS); the page shows it as soon as it is recorded.
    await page.waitForSelector(`payment-qr-checkout[data-status="SUCCESS"]`, { timeout: 15_000 });
    expect(await page.$eval(".pqc-status", (e) => e.textContent)).toBe("Paid");
    await page.close();
  }, 60_000);

  it("the demo's payment link is a PayWay link, driven as production drives one: QR, deeplink on a phone, approve → Paid", async () => {
    const g = await post(
      `${svc.url}/gateway-link/generate-qr`,
      { amount: 5000, currency: 116 },
      AUTH.gatewayLink(svc.demo.keys.gatewayLink),
    );
    expect(g.status).toBe(200);
    const { checkoutUrl, data, deeplink } = g.body as {
      checkoutUrl: string;
      deeplink: string;
      data: { clientId: string; qr: string };
    };
    expect(svc.demo.simulators.link).toBe(`${svc.url}/sim/payway/ABAPAYDEMO01`);
    expect(deeplink).toBe(`abamobilebank://ababank.com?type=payway&qrcode=${encodeURIComponent(data.qr)}`);
    const twinClient = (await (await fetch(`${svc.url}/sim/link/clients/${data.clientId}`)).json()) as { qr: string };
    expect(twinClient.qr).toBe(data.qr);
    const page = await browser.newPage();
    await page.setViewport(VIEWPORTS.phone);
    await page.goto(checkoutUrl);
    await page.waitForSelector(`payment-qr-checkout[data-connection="live"]`, { timeout: 15_000 });
    await page.waitForFunction(() => document.querySelector(".pqc-deeplink")?.getAttribute("href"), {
      timeout: 10_000,
    });
    expect(await page.$eval(".pqc-deeplink", (e) => e.getAttribute("href"))).toBe(deeplink);
    expect((await post(`${svc.url}/sim/link/approve`, { clientId: data.clientId })).status).toBe(200);
    // The worker polls the page's API every 3 s: processing-payment, then approved.
    await page.waitForSelector(`payment-qr-checkout[data-status="SUCCESS"]`, { timeout: 20_000 });
    expect(await page.$eval(".pqc-status", (e) => e.textContent)).toBe("Paid");
    await page.close();
  }, 60_000);

  it("sees a signed webhook arrive at a local receiver through `npm run admin -- listen`", async () => {
    const arrived: { ok: boolean; type: string; transactionId: string }[] = [];
    const app = express();
    app.post("/hooks", express.raw({ type: "application/json" }), (req, res) => {
      const ok = verifyWebhook(req.body as Buffer, req.headers, [svc.demo.webhook.secret]);
      const event = JSON.parse((req.body as Buffer).toString("utf8"));
      arrived.push({ ok, type: event.type, transactionId: event.data.transaction.transactionId });
      res.sendStatus(ok ? 204 : 400);
    });
    const server: Server = createServer(app);
    const port = await listenLoopback(server, 0);
    const cli = new AdminCli(["listen", "--forward-to", `http://127.0.0.1:${port}/hooks`], {
      DATA_DIR: svc.service.dataDir,
    });
    try {
      await cli.line(/^Ready/);
      const g = await post(
        `${svc.url}/qr/generate`,
        { amount: 2, currency: 840, expiredAfter: 120000 },
        AUTH.qr(svc.demo.keys.qr),
      );
      const { transactionId, data } = g.body as { transactionId: string; data: { md5: string } };
      await post(`${svc.url}/sim/network/pay`, { md5: data.md5 });
      await cli.line(new RegExp(`payment\\.completed\\s+${transactionId}\\s+SUCCESS\\s+→ 204`), 20_000);
      await waitFor(async () =>
        arrived.some((a) => a.transactionId === transactionId && a.type === "payment.completed"),
      );
      expect(arrived.filter((a) => a.transactionId === transactionId).every((a) => a.ok)).toBe(true);
    } finally {
      await cli.stop();
      await closeNow(server);
    }
  }, 60_000);
});
