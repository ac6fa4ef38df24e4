import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createSocket } from "node:dgram";
import { BrowserPool } from "../../src/gateway-link/browser.js";
import { LinkDriverError, openLinkSession } from "../../src/gateway-link/link-driver.js";
import { paywayLinkProtocol } from "../../src/gateway-link/payway-protocol.js";
import { simulatedQr } from "../../src/simulators/upstream-qr.js";
import { CHROMIUM_PATH } from "../support/link-sim.js";
import { startPaywayTwin, type RunningTwin } from "../support/payway-twin.js";
import { sleep, waitFor } from "../support/wait.js";

// The `payway` adapter in real Chromium against the PayWay twin (page and API on two origins): the amount typed
// where the page asks, Continue pressed, the QR and what a poll needs read from list-payment-options' answer.

let twin: RunningTwin;
let pool: BrowserPool;
let usdLink: string;
let khrLink: string;

beforeAll(async () => {
  twin = await startPaywayTwin({ makeQr: simulatedQr("twin_shop@abaa", "Twin Shop") });
  // As the service's pool where loopback pages are allowed: the twin's page calls its API on another loopback port.
  pool = new BrowserPool({
    executablePath: CHROMIUM_PATH,
    maxPages: 4,
    extraArgs: ["--disable-features=LocalNetworkAccessChecks"],
  });
  usdLink = await twin.link({ currency: "USD", minAmount: "0.50", maxAmount: "500" });
  khrLink = await twin.link({ currency: "KHR" });
});

afterAll(async () => {
  await pool?.close();
  await twin?.close();
});

const open = (url: string, amount: string, currency: 116 | 840, warnings: string[] = []) =>
  openLinkSession(pool, {
    url,
    amount,
    currency,
    protocol: paywayLinkProtocol(twin.apiOrigin),
    timeoutMs: 15_000,
    onWarning: (w) => warnings.push(w),
  });

