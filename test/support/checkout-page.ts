import type { HTTPRequest, Page } from "puppeteer-core";

/** The hosted checkout page's custom element. */
export const CHECKOUT_ELEMENT = "payment-qr-checkout";

/** A page whose errors (uncaught and console) and requested URLs are kept, to assert none happened. */
export type WatchedPage = Page & { requests: string[]; problems: string[] };

export function watchPage(page: Page): WatchedPage {
  const watched = page as WatchedPage;
  watched.requests = [];
  watched.problems = [];
  page.on("request", (r: HTTPRequest) => void watched.requests.push(r.url()));
  page.on("pageerror", (e) => void watched.problems.push(String(e)));
  page.on("console", (m) => void (m.type() === "error" && watched.problems.push(m.text())));
  return watched;
}

/** Opens a checkout URL and waits until the page is live (its socket open) and shows the amount. */
export async function openCheckout(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForSelector(`${CHECKOUT_ELEMENT}[data-connection="live"]`, { timeout: 15_000 });
  await page.waitForSelector(".pqc-amount-value:not(:empty)", { timeout: 15_000 });
}

/** The text an element shows. */
export const shownText = (page: Page, selector: string) =>
  page.$eval(selector, (e) => (e as HTMLElement).innerText ?? "");

/** Whether an element is shown: not hidden, displayed, and taking room on the page. */
export const isShown = (page: Page, selector: string) =>
  page.$eval(selector, (e) => {
    const box = (e as HTMLElement).getBoundingClientRect();
    return !(e as HTMLElement).hidden && getComputedStyle(e).display !== "none" && box.width > 0 && box.height > 0;
  });
