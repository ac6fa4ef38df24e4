// Chromium specifics behind the browser pool: how it is launched and stopped, how a page without
// a window is made, and which requests a monitor's page never needs.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type BrowserContext, type CDPSession, type Page } from "puppeteer-core";

export const DEFAULT_CHROMIUM_ARGS: readonly string[] = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-dev-shm-usage",
  "--disable-quic",
  // Chromium 156 preloads a WebUI omnibox popup (a ~48 MB renderer) for every browser context;
  // a monitor never types in an omnibox. Puppeteer merges this with its own --disable-features.
  "--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup",
];

export type BlockedResourceType = "Image" | "Font" | "Media" | "Stylesheet" | "TextTrack" | "Manifest";
const DEFAULT_BLOCKED: readonly BlockedResourceType[] = ["Image", "Font", "Media", "Stylesheet"];

export interface LaunchedChromium {
  browser: Browser;
  pid: number | null;
  /** A fresh profile directory, removed with removeProfile() when the browser is gone. */
  userDataDir: string;
}

export async function launchChromium(
  executablePath: string,
  extraArgs: readonly string[],
  timeoutMs: number,
): Promise<LaunchedChromium> {
  const userDataDir = await mkdtemp(join(tmpdir(), "pqr-chromium-"));
  try {
    const browser = await puppeteer.launch({
      executablePath,
      headless: true,
      userDataDir,
      // A pipe, not a WebSocket: Chromium exits by itself when this process dies, even by SIGKILL.
      pipe: true,
      // The application owns shutdown (BrowserPool.close()); puppeteer must not trap signals.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: timeoutMs,
      args: [...DEFAULT_CHROMIUM_ARGS, ...extraArgs],
    });
    return { browser, pid: browser.process()?.pid ?? null, userDataDir };
  } catch (err) {
    await removeProfile(userDataDir);
    throw err;
  }
}

/** Puppeteer starts Chromium as a process-group leader; this reaches helpers that outlived it. */
export function killProcessGroup(pid: number | null): void {
  if (pid === null) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // ESRCH: the whole group is already gone.
  }
}

/** Retries: helpers killed a moment ago may still be writing into the profile (ENOTEMPTY). */
export function removeProfile(userDataDir: string): Promise<void> {
  return rm(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }).catch(() => undefined);
}

/**
 * A page as a hidden target (CDP `Target.createTarget({hidden: true})`): no window, no tab strip,
 * no compositor frames — about half the memory of a windowed page. It takes keyboard input, not
 * mouse input. It lives as long as `session`, which must therefore outlive the page.
 */
export async function createHiddenTarget(session: CDPSession, context: BrowserContext): Promise<Page> {
  await session.send("Target.createTarget", {
    url: "about:blank",
    browserContextId: context.id,
    hidden: true,
    background: true,
  });
  // Typed "other" (not "page"); it is the only target of this fresh context.
  const target = await context.waitForTarget((t) => t.type() === "other" || t.type() === "page", { timeout: 10_000 });
  return target.asPage();
}

/** Fails the unneeded resource types inside Chromium; only those requests pause, not the page's API calls. */
export async function blockResourceTypes(
  page: Page,
  types: readonly BlockedResourceType[] = DEFAULT_BLOCKED,
): Promise<void> {
  if (types.length === 0) return;
  const cdp = await page.createCDPSession();
  cdp.on("Fetch.requestPaused", (event) => {
    cdp
      .send("Fetch.failRequest", { requestId: event.requestId, errorReason: "BlockedByClient" })
      .catch(() => undefined);
  });
  const patterns: Array<{ urlPattern: string; resourceType: BlockedResourceType | "Other"; requestStage: "Request" }> =
    types.map((resourceType) => ({ urlPattern: "*", resourceType, requestStage: "Request" }));
  // The browser's own favicon fetch is typed "Other"; it is one wasted request per page.
  patterns.push({ urlPattern: "*/favicon.ico", resourceType: "Other", requestStage: "Request" });
  await cdp.send("Fetch.enable", { patterns });
}