describe("payway adapter against the PayWay twin", () => {
  it("reads the QR, token, client id and original request_time; builds the deeplink; closes the page", async () => {
    const warnings: string[] = [];
    const session = await open(usdLink, "12.50", 840, warnings);
    const client = twin.twin.store.client(session.clientId);
    expect(client).toBeDefined();
    expect(session.qr).toBe(client?.qr);
    expect(client?.amount).toBe("12.50");
    expect(session.deeplink).toBe(`abamobilebank://ababank.com?type=payway&qrcode=${encodeURIComponent(session.qr)}`);
    expect(session.poll).toMatchObject({
      apiOrigin: twin.apiOrigin,
      clientId: session.clientId,
      token: client?.token,
      requestTime: client?.requestTime,
      origin: twin.pageOrigin,
      language: "en",
    });
    expect(session.poll?.referer.startsWith(`${twin.pageOrigin}/`)).toBe(true);
    // Only the cookies the browser holds for the API's origin (none here: the API is another site, whose cookie a
    // fresh context blocks as a third party's), never the page's own: a browser does not send those to the API.
    const cfBm = /(?:^|; )__cf_bm=([^;]+)/.exec(session.poll?.cookies ?? "")?.[1];
    expect(twin.twin.store.cookieIssuer(cfBm)).not.toBe("page");
    expect(session.poll?.cookies).not.toMatch(/i18n_redirected/);
    expect(session.poll?.userAgent).toMatch(/Chrome/);
    expect(warnings).toEqual([]);
    // The page is closed as soon as its QR is read (behind the answer): nothing is held for the 180 s.
    await waitFor(() => (pool.stats().pages === 0 ? true : undefined), 5_000, 50, "the page closed");
  });

  it("types a KHR amount as a whole number", async () => {
    const session = await open(khrLink, "5000", 116);
    expect(twin.twin.store.client(session.clientId)?.amount).toBe("5000.00");
  });

  it("refuses a link in another currency than configured, before anything is typed", async () => {
    const err = await open(usdLink, "5000", 116).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LinkDriverError);
    expect((err as Error).message).toBe("the payment link is in USD; this configuration is KHR");
  });

  it("reads the non-empty transaction_summary when the page state has an empty one first: a KHR link is refused on a USD configuration", async () => {
    // The twin's state, as chmabapay saw the real page's: `checkout.transaction_summary: {}` before the one with data.
    const html = await (await fetch(khrLink)).text();
    const nuxt = JSON.parse(/window\.__NUXT__=(\{.*?\});<\/script>/.exec(html)?.[1] ?? "null") as {
      state: Record<string, { transaction_summary?: { order_details?: { currency?: string } } }>;
    };
    const summaries = Object.entries(nuxt.state).flatMap(([k, v]) => (v.transaction_summary ? [k] : []));
    expect(summaries).toEqual(["checkout", "payment"]);
    expect(nuxt.state.checkout.transaction_summary).toEqual({});
    expect(nuxt.state.payment.transaction_summary?.order_details?.currency).toBe("KHR");
    // Read from the empty one, the link would state no currency, and the USD request would go ahead.
    const warnings: string[] = [];
    const err = await open(khrLink, "5.00", 840, warnings).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LinkDriverError);
    expect((err as Error).message).toBe("the payment link is in KHR; this configuration is USD");
    expect(warnings).toEqual([]);
  });

  it("refuses an amount outside the link's rules as the caller's error, naming the limit", async () => {
    const err = await open(usdLink, "0.10", 840).catch((e: unknown) => e);
    expect(err).toMatchObject({
      kind: "invalid_input",
      invalid: [{ field: "amount", message: "must be at least 0.50, the payment link's minimum" }],
    });
    // Compared as exact decimals: 500.001 is above 500 (and 500.00 is not).
    expect(await open(usdLink, "500.001", 840).catch((e: unknown) => e)).toMatchObject({
      invalid: [{ field: "amount", message: "must be at most 500.00, the payment link's maximum" }],
    });
  });

  it("a status code other than 00 fails the opening with the code and message", async () => {
    await twin.post("/sim/payway/fault", { mode: "status", code: "12", message: "Merchant suspended" });
    try {
      const err = await open(usdLink, "2.00", 840).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LinkDriverError);
      expect(err).toMatchObject({ kind: "page_error", unavailable: false });
      expect((err as Error).message).toBe('PayWay answered status 12 "Merchant suspended"');
    } finally {
      await twin.post("/sim/payway/fault", { mode: "ok" });
    }
  });

  it("a page refused with 403 says so (httpStatus 403)", async () => {
    await twin.post("/sim/payway/fault", { mode: "forbidden" });
    try {
      const err = await open(usdLink, "2.00", 840).catch((e: unknown) => e);
      // Read from the document's answer: Cloudflare's block page, not the API refusing the request's data.
      expect(err).toMatchObject({
        httpStatus: 403,
        message: "the payment page answered HTTP 403: a Cloudflare block page",
        refusal: { kind: "block", by: "page" },
      });
    } finally {
      await twin.post("/sim/payway/fault", { mode: "ok" });
    }
  });

  it("an answer larger than 64 KB (a 150 MB list-payment-options) is refused unread, with bounded memory", async () => {
    await twin.post("/sim/payway/fault", { mode: "oversize", call: "list-payment-options", bytes: 150 * 1024 * 1024 });
    try {
      const before = process.memoryUsage().rss;
      const started = Date.now();
      const err = await open(usdLink, "2.00", 840).catch((e: unknown) => e);
      const grewMb = (process.memoryUsage().rss - before) / 1e6;
      expect(err).toBeInstanceOf(LinkDriverError);
      expect((err as Error).message).toBe("request_qr: the answer is larger than 64 KB (refused unread)");
      // Read whole it cost this process hundreds of MB (the body, then its base64 and text copies).
      expect(grewMb).toBeLessThan(64);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await twin.post("/sim/payway/fault", { mode: "ok" });
    }
    // The twin's next answer is read as usual.
    expect((await open(usdLink, "2.00", 840)).qr).toMatch(/^000201/);
  });

  it("a page's WebRTC sends nothing over UDP: a STUN server on a loopback port hears no packet", async () => {
    const udp = createSocket("udp4");
    const packets: string[] = [];
    udp.on("message", (_msg, from) => packets.push(`${from.address}:${from.port}`));
    await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
    await twin.post("/sim/payway/fault", { mode: "webrtc", udpPort: udp.address().port });
    const lease = await pool.acquire({ url: usdLink, allowedOrigins: [twin.pageOrigin, twin.apiOrigin] });
    try {
      expect(await lease.start()).toBe(200);
      // The page tried (its script ran); ICE gathering asks the STUN server within milliseconds when it can.
      const { result } = await lease.session.send("Runtime.evaluate", {
        expression: "window.__webrtc",
        returnByValue: true,
      });
      expect(result.value).toMatch(/^(opened|refused: .+)$/);
      await sleep(2_000);
      expect(packets).toEqual([]);
    } finally {
      await lease.release();
      await twin.post("/sim/payway/fault", { mode: "ok" });
      udp.close();
    }
  });
});
