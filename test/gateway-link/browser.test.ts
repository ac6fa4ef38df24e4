import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import type { AddressInfo } from "node:net";
import express from "express";
import { BrowserPool, BrowserPoolError, type PageLease } from "../../src/gateway-link/browser.js";
import { openLinkSession } from "../../src/gateway-link/link-driver.js";
import { listProcs, processTree } from "../../src/gateway-link/process-tree.js";
import { paywayLinkProtocol } from "../../src/gateway-link/payway-protocol.js";
import { CHROMIUM_PATH } from "../support/link-sim.js";
import { startPaywayTwin, type RunningTwin } from "../support/payway-twin.js";
import { waitFor } from "../support/wait.js";

let twin: RunningTwin;
/** The twin's KHR link page. */
let linkUrl: string;
let assets: { url: string; hits: string[]; close: () => void };

/** The twin's page calls its API on another loopback origin: Chromium's local-network checks off, as the service does. */
const LOOPBACK = ["--disable-features=LocalNetworkAccessChecks"];

/** The driver's options for a KHR payment of `amount` on the twin's link. */
const payment = (amount: string) => ({
  url: linkUrl,
  amount,
  currency: 116 as const,
  protocol: paywayLinkProtocol(twin.apiOrigin),
  timeoutMs: 15_000,
});

