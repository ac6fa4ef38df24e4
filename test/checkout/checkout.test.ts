import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import type { Browser, Page } from "puppeteer-core";
import { AUTH, createTenant, post, startTestApp, type Tenant, type TestApp } from "../support/app.js";
import { launchBrowser, screenshot, VIEWPORTS } from "../support/browser.js";
import {
  CHECKOUT_ELEMENT,
  isShown,
  openCheckout,
  shownText,
  watchPage,
  type WatchedPage,
} from "../support/checkout-page.js";
import { closeNow, listenLoopback } from "../support/listen.js";
import { waitFor } from "../support/wait.js";

interface Generated {
  transactionId: string;
  checkoutUrl: string;
  clientToken: string;
  orderId?: string;
  deeplink?: string;
  data?: { md5?: string; clientId?: string };
}

const ELEMENT = CHECKOUT_ELEMENT;

/**
 * The hosted checkout page (checkoutUrl) and the <payment-qr-checkout> element it is built on, in real headless
 * Chromium against the real service: the three areas turn paid live, the countdown ends in EXPIRED, a socket the
 * server drops mid-payment comes back and replays what it missed.
 */
describe("hosted checkout page", () => {
  let t: TestApp;
  let tenant: Tenant;
  let browser: Browser;
  const upgraded: Socket[] = [];
  const measured: string[] = [];

  beforeAll(async () => {
    // The monitors poll every 250 ms here; what is measured is the page: event → screen.
    t = await startTestApp({ QR_MONITOR_INTERVAL_MS: "250", GATEWAY_MONITOR_INTERVAL_MS: "250" });
    tenant = await createTenant(t, { name: "Checkout Shop" });
    await post(`${t.url}/sim/gateway/merchants`, {
      merchantId: `m_${tenant.merchantId.slice(-8)}`,
      apiKey: "sim-secret-0123456789",
    });
    t.app.server.on("upgrade", (_req, socket: Socket) => upgraded.push(socket));
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    if (measured.length) console.log(`payment → Paid on the page (ms): ${measured.join("; ")}`);
    await browser?.close();
    await t?.stop();
  });

  const generate = {
    qr: async (expiredAfter = 120_000) =>
      (await post(`${t.url}/qr/generate`, { amount: 1.5, currency: 840, expiredAfter }, AUTH.qr(tenant.keys.qr)))
        .body as Generated,
    gateway: async () =>
      (
        await post(
          `${t.url}/gateway/generate-qr`,
          { qrData: { orderId: `CO${Date.now() % 1e10}`, amount: 2.25, currency: "USD" } },
          AUTH.gateway(tenant.keys.gateway),
        )
      ).body as Generated,
    link: async () =>
      (
        await post(
          `${t.url}/gateway-link/generate-qr`,
          { amount: 5000, currency: 116 },
          AUTH.gatewayLink(tenant.keys.gatewayLink),
        )
      ).body as Generated,
  };

  async function open(url: string, viewport: keyof typeof VIEWPORTS = "phone"): Promise<WatchedPage> {
    const page = watchPage(await browser.newPage());
    await page.setViewport(VIEWPORTS[viewport]);
    await openCheckout(page, url);
    return page;
  }

  /**
   * Milliseconds from the payment call to the page showing Paid (`total`), and from the service committing the
   * payment (its event on the bus) to the page showing it (`page`).
   */
  async function paidWithin(page: Page, transactionId: string, pay: () => Promise<unknown>) {
    let committed = 0;
    const off = t.app.core.bus.subscribe((e) => {
      if (e.transactionId === transactionId && e.status === "SUCCESS" && committed === 0) committed = Date.now();
    });
    const started = Date.now();
    try {
      await pay();
      await page.waitForSelector(`${ELEMENT}[data-status="SUCCESS"]`, { timeout: 10_000 });
    } finally {
      off();
    }
    const shown = Date.now();
    expect(await shownText(page, ".pqc-status")).toBe("Paid");
    expect(committed).toBeGreaterThan(0);
    const ms = { total: shown - started, page: shown - committed };
    measured.push(`${transactionId.slice(0, 8)}… ${JSON.stringify(ms)}`);
    return ms;
  }

  it("generic QR: merchant, amount, QR and countdown at phone width; Paid on the page within 1 s of the payment being recorded", async () => {
    const g = await generate.qr();
    expect(g.checkoutUrl).toBe(`${t.url}/pay/${g.transactionId}#token=${encodeURIComponent(g.clientToken)}`);
    const page = await open(g.checkoutUrl);
    expect(await shownText(page, ".pqc-merchant")).toBe(tenant.name);
    expect(await shownText(page, ".pqc-amount")).toBe("1.50 USD");
    expect(await page.$eval(".pqc-qr", (e) => (e as HTMLImageElement).src)).toMatch(/^data:image\/png;base64,/);
    expect(await page.$eval(".pqc-qr", (e) => (e as HTMLImageElement).naturalWidth)).toBeGreaterThan(100);
    expect(await shownText(page, ".pqc-countdown")).toMatch(/^Expires in 1:5\d$|^Expires in 2:00$/);
    expect(await shownText(page, ".pqc-status")).toBe("Waiting for payment");
    expect(await isShown(page, ".pqc-deeplink")).toBe(false);
    // Readable at 390 px: nothing wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, "checkout-qr-pending-phone");
    const ms = await paidWithin(page, g.transactionId, () => post(`${t.url}/sim/network/pay`, { md5: g.data?.md5 }));
    expect(ms.page).toBeLessThan(1000);
    expect(ms.total).toBeLessThan(2000);
    expect(await isShown(page, ".pqc-qr")).toBe(false);
    expect(await isShown(page, ".pqc-receipt")).toBe(false);
    expect(await shownText(page, ".pqc-countdown")).toBe("");
    await screenshot(page, "checkout-qr-paid-phone");
    expect(page.problems).toEqual([]);
    await page.close();
  });

  it("hosted gateway: the banking app's button on a phone (not on a desktop); Paid within 1 s of the approval being recorded", async () => {
    const g = await generate.gateway();
    const desktop = await open(g.checkoutUrl, "desktop");
    expect(await isShown(desktop, ".pqc-deeplink")).toBe(false);
    await desktop.close();
    const page = await open(g.checkoutUrl, "phone");
    expect(await isShown(page, ".pqc-deeplink")).toBe(true);
    expect(await page.$eval(".pqc-deeplink", (e) => (e as HTMLAnchorElement).href)).toBe(g.deeplink);
    expect(await shownText(page, ".pqc-amount")).toBe("2.25 USD");
    await screenshot(page, "checkout-gateway-phone");
    const ms = await paidWithin(page, g.transactionId, () =>
      post(`${t.url}/sim/gateway/pay`, { tranId: g.orderId, outcome: "APPROVED" }),
    );
    expect(ms.page).toBeLessThan(1000);
    expect(ms.total).toBeLessThan(2000);
    expect(await isShown(page, ".pqc-deeplink")).toBe(false);
    await page.close();
  });

  it("gateway link: scanned is shown; Paid within 1 s of the approval being recorded, with the receipt link", async () => {
    const g = await generate.link();
    const page = await open(g.checkoutUrl);
    expect(await shownText(page, ".pqc-amount")).toBe("5,000 KHR");
    await post(`${t.url}/sim/link/scan`, { clientId: g.data?.clientId });
    await page.waitForFunction((s) => document.querySelector(s)?.textContent?.startsWith("Scanned"), {}, ".pqc-status");
    const ms = await paidWithin(page, g.transactionId, () =>
      post(`${t.url}/sim/link/approve`, { clientId: g.data?.clientId }),
    );
    // The worker learns of the approval from its status polls (every 500 ms here; PayWay answers processing-payment
    // first), so end to end is those polls; from the service's commit the page takes < 1 s.
    expect(ms.page).toBeLessThan(1000);
    expect(ms.total).toBeLessThan(2500);
    expect(await isShown(page, ".pqc-receipt")).toBe(true);
    expect(await page.$eval(".pqc-receipt", (e) => (e as HTMLAnchorElement).href)).toMatch(
      /\/api\/payment-gateway\/v1\/payments\/download-receipt\?file=/,
    );
    await screenshot(page, "checkout-link-paid-phone");
    await page.close();
  }, 60_000);

  it("a socket the server drops mid-payment comes back and replays what it missed (lastEventId): Paid with receipt", async () => {
    const g = await generate.link();
    const page = await open(g.checkoutUrl);
    await post(`${t.url}/sim/link/scan`, { clientId: g.data?.clientId });
    await page.waitForSelector(`${ELEMENT}[data-last-event="payment.scanned"]`, { timeout: 15_000 });
    // The server side drops every websocket, and the payment is approved while the page is disconnected.
    for (const s of upgraded.splice(0)) s.destroy();
    await post(`${t.url}/sim/link/approve`, { clientId: g.data?.clientId });
    await page.waitForSelector(`${ELEMENT}[data-status="SUCCESS"]`, { timeout: 15_000 });
    // The final state came as the replayed event, not from a fresh read of the view.
    expect(await page.$eval(ELEMENT, (e) => (e as HTMLElement).dataset.lastEvent)).toBe("payment.completed");
    expect(await shownText(page, ".pqc-status")).toBe("Paid");
    expect(await isShown(page, ".pqc-receipt")).toBe(true);
    await page.close();
  }, 60_000);

  it("the countdown runs out and the page shows EXPIRED", async () => {
    const g = await generate.qr(10_000);
    const page = await open(g.checkoutUrl);
    expect(Number(await page.$eval(".pqc-countdown", (e) => (e as HTMLElement).dataset.seconds))).toBeLessThanOrEqual(
      10,
    );
    await page.waitForSelector(`${ELEMENT}[data-status="EXPIRED"]`, { timeout: 25_000 });
    expect(await shownText(page, ".pqc-status")).toBe("Expired");
    expect(await shownText(page, ".pqc-countdown")).toBe("");
    expect(await isShown(page, ".pqc-qr")).toBe(false);
    await page.close();
  }, 40_000);

  it("a client token reads its one transaction's checkout view and nothing else", async () => {
    const a = await generate.qr();
    const b = await generate.gateway();
    const view = (id: string, token?: string) =>
      fetch(`${t.url}/checkout/view/${id}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    const ok = await view(a.transactionId, a.clientToken);
    expect(ok.status).toBe(200);
    expect(Object.keys(await ok.json()).sort()).toEqual(
      [
        "amount",
        "currency",
        "deeplink",
        "expiredAt",
        "merchantName",
        "paidAt",
        "qr",
        "qrImage",
        "receiptUrl",
        "reference",
        "returnUrl",
        "scanned",
        "status",
        "transactionId",
      ].sort(),
    );
    expect((await view(b.transactionId, a.clientToken)).status).toBe(404);
    expect((await view(a.transactionId)).status).toBe(401);
    expect((await view(a.transactionId, tenant.keys.qr)).status).toBe(401);
    expect((await view(a.transactionId, `${a.clientToken.slice(0, -2)}xx`)).status).toBe(401);
    // A page opened with another transaction's token says so and shows nothing of either.
    const page = await browser.newPage();
    await page.goto(`${t.url}/pay/${b.transactionId}#token=${encodeURIComponent(a.clientToken)}`);
    await page.waitForSelector(`${ELEMENT}[data-status="ERROR"]`);
    expect(await shownText(page, ".pqc-status")).toBe("This payment link is not valid");
    expect(await shownText(page, ".pqc-amount")).toBe("");
    await page.close();
  });

  it("a merchant's own page on another origin embeds the element and watchTransaction from the service", async () => {
    const g = await generate.qr();
    const html = `<!doctype html><meta charset="utf-8"><body>
      <payment-qr-checkout url="${t.url}" transaction-id="${g.transactionId}" client-token="${g.clientToken}"></payment-qr-checkout>
      <pre id="log"></pre>
      <script type="module">
        import { watchTransaction } from "${t.url}/checkout/checkout.js";
        watchTransaction({ url: "${t.url}", transactionId: "${g.transactionId}", clientToken: "${g.clientToken}" },
          (s) => { document.getElementById("log").textContent = s.status ?? ""; });
      </script></body>`;
    const shop: Server = createServer((_req, res) => res.setHeader("content-type", "text/html").end(html));
    const port = await listenLoopback(shop, 0);
    try {
      const page = await browser.newPage();
      await page.goto(`http://localhost:${port}/`);
      await page.waitForSelector(`${ELEMENT}[data-connection="live"]`, { timeout: 15_000 });
      await page.waitForFunction(() => document.getElementById("log")?.textContent === "PENDING", { timeout: 15_000 });
      await post(`${t.url}/sim/network/pay`, { md5: g.data?.md5 });
      await page.waitForFunction(() => document.getElementById("log")?.textContent === "SUCCESS", { timeout: 10_000 });
      await page.waitForSelector(`${ELEMENT}[data-status="SUCCESS"]`, { timeout: 10_000 });
      await page.close();
    } finally {
      await closeNow(shop);
    }
  });

  it("GraphQL generate answers carry checkoutUrl too", async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTH.qr(tenant.keys.qr) },
      body: JSON.stringify({
        query:
          "mutation { generateQr(input: { amount: 1, currency: 840, expiredAfter: 60000 }) { transactionId checkoutUrl } }",
      }),
    });
    const { data } = (await res.json()) as { data: { generateQr: { transactionId: string; checkoutUrl: string } } };
    expect(data.generateQr.checkoutUrl).toMatch(new RegExp(`^${t.url}/pay/${data.generateQr.transactionId}#token=ct_`));
    await waitFor(async () => true);
  });
});
