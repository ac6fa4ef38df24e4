import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { automatedChromium } from "../support/automated-chromium.js";
import type { LinkReadiness } from "../support/payway-rig.js";
import { waitFor } from "../support/wait.js";

// What the PayWay page sees of the service's browser, through the service, in real Chromium against its twin:
// the configured LINK_USER_AGENT on the page load, its client hints and the worker's own polls; a Cloudflare
// challenge when the browser still looks automated, and what /readyz then says; a page that shows its form only
// once its stylesheet loads. The service runs a Chromium without the navigator.webdriver fix (CHROMIUM_PATH is a
// wrapper that drops the flag, test/support/automated-chromium.ts): only the twin's `challenge` mode reads it.

const USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

interface Seen {
  pages: { link: string; userAgent: string | null; secChUa: string | null; challenged: boolean }[];
  scripts: { link: string; webdriver: boolean | null; userAgent: string | null; brands: string[] }[];
  calls: { call: string; at: string; userAgent: string | null; secChUa: string | null; challenged: boolean }[];
}

describe("the service's browser as the PayWay page sees it", () => {
  let t: TestApp;
  let dir: string;
  let tenant: Tenant;
  let code: string;
  const gen = (amount: number, who: Tenant = tenant) =>
    post(`${t.url}/gateway-link/generate-qr`, { amount, currency: 116 }, AUTH.gatewayLink(who.keys.gatewayLink));
  const seen = async () => (await (await fetch(`${t.url}/sim/payway/seen`)).json()) as Seen;
  const readiness = async () => {
    const res = await fetch(`${t.url}/readyz`);
    return ((await res.json()) as { details?: { gatewayLink?: LinkReadiness } }).details?.gatewayLink;
  };
  const fault = (body: Record<string, unknown>) => post(`${t.url}/sim/payway/fault`, body);
  const addLink = async (options: Record<string, unknown>) =>
    ((await post(`${t.url}/sim/payway/links`, { currency: "KHR", ...options })).body as { code: string }).code;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pqr-identity-"));
    t = await startTestApp({
      LINK_USER_AGENT: USER_AGENT,
      CHROMIUM_PATH: automatedChromium(dir),
      LINK_POLL_INTERVAL_MS: "1000",
    });
    code = await addLink({});
    tenant = await createTenant(t, { linkUrl: `${t.url}/sim/payway/${code}`, linkProtocol: "payway" });
  });
  afterAll(async () => {
    await t?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("LINK_USER_AGENT is what the page load, its client hints, the page's QR request and the worker's polls carry", async () => {
    const since = new Date(t.clock.now().getTime() - 1000).toISOString();
    const res = await gen(5000);
    expect(res.status).toBe(200);
    const { data } = res.body as { data: { clientId: string } };
    const polls = await waitFor(async () => {
      const calls = (await seen()).calls.filter((c) => c.call === "check-payment-status" && c.at >= since);
      return calls.length > 0 ? calls : null;
    }, 10_000);
    const s = await seen();
    const page = s.pages.filter((p) => p.link === code).at(-1);
    expect(page?.userAgent).toBe(USER_AGENT);
    // The client hints say the configured user agent's version, on the page load (whose navigation starts before
    // the page's override is set) as on the page's own QR request: not the installed Chromium's.
    const hints = '"Chromium";v="131", "Not_A Brand";v="24"';
    expect(page?.secChUa).toBe(hints);
    const created = s.calls.filter((c) => c.call === "list-payment-options" && c.at >= since);
    expect(created.at(-1)).toMatchObject({ userAgent: USER_AGENT, secChUa: hints });
    // Sent by the worker itself (the page was closed once its QR was read), with the page's user agent.
    expect(polls.every((c) => c.userAgent === USER_AGENT)).toBe(true);
    expect((await post(`${t.url}/sim/link/approve`, { clientId: data.clientId })).status).toBe(200);
    // Recorded, so its polls stop: a poll answered ends a run of edge refusals, which the next test reads.
    const { transactionId } = res.body as { transactionId: string };
    await waitFor(async () => (await t.app.core.store.get(transactionId))?.status === "SUCCESS" || undefined, 20_000);
  }, 40_000);

  it("a Cloudflare challenge of a browser that looks automated: generate 502 naming it; /readyz counts it and names LINK_USER_AGENT and LINK_PROXY", async () => {
    expect(await readiness()).toBeUndefined();
    await fault({ mode: "challenge" });
    try {
      const res = await gen(6000);
      expect(res.status).toBe(502);
      const { error } = res.body as { error: { message: string; transactionId: string } };
      expect(error.message).toMatch(/Cloudflare challenge/);
      expect((await t.app.core.store.get(error.transactionId))?.status).toBe("FAILED");
      // Why: the page loaded (its user agent passed) but its script found navigator.webdriver true.
      const s = await seen();
      expect(s.pages.filter((p) => p.link === code).at(-1)).toMatchObject({ challenged: false, userAgent: USER_AGENT });
      expect(s.scripts.filter((p) => p.link === code).at(-1)).toMatchObject({ webdriver: true, userAgent: USER_AGENT });
      // The last QR request (an earlier test's payment may still be polled: its status calls come in between).
      expect(s.calls.filter((c) => c.call === "list-payment-options").at(-1)).toMatchObject({ challenged: true });

      const ready = await readiness();
      expect(ready?.refused).toMatch(/^the page's QR request \(list-payment-options\) answered HTTP 403 since /);
      expect(ready?.setting).toBe("LINK_PROXY");
      const challenge = ready?.refusals.cloudflareChallenge;
      expect(challenge?.count).toBe(1);
      expect(challenge?.last).toMatchObject({ detail: "HTTP 403: a Cloudflare challenge (cf-mitigated: challenge)" });
      expect(challenge?.cause).toMatch(/LINK_USER_AGENT/);
      expect(challenge?.cause).toMatch(/LINK_PROXY/);
      expect(ready?.likelyCause).toBe(challenge?.cause);
      expect(ready?.refusals.cloudflareBlock.count).toBe(0);
    } finally {
      await fault({ mode: "ok" });
    }
    // Answered again: the run ends, the count stays.
    expect((await gen(6100)).status).toBe(200);
    const after = await readiness();
    expect(after?.refused).toBeUndefined();
    expect(after?.refusals.cloudflareChallenge.count).toBe(1);
  }, 30_000);

  it("a link page whose form only its stylesheet shows: the service loads the stylesheet and gets the QR", async () => {
    const styled = await addLink({ stylesheet: true });
    const page = await (await fetch(`${t.url}/sim/payway/${styled}`)).text();
    expect(page).toContain('.pw-form { visibility: hidden; }</style>\n<link rel="stylesheet" href="_nuxt/link.css">');
    const css = await fetch(`${t.url}/sim/payway/_nuxt/link.css`);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect(await css.text()).toContain(".pw-form { visibility: visible; }");
    const shop = await createTenant(t, {
      name: "Styled Shop",
      linkUrl: `${t.url}/sim/payway/${styled}`,
      linkProtocol: "payway",
    });
    const res = await gen(7000, shop);
    expect(res.status).toBe(200);
    const { data } = res.body as { data: { clientId: string } };
    const client = await (await fetch(`${t.url}/sim/link/clients/${data.clientId}`)).json();
    expect(client).toMatchObject({ link: styled, amount: "7000.00" });
  }, 30_000);
});