beforeAll(async () => {
  twin = await startPaywayTwin();
  linkUrl = await twin.link({ currency: "KHR" });
  // A page that references every kind of resource the pool blocks, and counts what reaches the server.
  const hits: string[] = [];
  const app = express();
  app.use((req, _res, next) => {
    hits.push(req.path);
    next();
  });
  app.get("/page", (_req, res) => {
    res.type("html").send(`<!doctype html><link rel="stylesheet" href="/style.css"><img src="/pic.png">
      <video src="/clip.mp4"></video><p id="ok">ok</p><script src="/app.js"></script>`);
  });
  app.get("/app.js", (_req, res) => {
    res.type("js").send("document.getElementById('ok').textContent = 'script ran';");
  });
  app.use((_req, res) => {
    res.status(404).end();
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  assets = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
});

afterAll(async () => {
  assets.close();
  await twin.close();
});

/** Runs `expression` in the lease's page and returns its value. */
async function evaluate(lease: PageLease, expression: string): Promise<unknown> {
  const { result, exceptionDetails } = await lease.session.send("Runtime.evaluate", {
    expression,
    awaitPromise: true,
    returnByValue: true,
  });
  if (exceptionDetails) throw new Error(exceptionDetails.text);
  return result.value as unknown;
}

async function opened(pool: BrowserPool, url: string): Promise<PageLease> {
  const lease = await pool.acquire({ url });
  expect(await lease.start()).toBe(200);
  return lease;
}

function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

function userDataDirs(): string[] {
  return readdirSync(tmpdir()).filter((name) => name.startsWith("pqr-chromium-"));
}

describe("BrowserPool", () => {
  it("launches Chromium lazily, once, and gives each lease its own browser context", async () => {
    const pool = new BrowserPool({ executablePath: CHROMIUM_PATH, maxPages: 2 });
    try {
      expect(pool.stats()).toEqual({ pages: 0, waiting: 0, launched: 0, pid: null, contexts: 0, held: 0, opening: 0 });
      const [a, b] = await Promise.all([opened(pool, linkUrl), opened(pool, linkUrl)]);
      expect(pool.stats()).toMatchObject({ pages: 2, launched: 1, pid: expect.any(Number), contexts: 2 });
      await evaluate(a, `localStorage.setItem("who", "a"); document.cookie = "who=a"`);
      expect(await evaluate(b, `[localStorage.getItem("who"), document.cookie.includes("who=")]`)).toEqual([
        null,
        false,
      ]);
      await Promise.all([a.release(), b.release()]);
      expect(pool.stats()).toMatchObject({ pages: 0, contexts: 0 });
    } finally {
      await pool.close();
    }
  });

  it("ends a released page's renderer process: payments do not pile up Chromium processes", async () => {
    const pool = new BrowserPool({ executablePath: CHROMIUM_PATH, maxPages: 4 });
    const renderers = () =>
      processTree(pool.stats().pid ?? -1).filter((p) => readCmdline(p.pid).includes("--type=renderer")).length;
    try {
      // Counted while the four pages are open (a renderer of an earlier page may still be exiting, so no idle count
      // is taken first): releasing them must end four renderers.
      const leases = await Promise.all([1, 2, 3, 4].map(() => opened(pool, linkUrl)));
      const busy = renderers();
      expect(busy).toBeGreaterThanOrEqual(4);
      await Promise.all(leases.map((l) => l.release()));
      await waitFor(() => (renderers() <= busy - 4 ? true : undefined), 10_000, 50, "the released renderers to end");
    } finally {
      await pool.close();
    }
  });

  it("refuses a document outside the allowed origins before it loads: start() rejects, nothing reaches the other site", async () => {
    const pool = new BrowserPool({ executablePath: CHROMIUM_PATH, maxPages: 1 });
    try {
      const hitsBefore = assets.hits.length;
      const lease = await pool.acquire({ url: `${assets.url}/page`, allowedOrigins: [new URL(linkUrl).origin] });
      await expect(lease.start()).rejects.toThrow(/BlockedByClient/);
      expect(assets.hits.length).toBe(hitsBefore);
      await lease.release();
    } finally {
      await pool.close();
    }
  });

  it("caps concurrent pages: a caller waits for a free one, and gives up with POOL_FULL after its bound", async () => {
    const pool = new BrowserPool({ executablePath: CHROMIUM_PATH, maxPages: 2 });
    try {
      const url = linkUrl;
      const held = [await pool.acquire({ url }), await pool.acquire({ url })];
      const refused = await pool.acquire({ url, timeoutMs: 150 }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(BrowserPoolError);
      expect((refused as BrowserPoolError).code).toBe("POOL_FULL");

      let third: PageLease | undefined;
      const waiting = pool.acquire({ url, timeoutMs: 10_000 }).then((lease) => {
        third = lease;
      });
      await waitFor(() => pool.stats().waiting === 1, 5_000, 10, "the third request queued");
      expect(pool.stats()).toMatchObject({ pages: 2, waiting: 1 });
      expect(third).toBeUndefined();
      await held[0]!.release();
      await waiting;
      expect(third).toBeDefined();
      expect(pool.stats()).toMatchObject({ pages: 2, waiting: 0 });
      await Promise.all([held[1]!.release(), third!.release(), third!.release()]);
      expect(pool.stats().pages).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('also drives the page in windowed mode (pageMode: "window")', async () => {
    const pool = new BrowserPool({
      executablePath: CHROMIUM_PATH,
      maxPages: 1,
      pageMode: "window",
      extraArgs: LOOPBACK,
    });
    try {
      const session = await openLinkSession(pool, payment("8000"));
      expect(session.qr).toMatch(/^KHQR-8000(\.00)?-116-/);
      expect(session.poll.clientId).toBe(session.clientId);
    } finally {
      await pool.close();
    }
  });

  it("never fetches images, fonts or media, but loads the page's stylesheets and runs its scripts", async () => {
    const pool = new BrowserPool({ executablePath: CHROMIUM_PATH, maxPages: 1 });
    try {
      assets.hits.length = 0;
      const lease = await opened(pool, `${assets.url}/page`);
      await waitFor(
        async () =>
          (await evaluate(lease, `document.getElementById("ok").textContent`)) === "script ran" ? true : undefined,
        5_000,
        50,
        "the page's script ran",
      );
      // Loaded: every request the page made has been answered or refused, so any asset it fetched was counted.
      await waitFor(
        async () => ((await evaluate(lease, `document.readyState`)) === "complete" ? true : undefined),
        5_000,
        50,
        "the page loaded",
      );
      // Stylesheets load (decision 0198): a page may show its form only once styled.
      expect([...assets.hits].sort()).toEqual(["/app.js", "/page", "/style.css"]);
      await lease.release();
    } finally {
      await pool.close();
    }
  });

  it("aborts a lease whose page crashed, leaving the browser and other leases working", async () => {
    const pool = new BrowserPool({ executablePath: CHROMIUM_PATH, maxPages: 2 });
    try {
      const [doomed, other] = await Promise.all([opened(pool, linkUrl), opened(pool, linkUrl)]);
      await doomed.session.send("Page.navigate", { url: "chrome://crash" }).catch(() => undefined);
      await waitFor(() => (doomed.signal.aborted ? true : undefined), 10_000, 50, "lease aborted");
      expect(doomed.signal.reason).toMatchObject({ name: "BrowserPoolError", code: "PAGE_CRASHED" });
      expect(other.signal.aborted).toBe(false);
      expect(await evaluate(other, `document.location.href`)).toBe(linkUrl);
      await Promise.all([doomed.release(), other.release()]);
      expect(pool.stats()).toMatchObject({ pages: 0, launched: 1 });
    } finally {
      await pool.close();
    }
  });

  it("aborts the leases in flight when the browser is killed, and relaunches on the next open", async () => {
    const pool = new BrowserPool({ executablePath: CHROMIUM_PATH, maxPages: 4, extraArgs: LOOPBACK });
    try {
      const lease = await opened(pool, linkUrl);
      const { pid } = pool.stats();
      expect(pid).toEqual(expect.any(Number));
      process.kill(pid!, "SIGKILL");
      await waitFor(() => (lease.signal.aborted ? true : undefined), 10_000, 50, "lease aborted");
      await lease.release();
      expect(pool.stats()).toMatchObject({ pages: 0, pid: null, launched: 1 });

      const again = await openLinkSession(pool, payment("3000"));
      expect(again.qr).toMatch(/^KHQR-3000(\.00)?-116-/);
      expect(pool.stats().launched).toBe(2);
      expect(pool.stats().pid).not.toBe(pid);
    } finally {
      await pool.close();
    }
  });

  it("close() stops every Chromium process and removes the profile; it is idempotent and refuses new leases", async () => {
    const before = new Set(userDataDirs());
    const pool = new BrowserPool({ executablePath: CHROMIUM_PATH, maxPages: 3 });
    const leases = await Promise.all([opened(pool, linkUrl), opened(pool, linkUrl)]);
    const pid = pool.stats().pid!;
    const tree = processTree(pid).map((p) => p.pid);
    expect(tree.length).toBeGreaterThan(3); // browser, zygotes, utility and renderer processes
    // Other test files launch Chromium at the same time: this pool's profile is the one on its browser's command line.
    const dirs = userDataDirs().filter((d) => !before.has(d) && readCmdline(pid).includes(`${tmpdir()}/${d}`));
    expect(dirs).toHaveLength(1);

    await Promise.all([pool.close(), pool.close()]);
    await pool.close();
    expect(leases.every((l) => l.signal.aborted)).toBe(true);
    // Exited processes may linger as zombies where PID 1 does not reap orphans; they hold nothing.
    const alive = listProcs().filter((p) => p.state !== "Z" && (tree.includes(p.pid) || p.pgid === pid));
    expect(alive).toEqual([]);
    expect(existsSync(`${tmpdir()}/${dirs[0]}`)).toBe(false);
    const err = await pool.acquire({ url: linkUrl }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as BrowserPoolError).code).toBe("POOL_CLOSED");
    expect(pool.stats()).toMatchObject({ pid: null });
  });
});
