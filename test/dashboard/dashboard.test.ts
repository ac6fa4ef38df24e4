import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { DOCUMENTED_QR_IMAGE_TEMPLATES } from "../support/gateway-documents.js";
import type { Browser, BrowserContext, ConsoleMessage, HTTPRequest, Page } from "puppeteer-core";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { startTestApp, post, AUTH, ADMIN_TOKEN, type TestApp } from "../support/app.js";
import { waitFor } from "../support/wait.js";
import {
  clickWhenShown,
  fillForm,
  launchBrowser,
  screenshot,
  textOf,
  VIEWPORTS,
  waitForText,
} from "../support/browser.js";

/**
 * The dashboard end to end in real headless Chromium: sign in, set up a merchant, a payment-link
 * configuration and a gateway-link key, watch a REST-generated payment appear live and approve it in demo mode.
 * One browser, one app; the steps build on each other.
 */
describe("dashboard in real headless Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let linkKey = "";
  let txId = "";
  const open = async (hash: string, p = page) => {
    await p.evaluate((h) => {
      location.hash = h;
    }, hash);
    await p.waitForSelector("main h1");
  };
  /** Clicks once the element is there: the components render after their data arrives (and again as it changes). */
  const click = (selector: string, p = page) => clickWhenShown(p, selector);
  /**
   * Sets the overview to the Phnom Penh days from this file's first payment to today, and waits until the page shows
   * them; returns how many days that is. "Today", the page's default, would miss the payments when a run crosses
   * midnight there (17:00 UTC).
   */
  const showPaymentDays = async (): Promise<number> => {
    const { transactions } = await t.admin<{ transactions: { edges: { node: { createdAt: string } }[] } }>(
      "{ transactions(first: 100) { edges { node { createdAt } } } }",
    );
    const phnomPenhDate = (ms: number) => new Date(ms + 7 * 3_600_000).toISOString().slice(0, 10);
    const from = phnomPenhDate(Math.min(...transactions.edges.map((e) => Date.parse(e.node.createdAt))));
    const to = phnomPenhDate(Date.now());
    const fromIso = new Date(`${from}T00:00:00+07:00`).toISOString();
    const toIso = new Date(Date.parse(`${to}T00:00:00+07:00`) + 86_400_000).toISOString();
    await page.$eval(
      "form.overview-filters",
      (f, dates) => {
        const fields = (f as HTMLFormElement).elements as unknown as Record<string, HTMLInputElement>;
        fields.period.value = "custom";
        fields.from.value = dates.from;
        fields.to.value = dates.to;
        f.dispatchEvent(new Event("change", { bubbles: true }));
      },
      { from, to },
    );
    await page.waitForFunction(
      (range) => {
        const o = document.querySelector("pqr-overview") as HTMLElement | null;
        const busy = o?.querySelector('[aria-busy="true"]');
        return o?.dataset.from === range.from && o.dataset.to === range.to && !busy;
      },
      { polling: 100 },
      { from: fromIso, to: toIso },
    );
    return (Date.parse(toIso) - Date.parse(fromIso)) / 86_400_000;
  };
  const form = async (label: string) => {
    const f = await page.waitForSelector(`form[aria-label="${label}"]`);
    if (f === null) throw new Error(`no form ${label}`);
    return f;
  };

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
    context = await browser.createBrowserContext();
    await context.overridePermissions(t.url, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.setViewport(VIEWPORTS.desktop);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("refuses a wrong admin token and keeps nothing", async () => {
    await page.goto(`${t.url}/dashboard/`);
    await fillForm((await page.waitForSelector("form.signin-form"))!, { token: "definitely-not-the-admin-token" });
    await click("form.signin-form button[type=submit]");
    await waitForText(page, "form.signin-form .form-error", "refused");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(page.url()).not.toContain("definitely");
    await screenshot(page, "signin-desktop");
  });

  it("signs in with the admin token, kept in sessionStorage and never in the URL", async () => {
    await fillForm((await page.$("form.signin-form"))!, { token: ADMIN_TOKEN });
    await click("form.signin-form button[type=submit]");
    await page.waitForSelector("nav a[aria-current=page]");
    expect(await page.evaluate(() => sessionStorage.getItem("pqr.adminToken"))).toBe(ADMIN_TOKEN);
    expect(page.url()).not.toContain(ADMIN_TOKEN);
    expect(await textOf(page, ".demo-flag")).toMatch(/demo/i);
  });

  it("creates a merchant, showing the KHQR rules inline as you type", async () => {
    await open("#/merchants");
    const f = await form("New merchant");
    await fillForm(f, {
      name: "Dash Shop",
      bakongAccountId: "no-at-sign",
      merchantName: "A name far too long for KHQR tag 59",
    });
    await waitForText(page, '[data-field="bakongAccountId"] .error', "must look like name@bank");
    await waitForText(page, '[data-field="merchantName"] .error', "at most 25 characters");
    expect(await page.$eval('[name="bakongAccountId"]', (e) => e.getAttribute("aria-invalid"))).toBe("true");
    expect(await textOf(page, '[data-field="merchantId"] .help')).toMatch(/required/);
    await fillForm(f, {
      bakongAccountId: "dash_shop@devb",
      merchantName: "Dash Shop",
      merchantCity: "Phnom Penh",
      merchantId: "DS001",
      acquiringBank: "Dev Bank",
      returnUrl: "https://dash.example/back",
    });
    expect(await textOf(page, '[data-field="bakongAccountId"] .error')).toBe("");
    await click('form[aria-label="New merchant"] button[type=submit]');
    await waitForText(page, "pqr-merchants table", "dash_shop@devb");
    // The payers' way back from the checkout page, kept with the merchant.
    const { merchants } = await t.admin<{ merchants: { bakongAccountId: string; returnUrl: string | null }[] }>(
      "{ merchants { bakongAccountId returnUrl } }",
    );
    expect(merchants.find((m) => m.bakongAccountId === "dash_shop@devb")?.returnUrl).toBe("https://dash.example/back");
    await screenshot(page, "merchants-desktop");
  });

  it("creates a payment-link configuration pointing at the PayWay twin, and a gateway-link key shown once with a copy button", async () => {
    await open("#/configs");
    await fillForm(await form("New payment-link configuration"), {
      name: "Dash link",
      url: `${t.url}/sim/payway/ABAPAYDEMO01`,
      currency: "116",
    });
    // The page adapter: the service default, or one the configuration names (here payway, the one there is).
    const adapters = await textOf(page, '[data-field="protocol"] select');
    expect(adapters).toMatch(/Service default \(payway\)/);
    await page.select('form[aria-label="New payment-link configuration"] [name="protocol"]', "payway");
    await click('form[aria-label="New payment-link configuration"] button[type=submit]');
    await waitForText(page, "pqr-configs .link table", "/sim/payway/ABAPAYDEMO01");
    const row = "pqr-configs .link tbody tr:last-child";
    expect(await textOf(page, row)).not.toContain("service default");
    // Edited back to the service default: the configuration names no adapter again, and says which one applies.
    await click(`${row} button`);
    await page.waitForSelector('form[aria-label="Edit Dash link"]');
    expect(
      await page.$eval('form[aria-label="Edit Dash link"] [name="protocol"]', (e) => (e as HTMLSelectElement).value),
    ).toBe("payway");
    await page.select('form[aria-label="Edit Dash link"] [name="protocol"]', "");
    await click('form[aria-label="Edit Dash link"] button[type=submit]');
    await waitForText(page, row, "(service default)");
    const { linkConfigs } = await t.admin<{
      linkConfigs: { name: string; protocol: string; protocolSetting: string | null }[];
    }>("{ linkConfigs { name protocol protocolSetting } }");
    expect(linkConfigs.find((l) => l.name === "Dash link")).toMatchObject({ protocolSetting: null });
    await screenshot(page, "configs-desktop");

    await open("#/keys");
    await fillForm(await form("New API key"), { kind: "gateway_link", label: "till 1" });
    expect(await textOf(page, '[data-field="configId"] select')).toContain("Dash link");
    await click('form[aria-label="New API key"] button[type=submit]');
    await page.waitForSelector(".created-slot code.secret");
    linkKey = await textOf(page, ".created-slot code.secret");
    expect(linkKey.length).toBeGreaterThan(20);
    await click(".created-slot button.copy");
    await waitForText(page, ".created-slot button.copy", "Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(linkKey);
    await waitForText(page, "pqr-keys table", "till 1");

    // A second key, revoked with a confirming second press.
    await fillForm(await form("New API key"), { kind: "qr", label: "spare" });
    await click('form[aria-label="New API key"] button[type=submit]');
    await waitForText(page, "pqr-keys table", "spare");
    const revoke = "pqr-keys tbody tr:first-child button.danger";
    await click(revoke);
    await waitForText(page, revoke, "Confirm revoke");
    await click(revoke);
    await waitForText(page, "pqr-keys tbody tr:first-child", "revoked");
    await screenshot(page, "keys-desktop");
  });

  it("creates a hosted-gateway configuration with a QR image template from the gateway's list, and changes it", async () => {
    await open("#/configs");
    const f = await form("New gateway configuration");
    const select = '[name="qrImageTemplate"]';
    // The QR API requires a template: the form offers the page's ten, the default chosen.
    expect(await f.$$eval(`${select} option`, (os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(
      DOCUMENTED_QR_IMAGE_TEMPLATES,
    );
    expect(await f.$eval(select, (e) => (e as HTMLSelectElement).value)).toBe("template3_color");
    await fillForm(f, {
      name: "Dash gateway",
      upstreamMerchantId: "dash_gw",
      apiSecret: "dash-gw-secret-0123456789",
      qrImageTemplate: "template2_color",
    });
    await click('form[aria-label="New gateway configuration"] button[type=submit]');
    await waitForText(page, "pqr-configs .gateway table", "template2_color");
    const row = "pqr-configs .gateway tbody tr:last-child";
    await click(`${row} button`);
    const edit = 'form[aria-label="Edit Dash gateway"]';
    await page.waitForSelector(edit);
    expect(await page.$eval(`${edit} ${select}`, (e) => (e as HTMLSelectElement).value)).toBe("template2_color");
    await page.select(`${edit} ${select}`, "template5");
    await click(`${edit} button[type=submit]`);
    await waitForText(page, row, "template5");
    const { gatewayConfigs } = await t.admin<{ gatewayConfigs: { name: string; qrImageTemplate: string }[] }>(
      "{ gatewayConfigs { name qrImageTemplate } }",
    );
    expect(gatewayConfigs.find((g) => g.name === "Dash gateway")).toMatchObject({ qrImageTemplate: "template5" });
  });

  it("adds a webhook endpoint (the built-in inbox) to the key", async () => {
    await open("#/webhooks");
    await fillForm(await form("Add an endpoint"), { url: `${t.url}/sim/inbox` });
    await click('form[aria-label="Add an endpoint"] button[type=submit]');
    await waitForText(page, ".created-slot code.secret", "whsec_");
    await waitForText(page, "pqr-webhooks table", "/sim/inbox");
  });

  it("shows a payment generated over REST in the live table without reload; Approve (demo) turns it SUCCESS in the detail and the table", async () => {
    await open("#/transactions");
    await waitForText(page, ".live-state", "Live");
    const res = await post(
      `${t.url}/gateway-link/generate-qr`,
      { amount: 5000, currency: 116, meta: { table: 4 } },
      AUTH.gatewayLink(linkKey),
    );
    expect(res.status).toBe(200);
    txId = (res.body as { transactionId: string }).transactionId;
    await page.waitForSelector(`tr[data-id="${txId}"][data-status="PENDING"]`, { timeout: 10_000 });
    // The one money rule, shown as the checkout page shows it (test/checkout: "5,000 KHR").
    expect(await textOf(page, `tr[data-id="${txId}"] td[data-label="Amount"]`)).toBe("5,000 KHR");
    // The reference is the area's own field, as its declaration labels it (config.json): the link's client id.
    const clientId = (res.body as { data: { clientId: string } }).data.clientId;
    expect(await textOf(page, `tr[data-id="${txId}"] td[data-label="Reference"]`)).toBe(clientId);
    await screenshot(page, "transactions-desktop");

    // The detail in a second tab, the table stays open in the first.
    const detail = await context.newPage();
    // However this ends, the table's tab is the front one again: the tests after it use it.
    try {
      await detail.setViewport(VIEWPORTS.desktop);
      await detail.evaluateOnNewDocument((token) => sessionStorage.setItem("pqr.adminToken", token), ADMIN_TOKEN);
      await detail.goto(`${t.url}/dashboard/#/transactions/${txId}`);
      await detail.waitForSelector(".qr img[src^='data:image/png;base64,']");
      const amountFact = await detail.$$eval(
        "dt",
        (dts) => dts.find((d) => d.textContent === "Amount")?.nextElementSibling?.textContent ?? null,
      );
      expect(amountFact).toBe("5,000 KHR");
      const clientFact = await detail.$$eval(
        "dt",
        (dts) => dts.find((d) => d.textContent === "Client ID")?.nextElementSibling?.textContent ?? null,
      );
      expect(clientFact).toBe(clientId);
      await click("button[data-sim=approve]", detail);
      await detail.waitForSelector(".tx-status[data-status=SUCCESS]", { timeout: 15_000 });
      await page.waitForSelector(`tr[data-id="${txId}"][data-status="SUCCESS"]`, { timeout: 5_000 });
      await waitForText(detail, ".timeline", "payment.completed");
      // Filters apply to the live table too. (A background tab gets no animation frames: bring the table to the front.)
      await page.bringToFront();
      const filters = (await page.$("form.filters"))!;
      await fillForm(filters, { status: "PENDING" });
      await page.waitForSelector(`tr[data-id="${txId}"]`, { hidden: true });
      await fillForm(filters, { status: "SUCCESS", area: "gateway_link" });
      await page.waitForSelector(`tr[data-id="${txId}"]`);
      await fillForm(filters, { area: "qr" });
      await page.waitForSelector(`tr[data-id="${txId}"]`, { hidden: true });
      await fillForm(filters, { area: "", status: "", search: txId.slice(0, 10) });
      await click("form.filters button[type=submit]");
      await page.waitForSelector(`tr[data-id="${txId}"]`);
      expect(await detail.$("button[data-sim]")).toBeNull(); // no demo controls once terminal
      await detail.bringToFront();
      // Every event's delivery delivered: created and completed, and scanned when a poll caught the payer's app at
      // processing-payment (the one poll between the approval and approved; whether one lands there is timing).
      await detail
        .waitForFunction(
          () => {
            const text = document.querySelector(".deliveries")?.textContent ?? "";
            return (
              document.querySelectorAll(".deliveries .delivery-delivered").length >= 2 &&
              document.querySelector(".deliveries .delivery-pending, .deliveries .delivery-failed") === null &&
              text.includes("payment.created") &&
              text.includes("payment.completed")
            );
          },
          // The page looks again while a delivery is pending (1.5 s doubling to 10 s); a loaded machine is slow to send.
          { timeout: 30_000, polling: 100 },
        )
        .catch(async (err: Error) => {
          const shown = await detail.$$eval(".deliveries tbody tr", (rows) => rows.map((r) => r.textContent));
          throw new Error(`${err.message}; deliveries shown: ${JSON.stringify(shown)}`);
        });
      await screenshot(detail, "transaction-detail-desktop");
    } finally {
      await detail.close();
      await page.bringToFront();
    }
  });

  it("shows the link's payee, recorded from its first QR for the operator to check, and lets the operator set it", async () => {
    await open("#/configs");
    const row = "pqr-configs .link tbody tr:last-child";
    const payee = `${row} td[data-label="Payee"]`;
    await waitForText(page, payee, "(from its first QR: check it)");
    const recorded = /^(\S+@\S+) \(from its first QR/.exec(await textOf(page, payee))?.[1] ?? "";
    expect(recorded).toMatch(/^[^@\s]+@[^@\s]+$/);
    await click(`${row} button`);
    const edit = await form("Edit Dash link");
    expect(await edit.$eval('[name="expectedPayee"]', (e) => (e as HTMLInputElement).value)).toBe(recorded);
    await fillForm(edit, { expectedPayee: "dash_shop@devb" });
    await click('form[aria-label="Edit Dash link"] button[type=submit]');
    await waitForText(page, payee, "dash_shop@devb");
    expect(await textOf(page, payee)).toBe("dash_shop@devb");
    const { linkConfigs } = await t.admin<{
      linkConfigs: { name: string; expectedPayee: string | null; expectedPayeeSource: string | null }[];
    }>("{ linkConfigs { name expectedPayee expectedPayeeSource } }");
    expect(linkConfigs.find((l) => l.name === "Dash link")).toMatchObject({
      expectedPayee: "dash_shop@devb",
      expectedPayeeSource: "operator",
    });
  });

  it("webhooks: delivery log with status and latency, redeliver, rotate secret, disable and enable", async () => {
    await open("#/webhooks");
    await click("pqr-webhooks .row-actions button:nth-child(3)");
    await waitForText(page, ".delivery-log table", "payment.completed");
    expect(await textOf(page, ".delivery-log table")).toMatch(/204/);
    expect(await textOf(page, ".delivery-log table")).toMatch(/\d+ ms/);
    // One attempt opened: what was sent (its body, headers with the signature hidden) and what came back.
    // The attempts are in a row of the table's width under their delivery's own.
    await click(".delivery-log tbody tr.attempts-row details.attempts-log > summary");
    await click(".delivery-log tbody tr.attempts-row details.attempt > summary");
    const exchange = await textOf(page, ".delivery-log tbody tr.attempts-row dl.exchange");
    expect(exchange).toContain("Request body");
    expect(exchange).toContain('"type":"payment.');
    expect(exchange).toMatch(/x-signature: \[redacted\]/);
    expect(exchange).toMatch(/Response status\s*204/);
    const created = await textOf(page, ".delivery-log tbody tr:first-child td:nth-child(8)");
    const before = (await (await fetch(`${t.url}/sim/inbox`)).json()) as unknown[];
    await click(".delivery-log tbody tr:first-child button.redeliver");
    await waitForText(page, "#announcer", "Redelivery");
    await expect(waitForInbox(t.url, before.length + 1)).resolves.toBe(true);
    // Redelivered: the delivery keeps its creation time and says when it was sent again.
    await open("#/transactions");
    // The last page's message does not follow to the next one.
    expect(await textOf(page, "#announcer")).toBe("");
    await open("#/webhooks");
    await click("pqr-webhooks .row-actions button:nth-child(3)");
    await waitForText(page, ".delivery-log tbody tr:first-child", "redelivered");
    expect(await textOf(page, ".delivery-log tbody tr:first-child td:nth-child(8)")).toContain(created);
    await click("pqr-webhooks .row-actions button:nth-child(2)");
    await waitForText(page, ".created-slot h3", "New signing secret");
    await click("pqr-webhooks .row-actions button:nth-child(1)");
    await waitForText(page, "pqr-webhooks .list table", "disabled");
    await click("pqr-webhooks .row-actions button:nth-child(1)");
    await waitForText(page, "pqr-webhooks .list table", "enabled");
    await screenshot(page, "webhooks-desktop");
  });

  it("opens on the overview: tiles equal the GraphQL answer, both charts drawn by Chart.js from this origin, no CSP violation", async () => {
    const requests: string[] = [];
    const problems: string[] = [];
    const onRequest = (r: HTTPRequest) => void requests.push(r.url());
    const onConsole = (m: ConsoleMessage) => {
      if (m.type() === "error" || /Content.Security.Policy/i.test(m.text())) problems.push(m.text());
    };
    page.on("request", onRequest);
    page.on("console", onConsole);
    await page.evaluateOnNewDocument(() => {
      const seen: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener("securitypolicyviolation", (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    try {
      // A fresh load of the dashboard (the session stays in this tab): the overview is the first page.
      await page.goto(`${t.url}/dashboard/`);
      await page.waitForSelector("pqr-overview[data-from] figure.chart canvas");
      expect(await textOf(page, "nav li:first-child a")).toBe("Overview");
      expect(await page.$eval("nav li:first-child a", (a) => a.getAttribute("aria-current"))).toBe("page");
      const days = await showPaymentDays();
      const range = await page.$eval("pqr-overview", (e) => ({
        from: (e as HTMLElement).dataset.from,
        to: (e as HTMLElement).dataset.to,
      }));
      const { overview } = await t.admin<{
        overview: {
          totals: Record<string, number | null>;
          currencies: { currency: string; paidAmount: string }[];
          webhooks: { delivered: number };
        };
      }>(
        `query($from: DateTimeISO!, $to: DateTimeISO!) { overview(from: $from, to: $to) {
          totals { payments paid failed expired pending late successRate } currencies { currency paidAmount }
          webhooks { delivered } } }`,
        range,
      );
      expect(overview.totals.paid).toBeGreaterThan(0);
      const tiles = Object.fromEntries(
        await page.$$eval("pqr-overview .tile", (els) =>
          els.map((e) => [(e as HTMLElement).dataset.figure, (e as HTMLElement).dataset.value]),
        ),
      );
      expect(tiles).toMatchObject({
        payments: String(overview.totals.payments),
        "success-rate": String(overview.totals.successRate ?? ""),
        failed: String(overview.totals.failed),
        expired: String(overview.totals.expired),
        pending: String(overview.totals.pending),
        late: String(overview.totals.late),
        "wh-delivered": String(overview.webhooks.delivered),
        ...Object.fromEntries(overview.currencies.map((c) => [`paid-${c.currency}`, c.paidAmount])),
      });
      // What is shown is what the API said: the KHR paid tile as the money rule shows amounts ("5,000 KHR").
      const khr = overview.currencies.find((c) => c.currency === "KHR")!.paidAmount;
      expect(await textOf(page, '[data-figure="paid-KHR"] .tile-value')).toBe(
        `${khr.replace(/\B(?=(\d{3})+(?!\d))/g, ",")} KHR`,
      );
      // Both canvases hold drawn bars: pixels of the paid KHR colour and of the paid-status colour.
      const colours = await page.$$eval("pqr-overview figure.chart canvas", (canvases) =>
        canvases.map((c) => {
          const canvas = c as HTMLCanvasElement;
          const data = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
          let painted = 0;
          const exact = new Set<string>();
          for (let i = 0; i < data.length; i += 4) {
            if (data[i + 3] === 0) continue;
            painted++;
            exact.add(`${data[i]},${data[i + 1]},${data[i + 2]}`);
          }
          return { painted, khrBar: exact.has("181,71,8"), paidBar: exact.has("6,118,71") };
        }),
      );
      expect(colours).toHaveLength(2);
      expect(colours[0].painted).toBeGreaterThan(1000);
      expect(colours[0].khrBar).toBe(true);
      expect(colours[1].paidBar).toBe(true);
      // Each chart has a text alternative: its summary as the canvas's label, its figures as a table.
      for (const label of await page.$$eval("pqr-overview figure.chart canvas", (cs) =>
        cs.map((c) => c.getAttribute("aria-label") ?? ""),
      ))
        expect(label).toMatch(/in total/);
      // Two charts, a row an hour: up to 48 hours the buckets are hours.
      expect(await page.$$eval("pqr-overview figure.chart .visually-hidden table tbody tr", (rs) => rs.length)).toBe(
        2 * 24 * days,
      );
      await screenshot(page, "overview-desktop");
      // Chart.js came from the dashboard itself; nothing left the origin.
      expect(requests.some((u) => u.endsWith("/dashboard/vendor/chart.js/chart.umd.min.js"))).toBe(true);
      expect(requests.filter((u) => !u.startsWith(`${t.url}/`) && !u.startsWith("data:"))).toEqual([]);
      expect(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual([]);
      expect(problems).toEqual([]);

      // A filter applies at once: an area with no payments shows zeros.
      await fillForm((await page.$("form.overview-filters"))!, { area: "qr" });
      await page.waitForFunction(
        () => document.querySelector('pqr-overview [data-figure="payments"]')?.getAttribute("data-value") === "0",
        { polling: 100 },
      );
    } finally {
      page.off("request", onRequest);
      page.off("console", onConsole);
    }
  });

  it("exports the overview's period as the reconciliation CSV with one button", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pqr-dl-"));
    try {
      const cdp = await page.createCDPSession();
      // Downloads of this page's browser context land in `dir`.
      await cdp.send("Browser.setDownloadBehavior", {
        behavior: "allow",
        downloadPath: dir,
        browserContextId: (context as unknown as { id?: string }).id,
      });
      await open("#/overview");
      await fillForm((await page.$("form.overview-filters"))!, { area: "" });
      await showPaymentDays();
      await click("form.overview-filters button.export");
      const file = await waitFor(async () => {
        const failed = await textOf(page, "form.overview-filters .form-error");
        if (failed) throw new Error(failed);
        // Chromium reserves the final name with an empty file while it writes `.crdownload`: done when that is gone.
        const names = readdirSync(dir);
        if (names.some((f) => f.endsWith(".crdownload"))) return undefined;
        const csv = names.find((f) => f.endsWith(".csv"));
        return csv !== undefined && statSync(join(dir, csv)).size > 0 ? csv : undefined;
      }, 15_000);
      const rows = parse(readFileSync(join(dir, file), "utf8"), { columns: true }) as { transaction_id: string }[];
      // Every payment of those days, as the admin API lists them.
      const { transactions } = await t.admin<{ transactions: { edges: { node: { id: string } }[] } }>(
        "{ transactions(first: 100) { edges { node { id } } } }",
      );
      expect(rows.map((r) => r.transaction_id).sort()).toEqual(transactions.edges.map((e) => e.node.id).sort());
      expect(rows.length).toBeGreaterThan(0);
      await cdp.detach();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is usable at phone width (screenshots of every page)", async () => {
    await page.setViewport(VIEWPORTS.phone);
    for (const [hash, name] of [
      ["#/overview", "overview"],
      ["#/transactions", "transactions"],
      ["#/merchants", "merchants"],
      ["#/configs", "configs"],
      ["#/keys", "keys"],
      ["#/webhooks", "webhooks"],
      [`#/transactions/${txId}`, "transaction-detail"],
    ]) {
      await open(hash);
      await page.waitForNetworkIdle({ idleTime: 150, timeout: 5000 }).catch(() => undefined);
      // Nothing wider than the screen: tables turn into cards.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await screenshot(page, `${name}-phone`);
    }
    await click("button.sign-out");
    await page.waitForSelector("form.signin-form");
    await screenshot(page, "signin-phone");
    expect(await page.evaluate(() => sessionStorage.getItem("pqr.adminToken"))).toBeNull();
  });
});

async function waitForInbox(url: string, count: number): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    if (((await (await fetch(`${url}/sim/inbox`)).json()) as unknown[]).length >= count) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
