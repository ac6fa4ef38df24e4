// One headless Chromium per process, shared by all payment-link pages of that process. Each
// page is a lease: a hidden target (see BrowserPoolOptions.pageMode) created straight on its
// URL and held before its first request while its traffic rules are put in place, driven over its
// own CDP session (no Page abstraction: the protocol alone, which costs a fraction of the CPU). Each
// lease gets a browser context of its own (no cookies, storage or renderer shared between payments).
// The number of leases is capped, and a browser that dies is replaced on the next acquire while
// every lease it carried is told through its AbortSignal. With `shares`, each lease is counted against its owner's
// fair shares (page-shares.ts): a lease over a share is refused at once (SHARE_FULL), never queued.

import { accessSync, constants } from "node:fs";
import type { CDPSession, Protocol } from "puppeteer-core";
import {
  interceptRequests,
  killProcessGroup,
  launchChromium,
  proxyArgs,
  removeProfile,
  type BlockedResourceType,
  type DocumentAnswer,
  type LaunchedChromium,
  type PageResponse,
} from "./chromium.js";
import { clientHintHeaders, userAgentOverride } from "./browser-identity.js";
import {
  PageShares,
  ShareTicket,
  type Claim,
  type PageOwner,
  type ShareCaps,
  type ShareRefusal,
} from "./page-shares.js";

export type { Claim, PageOwner, ShareCaps, ShareRefusal } from "./page-shares.js";

export {
  chooseSandbox,
  DEFAULT_CHROMIUM_ARGS,
  sandboxForThisMachine,
  type BlockedResourceType,
  type DocumentAnswer,
  type PageRequest,
  type PageResponse,
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
  /** Chromium flags appended to the defaults (memory tuning, see docs/decisions/0044-link-monitor-memory.md). */
  extraArgs?: string[];
  /** `--no-sandbox` or nothing (chooseSandbox()); default: what this machine allows (sandboxForThisMachine()). */
  sandboxArgs?: readonly string[];
  /** Resource types the pool refuses to load. Default: images, fonts, media (and favicons); stylesheets load. */
  blockedResourceTypes?: readonly BlockedResourceType[];
  /**
   * "hidden" (default): each page is a hidden target (CDP `Target.createTarget({hidden})`), with
   * no browser window around it, which costs about half the memory of a windowed page. It
   * processes keyboard but not mouse input. "window": an ordinary tab in its own window.
   */
  pageMode?: "hidden" | "window";
  launchTimeoutMs?: number;
  logger?: PoolLogger;
  /**
   * The user agent every page sends and shows (LINK_USER_AGENT), with matching client hints; null or unset: a
   * current Chrome's on Linux, of the running browser's major version (browser-identity.ts). Never "HeadlessChrome".
   */
  userAgent?: string | null;
  /** Outbound proxy of every page (LINK_PROXY): `http(s)://[user:pass@]host:port`. */
  proxy?: string | null;
  /** Fair shares of leases that name their owner (AcquireOptions.share); without it, only maxPages bounds them. */
  shares?: ShareCaps;
  /** The clock a held page's `holdUntil` is read against (the service's); default Date.now. */
  now?: () => number;
}

export type BrowserPoolErrorCode =
  | "POOL_FULL"
  | "POOL_CLOSED"
  | "LAUNCH_FAILED"
  | "BROWSER_GONE"
  | "PAGE_CRASHED"
  | "PAGE_FAILED"
  | "SHARE_FULL"
  | "PAGE_EVICTED";

export class BrowserPoolError extends Error {
  override readonly name = "BrowserPoolError";
  /** SHARE_FULL: which of the owner's shares is used up. */
  readonly refusal: ShareRefusal | null;
  constructor(
    readonly code: BrowserPoolErrorCode,
    message: string,
    options?: { cause?: unknown; refusal?: ShareRefusal },
  ) {
    super(message, options);
    this.refusal = options?.refusal ?? null;
  }
}

/** The share refusal behind an error (a BrowserPoolError, or one that carries it as its cause), or null. */
export function shareRefusalOf(err: unknown): ShareRefusal | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++)
    if (e instanceof BrowserPoolError && e.refusal !== null) return e.refusal;
  return null;
}

/** What a lease's owner reads of the page's traffic (XHR/fetch answers of the top-level page). */
export interface TrafficReader {
  wants(url: string): boolean;
  onResponse(response: PageResponse): void;
}

export interface AcquireOptions {
  /** Where the page goes; it is held before this first request until start(). */
  url: string;
  timeoutMs?: number;
  /**
   * The page may load only from these origins (scheme://host:port); every other request is failed inside
   * Chromium. Without it the page may load from anywhere (minus the blocked types).
   */
  allowedOrigins?: readonly string[];
  traffic?: TrafficReader;
  /**
   * Whose page (counted against its shares, with BrowserPoolOptions.shares): without `holdUntil` an open (a page
   * driven to its QR); with it, a page held for a payment, kept from others until then (the service's clock, ms).
   */
  share?: { owner: PageOwner; holdUntil?: number };
}

