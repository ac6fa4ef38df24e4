import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import type { Browser, Page } from "puppeteer-core";
import { ROUTES } from "../../src/app.js";
import { launchBrowser, screenshot, VIEWPORTS } from "../support/browser.js";
import { startDemoService, type DemoService } from "../support/demo-service.js";
import { sleep, waitFor } from "../support/wait.js";

/**
 * /docs as a newcomer uses it on the demo: no Authorize step, no example to edit. Each of the eight operations
 * is opened, executed as shown, and must answer 200 in the page.
 */
describe("/docs on the demo: Try it out → Execute answers 200 on all eight paths, unchanged", () => {
  let svc: DemoService;
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    svc = await startDemoService("docs-page");
    browser = await launchBrowser();
    page = await browser.newPage();
    await page.setViewport(VIEWPORTS.desktop);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.dispose();
  });

  // A DOM click on a node found at the moment of the click: Swagger UI re-renders an operation while it opens and
  // while it executes, and a node found a moment earlier may be detached or not yet laid out by the time puppeteer
  // asks for its box ("Node is either not clickable or not an Element", seen on CI).
  const clickNow = (selector: string) => page.$eval(selector, (e) => (e as HTMLElement).click());
  /**
   * Clicks the operation's Execute until the page sends its request (`sent()`, a count of the requests seen, goes
   * up): a click the page swallowed while it re-rendered sends nothing. At most three clicks, 5 s each.
   */
  async function executeUntilSent(block: string, sent: () => number): Promise<void> {
    const before = sent();
    for (let attempt = 1; attempt <= 3; attempt++) {
      await clickNow(`${block} .btn.execute`);
      const deadline = Date.now() + 5_000;
      while (sent() === before && Date.now() < deadline) await sleep(100);
      if (sent() > before) return;
    }
    throw new Error(`${block}: three clicks on Execute sent nothing`);
  }

  it("is authorised with one key of each kind, and every example runs as shown", async () => {
    const sent: { url: string; key: string | undefined }[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST") sent.push({ url: r.url(), key: r.headers()["x-api-key"] });
    });
    await page.goto(`${svc.url}/docs`);
    await page.waitForSelector(".opblock-summary-path", { timeout: 30_000 });
    // Authorised already: the lock of every operation is closed.
    await page.waitForFunction(
      () => document.querySelectorAll('.authorization__btn[aria-label="authorization button locked"]').length >= 8,
    );
    for (const route of ROUTES) {
      const block = `.opblock-post:has(.opblock-summary-path[data-path="${route.path}"])`;
      await clickNow(`${block} .opblock-summary-control`);
      await page.waitForSelector(`${block} .btn.execute`, { visible: true });
      const answered = `${block} .live-responses-table .response .response-col_status`;
      const posts = () => sent.filter((x) => x.url === `${svc.url}${route.path}`).length;
      // A request sent and never answered fails, with what the service said meanwhile.
      await executeUntilSent(block, posts);
      if (
        !(await page.waitForSelector(answered, { timeout: 15_000 }).then(
          () => true,
          () => false,
        ))
      )
        throw new Error(`${route.path}: sent, no answer within 15 s\n` + svc.service.output.slice(-40).join("\n"));
      const status = await page.$eval(answered, (e) => (e.textContent ?? "").trim());
      const body = await page.$eval(`${block} .live-responses-table .microlight`, (e) => e.textContent ?? "");
      expect({ path: route.path, status, body: status === "200" ? "" : body.slice(0, 300) }).toEqual({
        path: route.path,
        status: "200",
        body: "",
      });
      await clickNow(`${block} .opblock-summary-control`);
    }
    await screenshot(page, "docs-try-it");
    // Each path got the key of its own kind.
    const kindKey = (path: string) =>
      path.startsWith("/gateway-link/")
        ? svc.demo.keys.gatewayLink
        : path.startsWith("/gateway/")
          ? svc.demo.keys.gateway
          : svc.demo.keys.qr;
    const calls = sent.filter((s) => ROUTES.some((r) => s.url === `${svc.url}${r.path}`));
    expect(new Set(calls.map((c) => c.url)).size).toBe(8);
    for (const c of calls) expect(c.key).toBe(kindKey(new URL(c.url).pathname));
  }, 120_000);
  it("Execute twice on /gateway/generate-qr: 200 both times, each with a new order id (the example's is freshened)", async () => {
    await page.goto(`${svc.url}/docs`);
    await page.waitForSelector(".opblock-summary-path", { timeout: 30_000 });
    const block = `.opblock-post:has(.opblock-summary-path[data-path="/gateway/generate-qr"])`;
    await clickNow(`${block} .opblock-summary-control`);
    await page.waitForSelector(`${block} .btn.execute`, { visible: true });
    const answers: { status: number; orderId: unknown }[] = [];
    let sent = 0;
    page.on("request", (r) => {
      if (r.method() === "POST" && r.url() === `${svc.url}/gateway/generate-qr`) sent++;
    });
    page.on("response", async (r) => {
      if (r.request().method() === "POST" && r.url() === `${svc.url}/gateway/generate-qr`)
        answers.push({ status: r.status(), orderId: ((await r.json()) as { orderId?: unknown }).orderId });
    });
    for (let n = 1; n <= 2; n++) {
      // A request sent and never answered fails.
      await executeUntilSent(block, () => sent);
      await waitFor(() => answers.length >= n, 20_000, 100, `the answer to Execute ${n}`);
      expect({ execute: n, status: answers[n - 1].status }).toEqual({ execute: n, status: 200 });
      // The page shows the same answer: its status, and the body with this answer's order id. The response event
      // comes before Swagger UI has drawn it, so the page is waited for, not read at once.
      const shown = await page
        .waitForFunction(
          (sel: string, orderId: string): string | false => {
            const status = document.querySelector(`${sel} .live-responses-table .response .response-col_status`);
            const body = document.querySelector(`${sel} .live-responses-table .microlight`);
            return status && body?.textContent?.includes(orderId) ? (status.textContent ?? "").trim() : false;
          },
          { timeout: 15_000 },
          block,
          String(answers[n - 1].orderId),
        )
        .then((h) => h.jsonValue() as Promise<string | false>);
      expect({ execute: n, status: shown }).toEqual({ execute: n, status: "200" });
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers[0].orderId).not.toBe(answers[1].orderId);
    // The example in the editor is left as it was: only what is sent is new.
    const example = await page.$eval(`${block} textarea.body-param__text`, (e) => (e as HTMLTextAreaElement).value);
    expect(answers.map((a) => a.orderId)).not.toContain(JSON.parse(example).qrData.orderId);
  }, 120_000);
});
