import { describe, it, expect, afterAll, beforeAll } from "@jest/globals";
import type { Browser } from "puppeteer-core";
import { AUTH } from "../support/app.js";
import { launchBrowser } from "../support/browser.js";
import { CHECKOUT_ELEMENT, openCheckout, shownText } from "../support/checkout-page.js";
import { Client, pool } from "../support/http.js";
import { startReverseProxy, type ReverseProxy } from "../support/reverse-proxy.js";
import { ADMIN_TOKEN, startService, type FuzzService } from "../support/service.js";
import { openSocket } from "../support/ws.js";

/**
 * Client-token lock-out behind a proxy (docs/faults.md): the service as a child process with its defaults for the
 * failed-credential throttle (10 a minute) and the rate limiter, behind a reverse proxy that does what the compose
 * file's nginx does (test/support/reverse-proxy.ts). One hostile client (127.0.0.66) sends bogus client tokens
 * through the proxy — checkout views and graphql-ws connection_inits, alternately — at HOSTILE_RATE a second, while
 * SHOPPERS shoppers (NEIGHBOURS of them behind the hostile's own address, as behind one NAT) keep loading their
 * checkout as the page does (the view over HTTP, then the subscription's first event), and a few real checkout
 * pages open in Chromium. Twice: with TRUSTED_PROXIES naming the proxy (the hostile is throttled at its own
 * address), and without (every client is the proxy's address, so the hostile throttles the proxy's: the valid
 * client tokens must still pass). Before the change every shopper was refused once the hostile had sent 10.
 */
const SHOPPERS = Number(process.env.PROXY_SHOPPERS ?? 40);
const DURATION_MS = Number(process.env.PROXY_DURATION_MS ?? 15_000);
const HOSTILE_RATE = Number(process.env.PROXY_HOSTILE_RATE ?? 50);
const PAGES = 3;
const NEIGHBOURS = 5;
const HOSTILE = "127.0.0.66";
const SUBSCRIPTION = `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id transaction { status } } }`;

interface Checkout {
  transactionId: string;
  clientToken: string;
}

interface Figures {
  loads: number;
  refused: string[];
  /** Milliseconds from asking for the view to the subscription's first event, per load. */
  loadMs: number[];
  /** What the hostile's bogus tokens were answered with: HTTP statuses and websocket close codes. */
  hostile: Record<string, number>;
  pages: string[];
  /** The admin token through the proxy from the hostile's address, and from another. */
  admin: { fromHostile: number; elsewhere: number };
}

const bogus = (i: number) => `ct_${Buffer.from(`txn_bogus${i}.9999999999999.key_x`).toString("base64url")}.forged`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function get(url: string, from: string, path: string, token: string, body?: unknown) {
  const client = new Client(url, 1, from);
  try {
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    if (body === undefined) return await client.send({ method: "GET", path, headers });
    return await client.send({ method: "POST", path, headers, body: Buffer.from(JSON.stringify(body)) });
  } finally {
    client.close();
  }
}

/** One checkout load as the page does it, from `from` through the proxy; null when it worked, else why not. */
async function load(proxy: ReverseProxy, from: string, c: Checkout, ms: number[]): Promise<string | null> {
  const started = performance.now();
  const view = await get(proxy.url, from, `/checkout/view/${c.transactionId}`, c.clientToken);
  if (view.status !== 200) return `view ${view.status}`;
  const socket = await openSocket(proxy.url, { clientToken: c.clientToken }, { localAddress: from });
  if (!socket.isOpen()) return `socket ${(await socket.closed).code}`;
  try {
    socket.subscribe("1", SUBSCRIPTION, { id: c.transactionId });
    await socket.next((m) => m.type === "next", 20_000);
    ms.push(performance.now() - started);
    return null;
  } catch {
    return "no first event";
  } finally {
    socket.close();
  }
}

/** The hostile client until `until`: bogus tokens over HTTP and graphql-ws, alternately, at HOSTILE_RATE. */
async function hostile(proxy: ReverseProxy, until: number, counts: Record<string, number>, c: Checkout) {
  const count = (k: string) => void (counts[k] = (counts[k] ?? 0) + 1);
  const sent: Promise<void>[] = [];
  for (let i = 0; Date.now() < until; i++) {
    sent.push(
      i % 2 === 0
        ? get(proxy.url, HOSTILE, `/checkout/view/${c.transactionId}`, bogus(i)).then((a) => count(`HTTP ${a.status}`))
        : openSocket(proxy.url, { clientToken: bogus(i) }, { localAddress: HOSTILE }).then(async (s) =>
            count(s.isOpen() ? "ws acknowledged" : `ws ${(await s.closed).code}`),
          ),
    );
    await sleep(1000 / HOSTILE_RATE);
  }
  await Promise.all(sent);
}

/** A real checkout page through the proxy: "live" with its amount, or what it shows instead. */
async function page(browser: Browser, proxy: ReverseProxy, c: Checkout): Promise<string> {
  const tab = await browser.newPage();
  try {
    await openCheckout(tab, `${proxy.url}/pay/${c.transactionId}#token=${encodeURIComponent(c.clientToken)}`);
    return "live";
  } catch {
    return `not live: ${await shownText(tab, `${CHECKOUT_ELEMENT} .pqc-status`).catch(() => "?")}`;
  } finally {
    await tab.close();
  }
}