/** A page on loan. `signal` aborts (reason: BrowserPoolError) when the page or its browser dies. */
export interface PageLease {
  /** The page target's own CDP session: commands go to the page, its events arrive here. */
  readonly session: CDPSession;
  readonly signal: AbortSignal;
  /**
   * Lets the held page load its URL. Resolves with the main document's HTTP status (the first that is not
   * a redirect); rejects with `net::ERR_<reason>` when the document could not be loaded or was refused.
   */
  start(): Promise<number>;
  /** The main document's answer once start() has it (its headers, and an error page's start): null before. */
  documentAnswer(): DocumentAnswer | null;
  /** Closes the page (and its context, if its own) and frees the slot. Idempotent, never throws. */
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
  /** Browser contexts open: one per lease. */
  contexts: number;
  /** Of the leases that name an owner: held pages, and pages opening. */
  held: number;
  opening: number;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}
interface LiveBrowser extends LaunchedChromium {
  /** A browser-level session that auto-attaches every new page target, held before its first request. */
  root: CDPSession;
  /** Targets attached before their creator asked for them, and creators waiting for theirs. */
  attached: Map<string, CDPSession>;
  awaiting: Map<string, (session: CDPSession) => void>;
  /** Live leases by target id (a target closed behind our back aborts its lease). */
  leases: Map<string, AbortController>;
  /** Browser contexts this pool made (a target in any other is not a payment page). */
  contextIds: Set<string>;
  cleanup: Promise<void> | null;
  hiddenUnsupported: boolean;
  /** What each page of this browser says it is (the user agent and its client hints). */
  identity: Protocol.Emulation.SetUserAgentOverrideRequest;
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
  private readonly shares: PageShares | null;

  constructor(private readonly options: BrowserPoolOptions) {
    if (!Number.isInteger(options.maxPages) || options.maxPages < 1)
      throw new RangeError("maxPages must be a positive integer");
    this.shares = options.shares ? new PageShares(options.shares, options.now ?? Date.now) : null;
  }

  /**
   * Leases a page held on `url` (see AcquireOptions); rejects with POOL_FULL after `timeoutMs` without a slot, and at
   * once with SHARE_FULL when its owner's share is used up.
   */
  async acquire(opts: AcquireOptions): Promise<PageLease> {
    if (this.closing) throw new BrowserPoolError("POOL_CLOSED", "browser pool is closed");
    const timeoutMs = opts.timeoutMs ?? this.options.acquireTimeoutMs ?? 10_000;
    const ticket = this.takeShare(opts.share);
    try {
      await this.takeSlot(timeoutMs);
    } catch (err) {
      if (ticket) this.shares?.release(ticket);
      throw err;
    }
    try {
      return await this.openLease(opts, timeoutMs, ticket);
    } catch (err) {
      if (ticket) this.shares?.release(ticket);
      this.freeSlot();
      throw err instanceof BrowserPoolError
        ? err
        : new BrowserPoolError("PAGE_FAILED", `could not open a page: ${message(err)}`, { cause: err });
    }
  }

  /** Whether a new payment of `owner` could have a page held for it now (PageShares.holdRefusal); null without shares. */
  holdRefusal(owner: PageOwner, waiting?: readonly Claim[]): ShareRefusal | null {
    return this.shares?.holdRefusal(owner, waiting) ?? null;
  }

  stats(): BrowserPoolStats {
    return {
      pages: this.active,
      waiting: this.waiters.length,
      launched: this.launches,
      pid: this.live?.pid ?? null,
      contexts: this.live?.contextIds.size ?? 0,
      ...(this.shares?.counts() ?? { held: 0, opening: 0 }),
    };
  }

