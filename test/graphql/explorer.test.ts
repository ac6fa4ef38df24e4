import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { getIntrospectionQuery, Kind, parse, print, type OperationDefinitionNode } from "graphql";
import type { Browser, Page } from "puppeteer-core";
import { sandboxExample } from "../../src/graphql/sandbox.js";
import { areasOf, MODULES } from "../../src/app.js";
import { post } from "../support/app.js";
import { launchBrowser, screenshot, VIEWPORTS } from "../support/browser.js";
import { startDemoService, type DemoService } from "../support/demo-service.js";
import { sleep } from "../support/wait.js";

const SANDBOX_DOCUMENT = sandboxExample(areasOf(MODULES)).document;

/** One example operation of the explorer's document, alone (GraphiQL runs the editor's only operation). */
function exampleOperation(name: string): string {
  const op = parse(SANDBOX_DOCUMENT).definitions.find(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION && d.name?.value === name,
  );
  if (!op) throw new Error(`no example operation ${name}`);
  return print(op);
}

/**
 * The local explorer at /graphiql in a real Chromium with no way out to the internet: every request that is not
 * to the service is refused (and recorded), so anything needing a CDN would fail here.
 */
describe("the local GraphQL explorer works offline", () => {
  let svc: DemoService;
  let browser: Browser;
  beforeAll(async () => {
    svc = await startDemoService("explorer");
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.dispose();
  });

  /** A page cut off from everything but the service; `outside` and `problems` collect what went wrong. */
  async function offlinePage(
    from: Pick<Browser, "newPage"> = browser,
  ): Promise<{ page: Page; outside: string[]; problems: string[] }> {
    const page = await from.newPage();
    await page.setViewport(VIEWPORTS.desktop);
    const outside: string[] = [];
    const problems: string[] = [];
    await page.setRequestInterception(true);
    page.on("request", (r) => {
      if (r.url().startsWith(svc.url) || r.url().startsWith("data:")) return void r.continue();
      outside.push(r.url());
      void r.abort("internetdisconnected");
    });
    page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
    page.on("pageerror", (e) => problems.push(String(e)));
    return { page, outside, problems };
  }

  /**
   * Opens /graphiql with the editors set by URL, presses Run and returns the result pane once it matches `until`;
   * with `again`, presses Run again until it does (a query whose answer changes soon).
   */
  async function run(page: Page, params: Record<string, string>, until: RegExp, again = false): Promise<string> {
    await page.goto(`${svc.url}/graphiql?${new URLSearchParams(params)}`);
    await page.waitForSelector(".graphiql-execute-button", { timeout: 30_000 });
    const result = () =>
      page.evaluate(() => {
        const pane = document.querySelector(".result-window .CodeMirror") as unknown as {
          CodeMirror?: { getValue(): string };
        } | null;
        return pane?.CodeMirror?.getValue() ?? "";
      });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const before = await result();
      await page.click(".graphiql-execute-button");
      await page
        .waitForFunction(
          (b) => {
            const pane = document.querySelector(".result-window .CodeMirror") as unknown as {
              CodeMirror?: { getValue(): string };
            } | null;
            const text = pane?.CodeMirror?.getValue() ?? "";
            return text !== "" && text !== b;
          },
          // Asked again, the same answer leaves the pane as it was: a few seconds' wait, then the next ask.
          { timeout: again ? 3_000 : 30_000, polling: 100 },
          before,
        )
        .catch(() => undefined);
      const text = await result();
      if (until.test(text)) return text;
      if (!again || Date.now() > deadline) throw new Error(`the explorer answered ${text.slice(0, 500)}`);
      await sleep(500);
    }
  }

  it("generates with the prefilled demo key, checks by md5, and follows the payment over graphql-ws with the clientToken", async () => {
    const { page, outside, problems } = await offlinePage();
    const input = { amount: 2.5, currency: 840, expiredAfter: 120000 };
    // The headers editor holds the demo tenant's key already: no headers are given here.
    const generated = JSON.parse(
      await run(page, { query: exampleOperation("GenerateQr"), variables: JSON.stringify({ input }) }, /"md5"/),
    ) as { data: { generateQr: { transactionId: string; clientToken: string; data: { md5: string } } } };
    const tx = generated.data.generateQr;
    expect(tx.transactionId).toMatch(/^txn_/);

    // Paid, and recorded by the monitor (within 3 s): the query says SUCCESS.
    expect((await post(`${svc.url}/sim/network/pay`, { md5: tx.data.md5 })).status).toBe(200);
    const checkQr = { query: exampleOperation("CheckQr"), variables: JSON.stringify({ md5: tx.data.md5 }) };
    const checked = JSON.parse(await run(page, checkQr, /"status": "SUCCESS"/, true)) as {
      data: { qrTransaction: { transactionId: string } };
    };
    expect(checked.data.qrTransaction.transactionId).toBe(tx.transactionId);

    // The subscription over graphql-ws, authorised by the clientToken alone (GraphiQL sends the headers as the
    // socket's connection payload); a final transaction sends its final state.
    const watch = await offlinePage();
    const watchQr = {
      query: exampleOperation("WatchWithClientToken"),
      variables: JSON.stringify({ transactionId: tx.transactionId }),
      headers: JSON.stringify({ authorization: `Bearer ${tx.clientToken}` }),
    };
    const event = await run(watch.page, watchQr, /"status": "SUCCESS"/);
    expect(event).toMatch(/"type": "payment\.completed"/);
    await screenshot(watch.page, "graphiql-subscription");
    for (const p of [page, watch.page]) await p.close();
    expect([...outside, ...watch.outside]).toEqual([]);
    expect([...problems, ...watch.problems]).toEqual([]);
  }, 120_000);

  it("the shipped document as it opens: its client-token operation runs with Authorization: Bearer ct_… alone, and its variables lint clean", async () => {
    // A QR issued and paid outside the explorer: the page holds nothing but its clientToken.
    const issued = await post(
      `${svc.url}/qr/generate`,
      { amount: 1.25, currency: 840, expiredAfter: 120000 },
      { "x-auth-type": "api-key", "x-api-key": svc.demo.keys.qr },
    );
    const tx = (issued.body as { transactionId: string; clientToken: string; data: { md5: string } }) ?? {};
    expect(tx.clientToken).toMatch(/^ct_/);
    expect((await post(`${svc.url}/sim/network/pay`, { md5: tx.data.md5 })).status).toBe(200);

    // A browser context of its own: GraphiQL keeps the last document in the origin's storage (the test before ran one
    // operation alone), and a first visit opens with the shipped document.
    const fresh = await browser.createBrowserContext();
    const { page, outside, problems } = await offlinePage(fresh);
    // No `query`: the editor holds the shipped document with all its operations (a generate, a check, the watch).
    const params = new URLSearchParams({
      variables: JSON.stringify({ transactionId: tx.transactionId }),
      headers: JSON.stringify({ Authorization: `Bearer ${tx.clientToken}` }),
    });
    await page.goto(`${svc.url}/graphiql?${params}`);
    await page.waitForSelector(".graphiql-execute-button", { timeout: 30_000 });
    const editorText = await page.evaluate(() => {
      const editor = document.querySelector(".graphiql-query-editor .CodeMirror") as unknown as {
        CodeMirror?: { getValue(): string };
      } | null;
      return editor?.CodeMirror?.getValue() ?? "";
    });
    expect(editorText).toBe(SANDBOX_DOCUMENT);
    // Several operations: Run offers them by name (once the editor has read the document, the button opens a menu);
    // the client token's one is picked.
    await page.waitForSelector(".graphiql-execute-button[aria-haspopup]", { timeout: 30_000 });
    await page.click(".graphiql-execute-button");
    const item = await page.waitForSelector("xpath///*[@role='menuitem'][normalize-space()='WatchWithClientToken']", {
      timeout: 10_000,
    });
    await item?.click();
    await page.waitForFunction(
      () => {
        const pane = document.querySelector(".result-window .CodeMirror") as unknown as {
          CodeMirror?: { getValue(): string };
        } | null;
        return /"status": "SUCCESS"|"errors"/.test(pane?.CodeMirror?.getValue() ?? "");
      },
      { timeout: 30_000, polling: 100 },
    );
    const answer = await page.evaluate(() => {
      const pane = document.querySelector(".result-window .CodeMirror") as unknown as {
        CodeMirror?: { getValue(): string };
      } | null;
      return pane?.CodeMirror?.getValue() ?? "";
    });
    expect(answer).not.toMatch(/FORBIDDEN|errors/);
    expect(answer).toMatch(/"type": "payment\.completed"/);
    await screenshot(page, "graphiql-shipped-document-client-token");

    // The variables the editor opens with lint clean; the same editor flags what it should (meta as an object).
    const lintErrors = async (variables: string | null): Promise<number> => {
      const context = await browser.createBrowserContext();
      const p = await context.newPage();
      await p.goto(`${svc.url}/graphiql${variables === null ? "" : `?${new URLSearchParams({ variables })}`}`);
      await p.waitForSelector(".graphiql-execute-button", { timeout: 30_000 });
      await sleep(1500); // the linter runs after the schema is in and the editor has settled
      const n = await p.evaluate(
        () => document.querySelectorAll(".graphiql-editor-tool .CodeMirror-lint-mark-error").length,
      );
      await context.close();
      return n;
    };
    expect(await lintErrors(null)).toBe(0);
    const withMeta = { input: { amount: 1.5, currency: 840, expiredAfter: 120000, meta: { orderRef: "A-1001" } } };
    expect(await lintErrors(JSON.stringify(withMeta))).toBeGreaterThan(0);
    await fresh.close();
    expect(outside).toEqual([]);
    // The operations menu (Radix's dropdown) injects a <style> element to lock scrolling, which the page's CSP
    // (style-src 'self') refuses: the menu works, the page just stays scrollable behind it. Known, left as it is.
    expect(problems.filter((p) => !/^Applying inline style violates .*style-src 'self'/.test(p))).toEqual([]);
  }, 120_000);

  it("standard introspection (graphql-js's query, type references nine deep) is answered; real depth is still capped", async () => {
    const ask = (query: string) =>
      fetch(`${svc.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${svc.demo.adminToken}` },
        body: JSON.stringify({ query }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { data?: unknown; errors?: unknown } }));
    const full = await ask(getIntrospectionQuery({ inputValueDeprecation: true }));
    expect(full.status).toBe(200);
    expect(full.body.errors).toBeUndefined();
    const deep = `{ __schema { types { fields { type { fields { type { fields { type { fields { type { fields { type {
      fields { name } } } } } } } } } } } } } }`;
    expect((await ask(deep)).status).toBe(400);
  });

  it("/graphql keeps Apollo Sandbox, and links the local explorer when Sandbox cannot load", async () => {
    const { page, outside } = await offlinePage();
    await page.goto(`${svc.url}/graphql`);
    // Apollo's own offline notice fades in after a second; the link is in it.
    await page.waitForSelector('.fallback a[href="/graphiql"]', { visible: true, timeout: 15_000 });
    expect(outside.some((u) => u.includes("apollographql.com"))).toBe(true);
    await Promise.all([page.waitForNavigation(), page.click('.fallback a[href="/graphiql"]')]);
    await page.waitForSelector(".graphiql-execute-button", { timeout: 30_000 });
    expect(page.url()).toBe(`${svc.url}/graphiql`);
    await page.close();
  }, 60_000);
});
