import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { BrowserPool } from "../../src/gateway-link/browser.js";
import { LinkDriverError, openLinkSession, type OpenLinkOptions } from "../../src/gateway-link/link-driver.js";
import { paywayLinkProtocol } from "../../src/gateway-link/payway-protocol.js";
import { PAYWAY_PAGE_CHECK, PAGE_STATE_MAX_CHARS } from "../../src/gateway-link/payway-page-state.js";
import { fillAmount } from "../../src/gateway-link/page-form.js";
import { simulatedQr } from "../../src/simulators/upstream-qr.js";
import type { TwinLink } from "../../src/simulators/payway/index.js";
import { CHROMIUM_PATH } from "../support/link-sim.js";
import { startPaywayTwin, type RunningTwin } from "../support/payway-twin.js";

// The payway adapter filling the form of PayWay link pages built in each way a driver of the real page meets them
// (docs/link-simulator.md, "Page variants"), in real Chromium against the twin: Continue as an <a>, a submit input
// or a [role=button] that stays disabled until the page hydrates, a phone field before the amount, Khmer wording, a
// fixed amount, fields the link requires.

let twin: RunningTwin;
let pool: BrowserPool;

beforeAll(async () => {
  twin = await startPaywayTwin({ makeQr: simulatedQr("twin_shop@abaa", "Twin Shop") });
  pool = new BrowserPool({
    executablePath: CHROMIUM_PATH,
    maxPages: 4,
    extraArgs: ["--disable-features=LocalNetworkAccessChecks"],
  });
});

afterAll(async () => {
  await pool?.close();
  await twin?.close();
});

const open = (url: string, amount: string, more: Partial<OpenLinkOptions> = {}, through: BrowserPool = pool) =>
  openLinkSession(through, {
    url,
    amount,
    currency: 840,
    protocol: paywayLinkProtocol(twin.apiOrigin),
    timeoutMs: 15_000,
    ...more,
  });

const usdLink = (options: Partial<TwinLink>) => twin.link({ currency: "USD", ...options });
const clientOf = (clientId: string) => twin.twin.store.client(clientId);
const clients = () => twin.twin.store.clientCount();

