// One headless Chromium per process, shared by all payment-link monitors of that process. Each
// monitor leases a page in its own browser context (no cookies or storage shared between
// payments; by default a hidden target, see chromium.ts), the number of leases is capped, and a
// browser that dies is replaced on the next acquire while every lease it carried is told
// through its AbortSignal.

import { accessSync, constants } from "node:fs";
import type { BrowserContext, CDPSession, Page } from "puppeteer-core";
import {
  filterRequests,
  createHiddenTarget,
  killProcessGroup,
  launchChromium,
  removeProfile,
  type BlockedResourceType,
  type LaunchedChromium,
} from "./chromium.js";

export {
  chooseSandbox,
  DEFAULT_CHROMIUM_ARGS,
  sandboxForThisMachine,
  type BlockedResourceType,
  type SandboxChoice,
  type SandboxMode,
} from "./chromium.js";

export interface PoolLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface BrowserPoolOptions {
  executablePath: string;
  /** Concurrent leases (pages) allowed; acquire() waits for a free one beyond this. */
  maxPages: number;
  /** Default bound on how long acquire() waits for a free slot. Default 10 000 ms. */
  acquireTimeoutMs?: number;
  /** Chromium flags appended to the defaults (memory tuning, see docs/decisions-link.md). */
  extraArgs?: string[];
  /** `--no-sandbox` or nothing (chooseSandbox()); default: what this machine allows (sandboxForThisMachine()). */
  sandboxArgs?: readonly string[];
  /** Resource types the pool refuses to load. Default: images, fonts, media, stylesheets (and favicons). */
  blockedResourceTypes?: readonly BlockedResourceType[];
  /**
   * "hidden" (default): each page is a hidden target (CDP `Target.createTarget({hidden})`), with
   * no browser window around it, which costs about half the memory of a windowed page. It
   * processes keyboard but not mouse input. "window": an ordinary tab in its own window.
   */
  pageMode?: "hidden" | "window";
  launchTimeoutMs?: number;
  logger?: PoolLogger;
}

export type BrowserPoolErrorCode =
  "POOL_FULL" | "POOL_CLOSED" | "LAUNCH_FAILED" | "BROWSER_GONE" | "PAGE_CRASHED" | "PAGE_FAILED";

