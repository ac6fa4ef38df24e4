import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import express from "express";
import type { Browser } from "puppeteer-core";
import { ROUTES } from "../src/app.js";
import { EVENT_TYPES } from "../src/transactions/transaction-event.entity.js";
import { AUTH, post } from "./support/app.js";
import { launchBrowser, screenshot, VIEWPORTS } from "./support/browser.js";
import { freePort } from "./support/cluster.js";
import { closeNow, listenLoopback } from "./support/listen.js";
import { AdminCli, startDemoService, type DemoService } from "./support/demo-service.js";
import { waitFor } from "./support/wait.js";

type Verify = (
  rawBody: Buffer | string,
  headers: Record<string, string | string[] | undefined>,
  secrets: string | string[],
  opts?: { toleranceSeconds?: number },
) => boolean;

interface Hit {
  ok: boolean;
  type: string;
  transactionId: string;
  status: string;
  meta: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * What a newcomer does from the README alone, on `npm start` with nothing configured (embedded database, demo tenant,
 * simulators, default settings), against one demo service process: read the REST contract at /docs, watch a fresh
 * QR's checkoutUrl turn paid, and (README "Test your receiver locally") receive the demo tenant's events, signed, on
 * a local receiver through `npm run admin -- listen --forward-to …`. The receiver is the README's express example
 * (raw body, `verifyWebhook` imported from the package's entry point as built), on 127.0.0.1 with no public URL.
 * Each test counts only the events of the transactions it created; the service restart comes last.
 */
describe("newcomer paths on the zero-setup demo", () => {
  let svc: DemoService;
  let browser: Browser;
  let verifyWebhook: Verify;
  let server: Server;
  let hooks: string;
  const hits: Hit[] = [];
  const clis: AdminCli[] = [];
  const secrets: string[] = [];

  beforeAll(async () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { exports: { ".": string }; main: string };
    expect(pkg.main).toBe(pkg.exports["."].replace(/^\.\//, ""));
    ({ verifyWebhook } = (await import(pathToFileURL(resolve(pkg.exports["."])).href)) as { verifyWebhook: Verify });
    svc = await startDemoService("newcomer", { fresh: true });
    secrets.push(svc.demo.webhook.secret);
    const app = express();
    app.post("/hooks", express.raw({ type: "application/json" }), (req, res) => {
      const ok = verifyWebhook(req.body as Buffer, req.headers, secrets);
      const event = JSON.parse((req.body as Buffer).toString("utf8"));
      const tx = event.data.transaction;
      hits.push({
        ok,
        type: event.type,
        transactionId: tx.transactionId,
        status: tx.status,
        meta: event.data.meta,
        headers: req.headers,
      });
      res.sendStatus(ok ? 204 : 400);
    });
    server = createServer(app);
    hooks = `http://127.0.0.1:${await listenLoopback(server, 0)}/hooks`;
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    for (const c of clis) await c.stop();
    if (server) await closeNow(server);
    await browser?.close();
    await svc?.dispose();
  });

  const listen = (...args: string[]) => {
    const cli = new AdminCli(["listen", "--forward-to", hooks, ...args], { DATA_DIR: svc.service.dataDir });
    clis.push(cli);
    return cli;
  };

  // 180 s: the page may take PAGE_LOAD_MS (120 s) to go quiet on a loaded machine; the checks after it get a minute.
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
  }, 180_000);

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

  it("with no flags next to the demo: a paid QR's events arrive verified with the demo's webhook secret", async () => {
    const cli = listen();
    await cli.line(/^Ready: forwarding all events/);
    const g = await post(
      `${svc.url}/qr/generate`,
      { amount: 1.25, currency: 840, expiredAfter: 120_000, meta: { order: "A-1" } },
      AUTH.qr(svc.demo.keys.qr),
    );
    expect(g.status).toBe(200);
    const { transactionId, data } = g.body as { transactionId: string; data: { md5: string } };
    expect((await post(`${svc.url}/sim/network/pay`, { md5: data.md5 })).status).toBeLessThan(300);
    const line = await cli.line(
      new RegExp(`payment\\.completed\\s+${transactionId}\\s+SUCCESS\\s+→ 204 \\(\\d+ ms\\)`),
    );
    expect(line).toMatch(/^\d{4}-\d\d-\d\dT/);
    const completed = hits.find((h) => h.transactionId === transactionId && h.type === "payment.completed");
    expect(completed).toMatchObject({ ok: true, status: "SUCCESS", meta: { order: "A-1" } });
    expect(hits.filter((h) => h.transactionId === transactionId).every((h) => h.ok)).toBe(true);
    expect(completed?.headers).toMatchObject({
      "x-event-type": "payment.completed",
      "x-signature": expect.stringMatching(/^v1=[0-9a-f]{64}$/),
      "x-timestamp": expect.stringMatching(/^\d+$/),
    });
    // The same event the service's own webhook delivered to the demo inbox (it may arrive after listen's): same id.
    const inboxIds = async () =>
      ((await (await fetch(`${svc.url}/sim/inbox`)).json()) as { headers: Record<string, string> }[]).map(
        (e) => e.headers["x-event-id"],
      );
    await waitFor(async () => (await inboxIds()).includes(String(completed?.headers["x-event-id"])));
    expect(await cli.stop()).toBe(0); // Ctrl-C ends it cleanly
  });

  it("--api-key sees only that key's events, --events filters, --secret signs with the merchant's own secret", async () => {
    const own = "whsec_merchant_chosen_secret_0123456789";
    const cli = listen("--api-key", svc.demo.keys.gateway, "--events", "payment.created", "--secret", own);
    await cli.line(/^Ready: forwarding payment\.created of key pqr_gw_/);
    const qr = await post(
      `${svc.url}/qr/generate`,
      { amount: 2, currency: 840, expiredAfter: 120_000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    const gw = await post(
      `${svc.url}/gateway/generate-qr`,
      { qrData: { orderId: `L${Date.now()}`, amount: 3, currency: "USD" } },
      AUTH.gateway(svc.demo.keys.gateway),
    );
    expect(gw.status).toBe(200);
    const gwId = (gw.body as { transactionId: string }).transactionId;
    const qrId = (qr.body as { transactionId: string }).transactionId;
    await cli.line(new RegExp(`payment\\.created\\s+${gwId}\\s+CHECKOUT\\s+→ 400`));
    // Signed with the merchant's secret, which this receiver did not know yet: refused, then accepted once added.
    expect(hits.find((h) => h.transactionId === gwId)?.ok).toBe(false);
    expect(verifyWebhook("{}", {}, own)).toBe(false);
    secrets.push(own);
    const cli2 = listen("--api-key", svc.demo.keys.gateway, "--events", "payment.created", "--secret", own);
    await cli2.line(/^Ready/);
    const gw2 = await post(
      `${svc.url}/gateway/generate-qr`,
      { qrData: { orderId: `M${Date.now()}`, amount: 4, currency: "USD" } },
      AUTH.gateway(svc.demo.keys.gateway),
    );
    const gw2Id = (gw2.body as { transactionId: string }).transactionId;
    await cli2.line(new RegExp(`payment\\.created\\s+${gw2Id}\\s+CHECKOUT\\s+→ 204`));
    // The qr key's transaction never reached the gateway key's listeners.
    expect([...cli.lines, ...cli2.lines].some((l) => l.includes(qrId))).toBe(false);
    expect(cli.lines.some((l) => /payment\.(completed|expired)/.test(l))).toBe(false);
    expect(await cli.stop()).toBe(0);
    expect(await cli2.stop()).toBe(0);
  });

  it("refuses a wrong key with one line and exit code 1, and bad flags with exit code 2", async () => {
    const bad = listen("--api-key", "pqr_qr_not-a-real-key");
    expect(await bad.exited).toBe(1);
    expect(bad.lines.join("\n")).toMatch(/^error: /m);
    const noUrl = new AdminCli(["listen"], { DATA_DIR: svc.service.dataDir });
    expect(await noUrl.exited).toBe(2);
    expect(noUrl.lines.join("\n")).toMatch(/--forward-to URL is required/);
    const badEvent = listen("--events", "payment.teleported");
    expect(await badEvent.exited).toBe(2);
    expect(badEvent.lines.join("\n")).toMatch(/unknown event kind "payment\.teleported"/);
  });

  it("a receiver that is down: the line says so and the listener keeps running", async () => {
    const cli = listen(
      "--events",
      "payment.created",
      "--forward-to",
      `http://127.0.0.1:${await freePort()}/nothing-here`,
    );
    await cli.line(/^Ready/);
    const g = await post(
      `${svc.url}/qr/generate`,
      { amount: 5, currency: 840, expiredAfter: 120_000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    const id = (g.body as { transactionId: string }).transactionId;
    await cli.line(new RegExp(`payment\\.created\\s+${id}\\s+PENDING\\s+→ error ECONNREFUSED`));
    expect(await cli.stop()).toBe(0);
  });

  it("the service restarting under it: listen reconnects from the last event it saw, nothing lost or doubled", async () => {
    const cli = listen("--events", "payment.created,payment.completed");
    await cli.line(/^Ready/);
    const first = await post(
      `${svc.url}/qr/generate`,
      { amount: 6, currency: 840, expiredAfter: 120_000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    await cli.line(new RegExp(`payment\\.created\\s+${(first.body as { transactionId: string }).transactionId}`));
    await svc.service.restart(); // SIGKILL, then the same port and data directory
    // Whether listen is back before these or replays them after, each arrives once.
    const g = await post(
      `${svc.url}/qr/generate`,
      { amount: 7, currency: 840, expiredAfter: 120_000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    const { transactionId, data } = g.body as { transactionId: string; data: { md5: string } };
    await post(`${svc.url}/sim/network/pay`, { md5: data.md5 });
    await cli.line(/reconnected; replaying from the last event/, 30_000);
    await cli.line(new RegExp(`payment\\.created\\s+${transactionId}\\s+PENDING\\s+→ 204`), 30_000);
    await cli.line(new RegExp(`payment\\.completed\\s+${transactionId}\\s+SUCCESS\\s+→ 204`), 30_000);
    expect(cli.lines.filter((l) => l.includes(`payment.created     ${transactionId}`))).toHaveLength(1);
    expect(await cli.stop()).toBe(0);
  }, 90_000);
});