describe("a PayWay page's form, filled as a visitor fills it", () => {
  it("Continue an <a> disabled until the page hydrates (1.5 s), a phone field first: the amount goes in the amount field, the phone stays empty", async () => {
    const url = await usdLink({ continueAs: "a", hydrationMs: 1500, phoneFirst: true });
    const started = Date.now();
    const session = await open(url, "12.50");
    // Nothing could be done before the page hydrated: its controls were disabled and without handlers.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(clientOf(session.clientId)?.additionalFields).toEqual({ amount: "12.50", phone: "" });
  });

  const kinds: [string, TwinLink["continueAs"]][] = [
    ["an input[type=submit] of a form", "submit"],
    ["a div[role=button]", "role"],
  ];
  it.each(kinds)("Continue as %s, disabled until the page hydrates: a QR", async (_name, continueAs) => {
    const url = await usdLink({ continueAs, hydrationMs: 800, phoneFirst: true });
    const session = await open(url, "3.00");
    expect(clientOf(session.clientId)?.additionalFields).toEqual({ amount: "3.00", phone: "" });
  });

  it("Khmer wording: the amount field named only by its label ចំនួនទឹកប្រាក់, Continue reading បន្ត, a phone field first", async () => {
    const url = await usdLink({ language: "km", phoneFirst: true, continueAs: "a", hydrationMs: 500 });
    const session = await open(url, "7.25");
    expect(clientOf(session.clientId)?.additionalFields).toEqual({ amount: "7.25", phone: "" });
  });

  it("a phone the request gives goes in the phone field the link asks for, never the amount", async () => {
    const url = await usdLink({ phoneFirst: true, hydrationMs: 300 });
    const session = await open(url, "4.00", { payer: { payerPhone: "+85512345678" } });
    expect(clientOf(session.clientId)?.additionalFields).toEqual({ amount: "4.00", phone: "+85512345678" });
  });

  it("the twin's hydration fault mode builds every link's page that way", async () => {
    const url = await usdLink({});
    await twin.post("/sim/payway/fault", { mode: "hydration", hydrationMs: 700 });
    try {
      const page = await (await fetch(url)).text();
      expect(page).toMatch(/<a id="pw-continue" class="pw-btn pw-disabled" aria-disabled="true">Continue<\/a>/);
      const session = await open(url, "5.00");
      expect(clientOf(session.clientId)?.additionalFields).toEqual({ amount: "5.00", phone: "" });
    } finally {
      await twin.post("/sim/payway/fault", { mode: "ok" });
    }
  });

  it("a page that never hydrates fails within the open timeout, having asked its API for nothing", async () => {
    const url = await usdLink({ continueAs: "a", hydrationMs: 60_000 });
    const before = clients();
    const started = Date.now();
    const err = await open(url, "2.00", { timeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LinkDriverError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(clients()).toBe(before);
  });
});

describe("the amount field, chosen by what it is (never a phone or e-mail field before it)", () => {
  it("type=text inputmode=decimal, no word saying amount, after a phone field (inputmode=numeric) and an e-mail field", async () => {
    const url = await usdLink({ amountAs: "inputmode", phoneFirst: true, emailFirst: true, hydrationMs: 300 });
    const page = await (await fetch(url)).text();
    expect(page).toMatch(
      /id="pw-phone"[^>]*>[^]*id="pw-email"[^>]*>[^]*<input id="pw-amount" name="amount" type="text" inputmode="decimal" placeholder="0.00"/,
    );
    const session = await open(url, "12.50");
    expect(clientOf(session.clientId)?.additionalFields).toEqual({ amount: "12.50", phone: "", email: "" });
  });

  it('only a placeholder "Amount" (type=text, no label, no inputmode), after a phone and an e-mail field', async () => {
    const url = await usdLink({ amountAs: "placeholder", phoneFirst: true, emailFirst: true });
    const page = await (await fetch(url)).text();
    expect(page).toContain('<input id="pw-amount" name="amount" type="text" placeholder="Amount" autocomplete="off">');
    const session = await open(url, "3.75");
    expect(clientOf(session.clientId)?.additionalFields).toEqual({ amount: "3.75", phone: "", email: "" });
  });

  it("the request's e-mail goes in the e-mail field placed first, the amount in the amount field", async () => {
    const url = await usdLink({ amountAs: "placeholder", emailFirst: true });
    const session = await open(url, "2.00", { payer: { payerEmail: "dara@example.com" } });
    expect(clientOf(session.clientId)?.additionalFields).toEqual({ amount: "2.00", email: "dara@example.com" });
  });
});

describe("a page whose form only its stylesheet shows (decision 0198)", () => {
  it("with stylesheets loading (the pool's default) a QR; with them blocked no amount field is ever visible, nothing asked", async () => {
    const url = await usdLink({ stylesheet: true, hydrationMs: 300 });
    const session = await open(url, "6.00");
    expect(clientOf(session.clientId)?.amount).toBe("6.00");
    // The pool as it was before decision 0198: stylesheets refused like images, fonts and media.
    const unstyled = new BrowserPool({
      executablePath: CHROMIUM_PATH,
      maxPages: 1,
      extraArgs: ["--disable-features=LocalNetworkAccessChecks"],
      blockedResourceTypes: ["Image", "Font", "Media", "Stylesheet"],
    });
    try {
      const before = clients();
      const err = await open(url, "6.00", { timeoutMs: 3_000 }, unstyled).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LinkDriverError);
      expect(clients()).toBe(before);
      // Why: the field is there but never visible, so the adapter finds no amount field to type into.
      const lease = await unstyled.acquire({ url, allowedOrigins: [twin.pageOrigin, twin.apiOrigin] });
      try {
        expect(await lease.start()).toBe(200);
        const { result } = await lease.session.send("Runtime.evaluate", {
          expression: `getComputedStyle(document.getElementById("pw-amount")).visibility`,
          returnByValue: true,
        });
        expect(result.value).toBe("hidden");
        await expect(fillAmount(lease.session, ["amount"], "6.00", 1_500)).rejects.toThrow(
          "the payment page has no amount field",
        );
      } finally {
        await lease.release();
      }
      // The same pool fills a page without the stylesheet: only the missing styles stopped it.
      const plain = await usdLink({ hydrationMs: 300 });
      expect(clientOf((await open(plain, "6.00", {}, unstyled)).clientId)?.amount).toBe("6.00");
    } finally {
      await unstyled.close();
    }
  });
});

describe("a link that fixes the amount", () => {
  it("the same amount (as an exact decimal: 12.5 is 12.50) → a QR for it; another → the caller's error naming the link's amount, nothing asked", async () => {
    const url = await usdLink({ fixedAmount: "12.50" });
    const session = await open(url, "12.5");
    expect(clientOf(session.clientId)?.amount).toBe("12.50");
    const before = clients();
    const err = await open(url, "10.00").catch((e: unknown) => e);
    expect(err).toMatchObject({
      kind: "invalid_input",
      invalid: [{ field: "amount", message: "must be 12.50, the payment link's fixed amount" }],
    });
    expect(clients()).toBe(before);
  });
});

describe("a link that requires more than an amount", () => {
  const payer = {
    remark: "Table 4",
    payerName: "Sok Dara",
    payerEmail: "dara@example.com",
    payerPhone: "012345678",
  };

  it("the request's fields fill the page's, and the twin's API gets them in additional_fields", async () => {
    const url = await usdLink({ requiredFields: ["remark", "full_name", "email", "phone"], hydrationMs: 300 });
    const session = await open(url, "9.99", { payer });
    expect(clientOf(session.clientId)?.additionalFields).toEqual({
      amount: "9.99",
      remark: "Table 4",
      full_name: "Sok Dara",
      email: "dara@example.com",
      phone: "012345678",
    });
  });

  it("in Khmer too", async () => {
    const url = await usdLink({ requiredFields: ["full_name", "phone"], language: "km" });
    const session = await open(url, "1.00", { payer });
    expect(clientOf(session.clientId)?.additionalFields).toEqual({
      amount: "1.00",
      full_name: "Sok Dara",
      phone: "012345678",
    });
  });

  it("a required field the request lacks → the caller's error naming each, nothing asked of the API", async () => {
    const url = await usdLink({ requiredFields: ["full_name", "email"] });
    const before = clients();
    const err = await open(url, "1.00", { payer: { remark: "ignored" } }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      kind: "invalid_input",
      invalid: [
        { field: "payerName", message: "is required by the payment link" },
        { field: "payerEmail", message: "is required by the payment link" },
      ],
    });
    expect(clients()).toBe(before);
  });

  it("the twin's API refuses additional_fields without a required field (what the page's own check would stop)", async () => {
    const url = await usdLink({ requiredFields: ["full_name"] });
    const lease = await pool.acquire({ url, allowedOrigins: [twin.pageOrigin, twin.apiOrigin] });
    try {
      expect(await lease.start()).toBe(200);
      // The page's state asks for full_name; a request without it, hashed as the page would, is refused.
      const { result } = await lease.session.send("Runtime.evaluate", {
        awaitPromise: true,
        returnByValue: true,
        expression: `(async () => {
          const st = window.__NUXT__.state.payment;
          const additional = JSON.stringify({ amount: "1.00" });
          const bytes = new TextEncoder().encode(st.request_time + st.aba_data + additional);
          const hash = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-512", bytes)))
            .map((b) => b.toString(16).padStart(2, "0")).join("");
          const res = await fetch(${JSON.stringify(`${twin.apiOrigin}/api/pw-app/v1/payment/gateway/list-payment-options`)}, {
            method: "POST", credentials: "include", headers: { "content-type": "application/json", language: "en" },
            body: JSON.stringify({ additional_fields: additional, request_time: st.request_time, aba_data: st.aba_data, hash }),
          });
          return (await res.json()).status;
        })()`,
      });
      expect(result.value).toMatchObject({ code: "03", message: "Required field missing: full_name" });
    } finally {
      await lease.release();
    }
  });
});

describe("what the page's state is read for (PAYWAY_PAGE_CHECK)", () => {
  const want = { amount: "1.00", currency: 840 as const };

  it("state larger than the cap is not read: the page is reported as changed, nothing else is decided from it", () => {
    const big = JSON.stringify({ found: true, currency: "KHR", fields: [], pad: "x".repeat(PAGE_STATE_MAX_CHARS) });
    expect(PAYWAY_PAGE_CHECK.verify(big, want)).toEqual({
      warning: "the PayWay page has no aba_data in window.__NUXT__: the page may have changed",
    });
  });

  it("a required field this service has no request field for is the link's refusal, not the caller's error", () => {
    const state = JSON.stringify({ found: true, currency: "USD", fields: [{ name: "address", required: true }] });
    expect(PAYWAY_PAGE_CHECK.verify(state, want)).toEqual({
      refusal: "the payment link requires a field this service cannot fill: address",
    });
  });
});