export class BrowserPoolError extends Error {
  override readonly name = "BrowserPoolError";
  constructor(
    readonly code: BrowserPoolErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A page on loan. `signal` aborts (reason: BrowserPoolError) when the page or its browser dies. */
export interface PageLease {
  readonly page: Page;
  readonly context: BrowserContext;
  readonly signal: AbortSignal;
  /** Closes the context and frees the slot. Idempotent, never throws. */
  release(): Promise<void>;
}

export interface BrowserPoolStats {
  /** Leases held or being created. */
  pages: number;
  /** Callers waiting for a slot. */
  waiting: number;
  /** Browsers launched so far (a relaunch after a crash counts). */
  launched: number;
  /** Process id of the live browser, null when none runs. */
  pid: number | null;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}
interface LiveBrowser extends LaunchedChromium {
  leases: Set<AbortController>;
  cleanup: Promise<void> | null;
  hiddenUnsupported: boolean;
  targetSession?: Promise<CDPSession>;
}

export class BrowserPool {
  /**
   * Whether the configured Chromium can be run. Without it the service still starts; the gateway-link
   * area answers 503 naming CHROMIUM_PATH instead of failing deep inside a launch.
   */
  executableAvailable(): boolean {
    try {
      accessSync(this.options.executablePath, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  }

  get executablePath(): string {
    return this.options.executablePath;
  }

  private live: LiveBrowser | null = null;
  private launching: Promise<LiveBrowser> | null = null;
  private active = 0;
  private launches = 0;
  private readonly waiters: Waiter[] = [];
  private closing: Promise<void> | null = null;

  constructor(private readonly options: BrowserPoolOptions) {
    if (!Number.isInteger(options.maxPages) || options.maxPages < 1)
      throw new RangeError("maxPages must be a positive integer");
  }

  /**
   * Leases a fresh page in its own context; rejects with POOL_FULL after `timeoutMs` without a slot.
   * `allowedOrigins`: the page may load only from these origins (scheme://host:port); every other request
   * is failed inside Chromium. Without it the page may load from anywhere (minus the blocked types).
   */
  async acquire(opts: { timeoutMs?: number; allowedOrigins?: readonly string[] } = {}): Promise<PageLease> {
    if (this.closing) throw new BrowserPoolError("POOL_CLOSED", "browser pool is closed");
    await this.takeSlot(opts.timeoutMs ?? this.options.acquireTimeoutMs ?? 10_000);
    try {
      return await this.openLease(opts.allowedOrigins);
    } catch (err) {
      this.freeSlot();
      throw err instanceof BrowserPoolError
        ? err
        : new BrowserPoolError("PAGE_FAILED", `could not open a page: ${message(err)}`, { cause: err });
    }
  }

  stats(): BrowserPoolStats {
    return { pages: this.active, waiting: this.waiters.length, launched: this.launches, pid: this.live?.pid ?? null };
  }

  /** Stops the browser and rejects waiters; leases in flight see their signal abort. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private takeSlot(timeoutMs: number): Promise<void> {
    if (this.active < this.options.maxPages) {
      this.active += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          reject(
            new BrowserPoolError(
              "POOL_FULL",
              `no free browser page within ${timeoutMs} ms (cap ${this.options.maxPages})`,
            ),
          );
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Hands the slot to the next waiter, or gives it back. */
  private freeSlot(): void {
    const next = this.waiters.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve();
    } else {
      this.active -= 1;
    }
  }

  private async openLease(allowedOrigins: readonly string[] | undefined): Promise<PageLease> {
    const live = await this.ensureBrowser();
    const context = await live.browser.createBrowserContext();
    const controller = new AbortController();
    live.leases.add(controller);
    let released: Promise<void> | null = null;
    const release = (): Promise<void> => {
      released ??= (async () => {
        live.leases.delete(controller);
        await context.close().catch(() => undefined);
        this.freeSlot();
      })();
      return released;
    };
    try {
      const page = await this.newPage(live, context);
      page.once("error", (err: Error) =>
        controller.abort(new BrowserPoolError("PAGE_CRASHED", `page crashed: ${err.message}`, { cause: err })),
      );
      const origins = allowedOrigins === undefined ? undefined : new Set(allowedOrigins);
      await filterRequests(page, this.options.blockedResourceTypes, origins);
      if (this.closing || !live.browser.connected)
        throw new BrowserPoolError("BROWSER_GONE", "browser went away while opening a page");
      return { page, context, signal: controller.signal, release };
    } catch (err) {
      released = Promise.resolve();
      live.leases.delete(controller);
      await context.close().catch(() => undefined);
      throw err;
    }
  }

  private async newPage(live: LiveBrowser, context: BrowserContext): Promise<Page> {
    if ((this.options.pageMode ?? "hidden") === "window" || live.hiddenUnsupported) return context.newPage();
    try {
      // A hidden target lives only as long as the session that created it: one per browser.
      live.targetSession ??= live.browser.target().createCDPSession();
      return await createHiddenTarget(await live.targetSession, context);
    } catch (err) {
      if (!live.browser.connected) throw err;
      // A Chromium without hidden targets: fall back to windowed pages for this browser.
      live.hiddenUnsupported = true;
      this.options.logger?.warn({ err: message(err) }, "hidden targets unavailable; using windowed pages");
      return context.newPage();
    }
  }

  private ensureBrowser(): Promise<LiveBrowser> {
    if (this.live?.browser.connected) return Promise.resolve(this.live);
    this.launching ??= this.launch().finally(() => {
      this.launching = null;
    });
    return this.launching;
  }

  private async launch(): Promise<LiveBrowser> {
    let launched: LaunchedChromium;
    try {
      launched = await launchChromium(
        this.options.executablePath,
        this.options.extraArgs ?? [],
        this.options.launchTimeoutMs ?? 30_000,
        this.options.sandboxArgs,
      );
    } catch (err) {
      throw new BrowserPoolError(
        "LAUNCH_FAILED",
        `could not launch Chromium at ${this.options.executablePath}: ${message(err)}`,
        { cause: err },
      );
    }
    this.launches += 1;
    const live: LiveBrowser = { ...launched, leases: new Set(), cleanup: null, hiddenUnsupported: false };
    live.browser.once("disconnected", () => void this.onDisconnected(live));
    this.live = live;
    this.options.logger?.info({ pid: live.pid, launches: this.launches }, "chromium launched");
    if (this.closing) {
      await this.stopBrowser(live);
      throw new BrowserPoolError("POOL_CLOSED", "browser pool is closed");
    }
    return live;
  }

  /** Forgets a browser that went away (crash, kill or close). Runs once per browser. */
  private onDisconnected(live: LiveBrowser): Promise<void> {
    live.cleanup ??= this.forget(live);
    return live.cleanup;
  }

  private async forget(live: LiveBrowser): Promise<void> {
    if (this.live === live) this.live = null;
    const reason = this.closing
      ? new BrowserPoolError("POOL_CLOSED", "browser pool closed")
      : new BrowserPoolError("BROWSER_GONE", `chromium (pid ${live.pid ?? "?"}) disconnected`);
    if (!this.closing)
      this.options.logger?.warn(
        { pid: live.pid, leases: live.leases.size },
        "chromium disconnected; the next acquire relaunches it",
      );
    for (const lease of live.leases) lease.abort(reason);
    live.leases.clear();
    killProcessGroup(live.pid);
    await removeProfile(live.userDataDir);
  }

  private async shutdown(): Promise<void> {
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new BrowserPoolError("POOL_CLOSED", "browser pool closed"));
    }
    const live = this.live ?? (this.launching ? await this.launching.catch(() => null) : null);
    if (live) await this.stopBrowser(live);
  }

  private async stopBrowser(live: LiveBrowser): Promise<void> {
    // Tell the leases first, so their pages closing below reads as a shutdown, not a failure.
    for (const lease of live.leases) lease.abort(new BrowserPoolError("POOL_CLOSED", "browser pool closed"));
    const closed = live.browser.close().catch(() => undefined);
    const timedOut = new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref());
    await Promise.race([closed, timedOut]);
    killProcessGroup(live.pid); // helpers that outlived the browser process
    await this.onDisconnected(live);
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