async function scenario(browser: Browser, trustedProxies: string): Promise<Figures> {
  let svc: FuzzService | null = null;
  let proxy: ReverseProxy | null = null;
  try {
    svc = await startService({
      TRUSTED_PROXIES: trustedProxies,
      BEARER_FAILURES_PER_MINUTE: "",
      RATE_LIMIT_PER_MINUTE: "",
    });
    const tenant = await svc.createTenant();
    const url = svc.url;
    // Each shopper's payment, generated by the merchant's server (its API key, straight to the service).
    const checkouts = await pool([...Array(SHOPPERS + PAGES + 1).keys()], 4, async () => {
      const res = await fetch(`${url}/qr/generate`, {
        method: "POST",
        headers: { "content-type": "application/json", ...AUTH.qr(tenant.keys.qr) },
        body: JSON.stringify({ amount: 2.5, currency: 840, expiredAfter: 600_000 }),
      });
      return (await res.json()) as Checkout;
    });
    proxy = await startReverseProxy(url);
    const figures: Figures = {
      loads: 0,
      refused: [],
      loadMs: [],
      hostile: {},
      pages: [],
      admin: { fromHostile: 0, elsewhere: 0 },
    };
    const until = Date.now() + DURATION_MS;
    const p = proxy;
    const attack = hostile(p, until, figures.hostile, checkouts[SHOPPERS + PAGES] as Checkout);
    // The shoppers arrive once the hostile has spent its budget: the address it throttles is theirs too.
    await sleep(1000);
    const shoppers = checkouts.slice(0, SHOPPERS).map(async (c, i) => {
      const from = i < NEIGHBOURS ? HOSTILE : `127.0.1.${i + 1}`;
      while (Date.now() < until) {
        const why = await load(p, from, c, figures.loadMs);
        figures.loads++;
        if (why !== null) figures.refused.push(`${from}: ${why}`);
        await sleep(500);
      }
    });
    const pages = Promise.all(checkouts.slice(SHOPPERS, SHOPPERS + PAGES).map((c) => page(browser, p, c)));
    await Promise.all([attack, ...shoppers]);
    figures.pages = await pages;
    const admin = (from: string) => get(p.url, from, "/graphql", ADMIN_TOKEN, { query: "{ merchants { id } }" });
    figures.admin = { fromHostile: (await admin(HOSTILE)).status, elsewhere: (await admin("127.0.0.77")).status };
    expect(svc.errorLines()).toEqual([]);
    return figures;
  } finally {
    await proxy?.close();
    await svc?.stop();
  }
}

function summary(name: string, f: Figures): string {
  const ms = [...f.loadMs].sort((a, b) => a - b);
  const at = (q: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? NaN);
  return (
    `${name}: ${SHOPPERS} shoppers (${NEIGHBOURS} at the hostile's address), ${f.loads} checkout loads in ` +
    `${DURATION_MS / 1000} s, refused ${f.refused.length}${f.refused.length ? ` (${f.refused.slice(0, 5).join("; ")})` : ""}; ` +
    `load → first event p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms; hostile (${HOSTILE_RATE}/s): ` +
    `${JSON.stringify(f.hostile)}; Chromium pages: ${f.pages.join(", ")}; admin token from the hostile's address ` +
    `${f.admin.fromHostile}, from another ${f.admin.elsewhere}`
  );
}

describe("client-token lock-out behind a proxy", () => {
  let browser: Browser;
  const lines: string[] = [];
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    if (lines.length) console.log(lines.join("\n"));
    await browser?.close();
  });

  it("TRUSTED_PROXIES names the proxy: the hostile is throttled at its own address; no shopper is refused", async () => {
    const f = await scenario(browser, "127.0.0.1");
    lines.push(summary("trusted proxy", f));
    expect(f.refused).toEqual([]);
    expect(f.loads).toBeGreaterThanOrEqual(SHOPPERS);
    expect(f.pages).toEqual(Array<string>(PAGES).fill("live"));
    // Its first 10 are judged (401 over HTTP, 4403 on a socket); every later one is refused unchecked.
    expect((f.hostile["HTTP 401"] ?? 0) + (f.hostile["ws 4403"] ?? 0)).toBe(10);
    expect((f.hostile["HTTP 429"] ?? 0) + (f.hostile["ws 4429"] ?? 0)).toBeGreaterThan(0);
    expect(f.admin).toEqual({ fromHostile: 429, elsewhere: 200 });
  });

  it("TRUSTED_PROXIES unset: every client is the proxy's address; the hostile throttles it, and still no shopper is refused", async () => {
    const f = await scenario(browser, "");
    lines.push(summary("no trusted proxy", f));
    expect(f.refused).toEqual([]);
    expect(f.loads).toBeGreaterThanOrEqual(SHOPPERS);
    expect(f.pages).toEqual(Array<string>(PAGES).fill("live"));
    expect((f.hostile["HTTP 401"] ?? 0) + (f.hostile["ws 4403"] ?? 0)).toBe(10);
    // The admin lock-out stays, and here it reaches every admin behind the proxy: set TRUSTED_PROXIES.
    expect(f.admin).toEqual({ fromHostile: 429, elsewhere: 429 });
  });
});
