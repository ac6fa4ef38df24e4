import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { linkModule } from "../../src/gateway-link/index.js";
import { BrowserPool } from "../../src/gateway-link/browser.js";
import { LinkDriverError, openLinkSession } from "../../src/gateway-link/link-driver.js";
import { paywayLinkProtocol } from "../../src/gateway-link/payway-protocol.js";
import { listOptionsHash, PAYWAY_PATHS } from "../../src/upstreams/payway.js";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { CHROMIUM_PATH } from "../support/link-sim.js";
import { startPaywayTwin } from "../support/payway-twin.js";
import type { LinkReadiness } from "../support/payway-rig.js";
import { waitFor } from "../support/wait.js";

// Refusals told apart, and a browser that looks like one, in real Chromium against the service's PayWay twin: the
// edge's challenge for a headless fingerprint (which the service's browser passes and a HeadlessChrome one does
// not), the API's JSON refusals at creation ("Invalid Data": the page is opened again) and on polls ("Invalid
// Token": polled on, no held page), a Cloudflare block on polls (held page), and what /readyz says of each.

interface Seen {
  visits: Record<string, number>;
  pages: { link: string; userAgent: string | null; secChUa: string | null; challenged: boolean }[];
  scripts: { link: string; webdriver: boolean | null; userAgent: string | null; brands: string[] }[];
  calls: { call: string; userAgent: string | null; challenged: boolean }[];
}