  private takeShare(share: AcquireOptions["share"]): ShareTicket | null {
    if (!this.shares || share === undefined) return null;
    const taken = this.shares.take(share.owner, share.holdUntil ?? null);
    if (taken instanceof ShareTicket) return taken;
    const what = taken.kind === "open" ? "pages opening" : "held pages";
    throw new BrowserPoolError("SHARE_FULL", `this ${taken.scope}'s share of ${what} (${taken.cap}) is used up`, {
      refusal: taken,
    });
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

  private async openLease(opts: AcquireOptions, timeoutMs: number, ticket: ShareTicket | null): Promise<PageLease> {
    const live = await this.ensureBrowser();
    const context = await this.newContext(live);
    const controller = new AbortController();
    let targetId: string | null = null;
    let released: Promise<void> | null = null;
    // The page is closed before its context is disposed: disposing alone leaves a hidden page's renderer running.
    const closePage = async (): Promise<void> => {
      if (targetId !== null) {
        live.leases.delete(targetId);
        await live.root.send("Target.closeTarget", { targetId }).catch(() => undefined);
      }
      await context.dispose();
    };
    const release = (): Promise<void> => {
      if (ticket) this.shares?.release(ticket);
      released ??= closePage().then(() => this.freeSlot());
      return released;
    };
    try {
      const created = await this.createTarget(live, context.id, opts.url);
      targetId = created.targetId;
      live.leases.set(targetId, controller);
      const session = await this.attachedSession(live, targetId, timeoutMs);
      let settleDocument!: { resolve: (status: number) => void; reject: (err: Error) => void };
      const document = new Promise<number>((resolve, reject) => {
        settleDocument = { resolve, reject };
      });
      document.catch(() => undefined); // read only by start()
      let answer: DocumentAnswer | null = null;
      const origins = opts.allowedOrigins === undefined ? undefined : new Set(opts.allowedOrigins);
      const hooks = {
        onDocument: (outcome: DocumentAnswer | { error: string }) => {
          if (!("status" in outcome)) return settleDocument.reject(new Error(`net::ERR_${outcome.error}`));
          answer ??= outcome;
          settleDocument.resolve(outcome.status);
        },
        wants: (url: string) => opts.traffic?.wants(url) ?? false,
        onResponse: (response: PageResponse) => opts.traffic?.onResponse(response),
      };
      const proxy = this.options.proxy ? proxyArgs(this.options.proxy).credentials : undefined;
      const clientHints = clientHintHeaders(live.identity);
      const page = { frameId: targetId, hooks, clientHints };
      await interceptRequests(session, this.options.blockedResourceTypes, origins, page, proxy);
      session.on("Inspector.targetCrashed", () =>
        controller.abort(new BrowserPoolError("PAGE_CRASHED", "the payment page's renderer crashed")),
      );
      // Before its first request: the page's requests and its navigator say what browser it is (browser-identity.ts).
      await Promise.all([
        session.send("Inspector.enable"),
        session.send("Page.enable"),
        session.send("Emulation.setUserAgentOverride", live.identity),
      ]);
      if (this.closing || !live.browser.connected)
        throw new BrowserPoolError("BROWSER_GONE", "browser went away while opening a page");
      let started: Promise<number> | null = null;
      const start = (): Promise<number> => {
        const parsed = new Promise<void>((resolve) => session.once("Page.domContentEventFired", () => resolve()));
        // The document's status first (a load that failed rejects at once), then its DOM, ready to be used.
        started ??= session
          .send("Runtime.runIfWaitingForDebugger")
          .then(() => (created.navigate ? session.send("Page.navigate", { url: opts.url }) : undefined))
          .then(() => document)
          .then(async (status) => {
            await parsed;
            return status;
          });
        return started;
      };
      // From now on a page held past its payment's time may be taken for one still within it (PageShares).
      if (ticket)
        ticket.evict = () => {
          this.options.logger?.info(
            { merchant: ticket.owner.merchant, config: ticket.owner.config },
            "a page held past its payment's time was closed for a payment still within it",
          );
          controller.abort(new BrowserPoolError("PAGE_EVICTED", "the held page was taken for a newer payment"));
          void release();
        };
      return { session, signal: controller.signal, start, documentAnswer: () => answer, release };
    } catch (err) {
      released = Promise.resolve();
      await closePage();
      throw err;
    }
  }

  /** A browser context of the lease's own; disposing it closes its page. */
  private async newContext(live: LiveBrowser): Promise<{ id: string; dispose: () => Promise<void> }> {
    const { browserContextId: id } = await live.root.send("Target.createBrowserContext", { disposeOnDetach: true });
    live.contextIds.add(id);
    let disposed: Promise<void> | null = null;
    const dispose = (): Promise<void> => {
      disposed ??= (async () => {
        await live.root.send("Target.disposeBrowserContext", { browserContextId: id }).catch(() => undefined);
        live.contextIds.delete(id);
      })();
      return disposed;
    };
    return { id, dispose };
  }

  /**
   * A hidden target is created on its URL: its first request waits for start(), and the page starts in the
   * site's renderer. A windowed one does not wait (its document would load before the filter is in place):
   * it is created blank and told to navigate by start().
   */
  private async createTarget(
    live: LiveBrowser,
    browserContextId: string,
    url: string,
  ): Promise<{ targetId: string; navigate: boolean }> {
    const windowed = async () => {
      const { targetId } = await live.root.send("Target.createTarget", { url: "about:blank", browserContextId });
      return { targetId, navigate: true };
    };
    if ((this.options.pageMode ?? "hidden") === "window" || live.hiddenUnsupported) return windowed();
    try {
      // A hidden target lives as long as the session that created it: the root session, one per browser.
      const { targetId } = await live.root.send("Target.createTarget", {
        url,
        browserContextId,
        hidden: true,
        background: true,
      });
      return { targetId, navigate: false };
    } catch (err) {
      if (!live.browser.connected) throw err;
      // A Chromium without hidden targets: fall back to windowed pages for this browser.
      live.hiddenUnsupported = true;
      this.options.logger?.warn({ err: message(err) }, "hidden targets unavailable; using windowed pages");
      return windowed();
    }
  }

  /** The target's session from the root's auto-attach, which holds it before its first request. */
  private attachedSession(live: LiveBrowser, targetId: string, timeoutMs: number): Promise<CDPSession> {
    const ready = live.attached.get(targetId);
    if (ready) {
      live.attached.delete(targetId);
      return Promise.resolve(ready);
    }
    return new Promise<CDPSession>((resolve, reject) => {
      const timer = setTimeout(() => {
        live.awaiting.delete(targetId);
        reject(new BrowserPoolError("PAGE_FAILED", "the new page was never attached"));
      }, timeoutMs);
      live.awaiting.set(targetId, (session) => {
        clearTimeout(timer);
        resolve(session);
      });
    });
  }

  private onAttached(live: LiveBrowser, event: Protocol.Target.AttachedToTargetEvent): void {
    const session = live.root.connection()?.session(event.sessionId);
    if (!session) return;
    const { targetId, openerId, browserContextId } = event.targetInfo;
    const waiter = live.awaiting.get(targetId);
    if (waiter) {
      live.awaiting.delete(targetId);
      waiter(session);
      return;
    }
    if (browserContextId === undefined || !live.contextIds.has(browserContextId)) {
      // Not a payment page (the browser's own UI of a windowed page, say): let it run, unwatched.
      void session
        .send("Runtime.runIfWaitingForDebugger")
        .catch(() => undefined)
        .finally(() => void live.root.send("Target.detachFromTarget", { sessionId: event.sessionId }).catch(() => {}));
      return;
    }
    if (openerId !== undefined && openerId !== "") {
      // A popup a payment page opened (window.open): it never runs.
      void live.root.send("Target.closeTarget", { targetId }).catch(() => undefined);
      return;
    }
    // Ours, attached before createTarget answered; an unclaimed one never runs and is closed after a while.
    live.attached.set(targetId, session);
    setTimeout(() => {
      if (live.attached.get(targetId) !== session) return;
      live.attached.delete(targetId);
      void live.root.send("Target.closeTarget", { targetId }).catch(() => undefined);
    }, 30_000).unref();
  }

  private onDetached(live: LiveBrowser, event: Protocol.Target.DetachedFromTargetEvent): void {
    const targetId = event.targetId;
    if (targetId === undefined) return;
    const lease = live.leases.get(targetId);
    if (!lease) return;
    live.leases.delete(targetId);
    lease.abort(new BrowserPoolError("PAGE_CRASHED", "the payment page was closed"));
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
      const proxy = this.options.proxy ? proxyArgs(this.options.proxy).args : [];
      launched = await launchChromium(
        this.options.executablePath,
        [...(this.options.extraArgs ?? []), ...proxy],
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
    let root: CDPSession;
    try {
      root = await launched.browser.target().createCDPSession();
    } catch (err) {
      killProcessGroup(launched.pid);
      await removeProfile(launched.userDataDir);
      throw new BrowserPoolError("LAUNCH_FAILED", `no session with the launched Chromium: ${message(err)}`, {
        cause: err,
      });
    }
    const product = await launched.browser.version().catch(() => "");
    const live: LiveBrowser = {
      ...launched,
      root,
      attached: new Map(),
      awaiting: new Map(),
      leases: new Map(),
      contextIds: new Set(),
      cleanup: null,
      hiddenUnsupported: false,
      identity: userAgentOverride(this.options.userAgent ?? null, product),
    };
    live.browser.once("disconnected", () => void this.onDisconnected(live));
    root.on("Target.attachedToTarget", (event) => this.onAttached(live, event));
    root.on("Target.detachedFromTarget", (event) => this.onDetached(live, event));
    // Every new page target waits, before its first request, for its own session's say (start()).
    await root
      .send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true })
      .catch(async (err: unknown) => {
        await this.stopBrowser(live);
        throw new BrowserPoolError("LAUNCH_FAILED", `could not watch Chromium's new pages: ${message(err)}`, {
          cause: err,
        });
      });
    this.live = live;
    this.options.logger?.info(
      { pid: live.pid, launches: this.launches, browser: product, userAgent: live.identity.userAgent },
      "chromium launched",
    );
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
    for (const lease of live.leases.values()) lease.abort(reason);
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
    for (const lease of live.leases.values()) lease.abort(new BrowserPoolError("POOL_CLOSED", "browser pool closed"));
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
