import { mkdirSync } from "node:fs";
import { join } from "node:path";
import puppeteer, { type Browser, type BrowserContext, type ElementHandle, type Page } from "puppeteer-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const ARTIFACTS = join(process.cwd(), "test", "artifacts", "dashboard");

export const VIEWPORTS = {
  desktop: { width: 1280, height: 860 },
  phone: { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
};

/**
 * How long a page may take to load in a test: 120 s, not puppeteer's 30 s. On a slow 2-core machine running the whole
 * suite (two jest workers, their services and browsers), the REST reference at /docs (swagger-ui's 1.7 MB bundle
 * parsed, the 290 KB contract rendered) took more than 30 s to go quiet, where alone it takes 7 s. How fast a page
 * loads is a bench's question, not a test's.
 */
export const PAGE_LOAD_MS = 120_000;

const withLoadTimeout = new WeakSet<object>();

/** A real headless Chromium for browser tests (the system one; never downloaded). */
export async function launchBrowser(): Promise<Browser> {
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    pipe: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--disable-background-networking",
    ],
  });
  // browser.newPage() and every context's newPage() go through this one prototype (puppeteer's CDP context).
  const contexts = Object.getPrototypeOf(browser.defaultBrowserContext()) as BrowserContext;
  if (!withLoadTimeout.has(contexts)) {
    withLoadTimeout.add(contexts);
    const open = contexts.newPage;
    contexts.newPage = async function (this: BrowserContext, ...args: Parameters<BrowserContext["newPage"]>) {
      const page = await open.apply(this, args);
      page.setDefaultNavigationTimeout(PAGE_LOAD_MS);
      return page;
    };
  }
  return browser;
}

/** Full-page screenshot under test/artifacts/dashboard/ (ignored by git). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  // The toast of the last action would cover content: the picture is of the page, not the notice.
  await page.evaluate(() => document.getElementById("announcer")?.replaceChildren());
  await page.screenshot({ path: path as `${string}.png`, fullPage: true });
  return path;
}

/** Types into the named fields of a form (clearing what was there) and selects <select> values. */
export async function fillForm(form: ElementHandle, fields: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(fields)) {
    const el = await form.$(`[name="${name}"]`);
    if (el === null) throw new Error(`no field ${name}`);
    const tag = await el.evaluate((e) => e.tagName);
    if (tag === "SELECT") {
      await el.evaluate((e, v) => {
        const select = e as HTMLSelectElement;
        select.value = v;
        select.dispatchEvent(new Event("change", { bubbles: true }));
      }, value);
    } else {
      await el.evaluate((e) => {
        (e as HTMLInputElement).value = "";
      });
      await el.type(value);
    }
  }
}

export async function textOf(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (e) => e.textContent ?? "");
}

/** Waits until an element matching `selector` contains `text`. */
export async function waitForText(page: Page, selector: string, text: string, timeout = 10_000): Promise<void> {
  // Interval polling, not animation frames: a tab in the background gets none.
  await page.waitForFunction(
    (s, t) => Array.from(document.querySelectorAll(s)).some((e) => (e.textContent ?? "").includes(t)),
    { timeout, polling: 100 },
    selector,
    text,
  );
}

/**
 * Clicks `selector` with the mouse once it is shown. A live page may render the node again between finding it and
 * clicking it (puppeteer: "Node is detached from document"); the click then never reached the page, so the node
 * is found again and clicked, up to three times.
 */
export async function clickWhenShown(page: Page, selector: string, timeout = 10_000): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const el = await page.waitForSelector(selector, { visible: true, timeout });
    if (el === null) throw new Error(`no ${selector}`);
    try {
      await el.click();
      return;
    } catch (err) {
      if (attempt === 3 || !/detached|not clickable|not an Element/i.test((err as Error).message)) throw err;
    } finally {
      await el.dispose().catch(() => undefined);
    }
  }
}