describe("PayWay refusals told apart, and the browser's identity", () => {
  let t: TestApp;
  let tenant: Tenant;
  let code: string;
  const gen = (amount = 5000) =>
    post(`${t.url}/gateway-link/generate-qr`, { amount, currency: 116 }, AUTH.gatewayLink(tenant.keys.gatewayLink));
  const status = async (id: string) => (await t.app.core.store.get(id))?.status;
  const seen = async () => (await (await fetch(`${t.url}/sim/payway/seen`)).json()) as Seen;
  const readiness = async () =>
    ((await (await fetch(`${t.url}/readyz`)).json()) as { details?: { gatewayLink?: LinkReadiness } }).details
      ?.gatewayLink;
  const fault = (body: Record<string, unknown>) => post(`${t.url}/sim/payway/fault`, body);
  const twinPolls = async (clientId: string) =>
    ((await (await fetch(`${t.url}/sim/link/clients/${clientId}`)).json()) as { polls: number }).polls;

  beforeAll(async () => {
    // Polls every second (the page's 3 s is not what is tested here): backoffs and held pages show sooner.
    t = await startTestApp({ LINK_POLL_INTERVAL_MS: "1000" });
    code = ((await post(`${t.url}/sim/payway/links`, { currency: "KHR" })).body as { code: string }).code;
    tenant = await createTenant(t, { linkUrl: `${t.url}/sim/payway/${code}`, linkProtocol: "payway" });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("challenge mode: the service's browser passes — a Chrome user agent without Headless, navigator.webdriver false, on the page and on polls", async () => {
    await fault({ mode: "challenge" });
    try {
      const res = await gen(5000);
      expect(res.status).toBe(200);
      const { transactionId, data } = res.body as { transactionId: string; data: { clientId: string } };
      await waitFor(async () => ((await twinPolls(data.clientId)) > 0 ? true : null), 10_000);
      const s = await seen();
      const page = s.pages.filter((p) => p.link === code).at(-1);
      expect(page?.challenged).toBe(false);
      expect(page?.userAgent).toMatch(/^Mozilla\/5\.0 \(X11; Linux x86_64\) .* Chrome\/\d+\.0\.0\.0 Safari\/537\.36$/);
      expect(page?.userAgent).not.toMatch(/headless/i);
      if (page?.secChUa !== null) expect(page?.secChUa).not.toMatch(/headless/i);
      const script = s.scripts.filter((p) => p.link === code).at(-1);
      expect(script).toMatchObject({ webdriver: false, userAgent: page?.userAgent });
      expect(script?.brands).toContain("Chromium");
      expect(script?.brands.join(" ")).not.toMatch(/headless/i);
      // The worker's own polls carry the page's user agent, and the edge lets them through.
      const polls = s.calls.filter((c) => c.call === "check-payment-status");
      expect(polls.length).toBeGreaterThan(0);
      expect(polls.at(-1)).toMatchObject({ userAgent: page?.userAgent, challenged: false });
      expect((await post(`${t.url}/sim/link/approve`, { clientId: data.clientId })).status).toBe(200);
      await waitFor(async () => ((await status(transactionId)) === "SUCCESS" ? true : null), 15_000);
    } finally {
      await fault({ mode: "ok" });
    }
  }, 45_000);

  it("challenge mode does challenge what says it is headless: a HeadlessChrome page, and a page whose navigator.webdriver is true", async () => {
    // A browser that says HeadlessChrome, driven like the service's: its page load is challenged, and the driver
    // reads the answer as Cloudflare's challenge, not as the page's own refusal.
    const twin = await startPaywayTwin();
    const pool = new BrowserPool({
      executablePath: CHROMIUM_PATH,
      maxPages: 1,
      extraArgs: ["--disable-features=LocalNetworkAccessChecks"],
      userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0",
    });
    try {
      await twin.post("/sim/payway/fault", { mode: "challenge" });
      const url = await twin.link({ currency: "KHR" });
      const opened = openLinkSession(pool, {
        url,
        amount: "5000",
        currency: 116,
        protocol: paywayLinkProtocol(twin.apiOrigin),
        timeoutMs: 15_000,
      });
      const err = await opened.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(LinkDriverError);
      expect((err as LinkDriverError).refusal).toMatchObject({ kind: "challenge", by: "page", status: 403 });
      expect((err as LinkDriverError).message).toMatch(/HTTP 403: a Cloudflare challenge/);
      expect(twin.twin.edge.pages.at(-1)).toMatchObject({ challenged: true });
      expect(twin.twin.edge.pages.at(-1)?.userAgent).toMatch(/HeadlessChrome/);
    } finally {
      await pool.close();
      await twin.close();
    }
    // A page whose detections report navigator.webdriver true gets no QR; the same page reporting false does.
    await fault({ mode: "challenge" });
    try {
      expect(await askForQr(true)).toMatchObject({ status: 403, mitigated: "challenge" });
      expect(await askForQr(false)).toMatchObject({ status: 200, mitigated: null });
    } finally {
      await fault({ mode: "ok" });
    }
  }, 45_000);

  /** A page visit as a browser would make it, its detections reporting `webdriver`, then its QR request. */
  async function askForQr(webdriver: boolean): Promise<{ status: number; mitigated: string | null }> {
    const userAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0";
    const page = await fetch(`${t.url}/sim/payway/${code}`, { headers: { "user-agent": userAgent } });
    const html = await page.text();
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const report = /"(cdn-cgi\/challenge-platform\/h\/b\/jsd\/r\/[0-9a-f]+)"/.exec(html)?.[1] ?? "";
    expect(report).not.toBe("");
    const reported = await fetch(`${t.url}/sim/payway/${report}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ webdriver, userAgent, brands: ["Chromium"] }),
    });
    expect(reported.status).toBe(204);
    const abaData = JSON.parse(`"${/"aba_data":"([^"]+)"/.exec(html)?.[1] ?? ""}"`) as string;
    const requestTime = /"request_time":"(\d{14})"/.exec(html)?.[1] ?? "";
    const additional = JSON.stringify({ amount: "5000.00" });
    const apiOrigin = /"api":"([^"]+)"/.exec(html)?.[1] ?? "";
    const answer = await fetch(apiOrigin + PAYWAY_PATHS.listPaymentOptions, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        origin: t.url,
        referer: `${t.url}/`,
        cookie,
        "user-agent": userAgent,
      },
      body: JSON.stringify({
        additional_fields: additional,
        request_time: requestTime,
        aba_data: abaData,
        hash: listOptionsHash(requestTime, abaData, additional),
      }),
    });
    await answer.text();
    return { status: answer.status, mitigated: answer.headers.get("cf-mitigated") };
  }

  it('"Invalid Data" at creation: the page is opened again (two page visits) and the QR issued; /readyz counts the JSON refusal', async () => {
    const before = (await seen()).visits[code] ?? 0;
    await fault({ mode: "invalid-data-once" });
    try {
      const res = await gen(6000);
      expect(res.status).toBe(200);
      expect((await seen()).visits[code]).toBe(before + 2);
      const ready = await readiness();
      expect(ready?.refusals.pageRefusedData.count).toBeGreaterThanOrEqual(1);
      expect(ready?.refusals.pageRefusedData.last?.where).toBe("the page's QR request (list-payment-options)");
      expect(ready?.refusals.pageRefusedData.last?.detail).toBe(
        'HTTP 403: the API refused the request (code 403 "Invalid Data")',
      );
    } finally {
      await fault({ mode: "ok" });
    }
  }, 30_000);

  it('"Invalid Data" on the fresh page too → 502 naming PayWay\'s code and message, FAILED', async () => {
    const before = (await seen()).visits[code] ?? 0;
    await fault({ mode: "invalid-data-once", calls: 2 });
    try {
      const res = await gen(6500);
      expect(res.status).toBe(502);
      const error = (res.body as { error: { message: string; transactionId: string } }).error;
      expect(error.message).toBe(
        "The payment page refused: its API refused the request twice, on a freshly loaded page too " +
          '(code 403, "Invalid Data")',
      );
      expect((await seen()).visits[code]).toBe(before + 2);
      expect(await status(error.transactionId)).toBe("FAILED");
    } finally {
      await fault({ mode: "ok" });
    }
  }, 30_000);

  it('"Invalid Token" on polls: no held page, polled on (not FAILED), /readyz names the stale page state with counts; the approval is read once the API answers', async () => {
    const counted = (await readiness())?.refusals.pageRefusedData.count ?? 0;
    await fault({ mode: "invalid-token", calls: 3 });
    try {
      const res = await gen(7000);
      expect(res.status).toBe(200);
      const { transactionId, data } = res.body as { transactionId: string; data: { clientId: string } };
      const ready = await waitFor(async () => {
        const r = await readiness();
        return (r?.refusals.pageRefusedData.count ?? 0) >= counted + 2 ? r : null;
      }, 15_000);
      expect(ready.refused).toMatch(/^the status poll answered HTTP 403 since /);
      expect(ready.likelyCause).toMatch(/^the page refuses the request's data \(stale page state/);
      expect(ready.setting).toBeUndefined();
      expect(ready.refusals.pageRefusedData.last?.detail).toBe(
        'HTTP 403: the API refused the request (code 403 "Invalid Token")',
      );
      const { watch, pool } = t.app.module(linkModule);
      expect(watch.stats().viaPage).toBe(0);
      expect(pool.stats().pages).toBe(0);
      expect(await status(transactionId)).toBe("PENDING");
      // The API answers again after its refusals: the approval is read from the worker's own polls.
      expect((await post(`${t.url}/sim/link/approve`, { clientId: data.clientId })).status).toBe(200);
      await waitFor(async () => ((await status(transactionId)) === "SUCCESS" ? true : null), 20_000);
      expect(watch.stats().viaPage).toBe(0);
    } finally {
      await fault({ mode: "ok" });
    }
  }, 40_000);

  it("a Cloudflare block on polls → a held page; /readyz says LINK_PROXY, with counts", async () => {
    const counted = (await readiness())?.refusals.cloudflareBlock.count ?? 0;
    await fault({ mode: "bot-check" });
    try {
      const res = await gen(8000);
      const { transactionId, data } = res.body as { transactionId: string; data: { clientId: string } };
      const { watch } = t.app.module(linkModule);
      // This payment, and any earlier one of the configuration still watched late, now go through a page.
      await waitFor(async () => (watch.stats().viaPage >= 1 ? true : null), 15_000);
      const ready = await readiness();
      expect(ready?.refused).toMatch(/^the status poll answered HTTP 403 since /);
      expect(ready?.setting).toBe("LINK_PROXY");
      expect(ready?.likelyCause).toMatch(/datacenter or outside Cambodia.*LINK_PROXY/);
      expect(ready?.refusals.cloudflareBlock.count).toBeGreaterThan(counted);
      expect(ready?.refusals.cloudflareBlock.last?.detail).toBe("HTTP 403: a Cloudflare block page");
      expect((await post(`${t.url}/sim/link/approve`, { clientId: data.clientId })).status).toBe(200);
      await waitFor(async () => ((await status(transactionId)) === "SUCCESS" ? true : null), 20_000);
    } finally {
      await fault({ mode: "ok" });
    }
  }, 40_000);
});
