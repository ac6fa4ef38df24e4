import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import puppeteer, { type Browser } from "puppeteer-core";
import { DEFAULT_CHROMIUM_ARGS, sandboxForThisMachine } from "../../src/gateway-link/browser.js";
import { CHROMIUM_PATH, startLinkSim, type RunningLinkSim } from "../support/link-sim.js";
import { waitFor } from "../support/wait.js";

let sim: RunningLinkSim;
let now = Date.parse("2026-11-23T10:00:00.000Z");

beforeAll(async () => {
  let n = 0;
  sim = await startLinkSim({ pollIntervalMs: 150, clock: () => now, newClientId: () => `cl_test_${++n}` });
});

afterAll(async () => {
  await sim.close();
});

const rid = () => `rq_${Math.random().toString(16).slice(2, 14).padEnd(12, "0")}`;

async function requestQr(amount = "10.00", currency = "KHR") {
  const res = await sim.post("/sim/link/api/request_qr", { slug: "coffee-shop", amount, currency, requestId: rid() });
  expect(res.status).toBe(200);
  return res.body as { clientId: string; qr: string; amount: string; currency: string; action: string };
}

describe("payment-link simulator: HTTP protocol", () => {
  it("serves the link page with the currency fixed by the link URL", async () => {
    const page = await sim.get("/sim/link/p/coffee-shop?currency=USD");
    expect(page.status).toBe(200);
    expect(page.body).toContain('id="pay-button"');
    expect(page.body).toContain('<span id="currency">USD</span>');
    expect((await sim.get("/sim/link/p/coffee-shop")).body).toContain('<span id="currency">KHR</span>');
    expect((await sim.get("/sim/link/p/coffee-shop?currency=EUR")).status).toBe(400);
  });

  it("issues a QR built by makeQr for the amount and currency, and reports request_qr", async () => {
    const session = await requestQr("2500", "KHR");
    expect(session).toMatchObject({
      clientId: expect.stringMatching(/^cl_test_/),
      amount: "2500",
      currency: "KHR",
      action: "request_qr",
    });
    expect(session.qr).toMatch(/^KHQR-2500-116-[0-9a-f]{8}$/);
    const status = await sim.post("/sim/link/api/status", { clientId: session.clientId, requestId: rid() });
    expect(status).toEqual({
      status: 200,
      body: { clientId: session.clientId, action: "request_qr", requestId: expect.any(String) },
    });
  });

  it("refuses a replayed request identifier", async () => {
    const { clientId } = await requestQr();
    const requestId = rid();
    expect((await sim.post("/sim/link/api/status", { clientId, requestId })).status).toBe(200);
    const replay = await sim.post("/sim/link/api/status", { clientId, requestId });
    expect(replay.status).toBe(400);
    expect(replay.body).toMatchObject({ error: { code: "BAD_USER_INPUT", details: [{ field: "requestId" }] } });
  });

  it("moves a client through scanned and approved, with a receipt page", async () => {
    const { clientId } = await requestQr("1.50", "USD");
    now += 5_000;
    expect(await sim.post("/sim/link/scan", { clientId })).toEqual({
      status: 200,
      body: { clientId, action: "scanned", broken: false },
    });
    expect((await sim.post("/sim/link/api/status", { clientId, requestId: rid() })).body).toMatchObject({
      action: "scanned",
    });
    now += 5_000;
    const receiptUrl = `${sim.baseUrl}/sim/link/receipt/${clientId}`;
    expect(await sim.post("/sim/link/approve", { clientId })).toEqual({
      status: 200,
      body: { clientId, action: "approved", broken: false, receiptUrl },
    });
    expect((await sim.post("/sim/link/api/status", { clientId, requestId: rid() })).body).toMatchObject({
      action: "approved",
      receiptUrl,
    });
    expect((await sim.post("/sim/link/scan", { clientId })).body).toMatchObject({ error: { code: "CONFLICT" } });
    const receipt = await sim.get(`/sim/link/receipt/${clientId}`);
    expect(receipt.status).toBe(200);
    expect(receipt.body).toContain("1.50 USD");
    expect(receipt.body).toContain(new Date(now).toISOString());
    const view = await sim.get(`/sim/link/clients/${clientId}`);
    expect(view.body).toMatchObject({
      action: "approved",
      scannedAt: new Date(now - 5_000).toISOString(),
      approvedAt: new Date(now).toISOString(),
      polls: 2,
    });
  });

  it("an approval states what was paid: the QR's figures, or the amount and currency a test gives", async () => {
    const status = async (clientId: string) =>
      (await sim.post("/sim/link/api/status", { clientId, requestId: rid() })).body as Record<string, unknown>;
    const same = await requestQr("12.50", "USD");
    expect(await status(same.clientId)).not.toHaveProperty("paidAmount");
    await sim.post("/sim/link/approve", { clientId: same.clientId });
    expect(await status(same.clientId)).toMatchObject({ paidAmount: "12.50", paidCurrency: "USD" });
    const other = await requestQr("5000", "KHR");
    expect((await sim.post("/sim/link/approve", { clientId: other.clientId, currency: "EUR" })).status).toBe(400);
    await sim.post("/sim/link/approve", { clientId: other.clientId, amount: "4000", currency: "USD" });
    expect(await status(other.clientId)).toMatchObject({ action: "approved", paidAmount: "4000", paidCurrency: "USD" });
  });

  it("answers 410 on the page's API for a broken client, or the status the break named", async () => {
    const { clientId } = await requestQr();
    expect((await sim.post("/sim/link/break", { clientId })).body).toMatchObject({ broken: true });
    const status = await sim.post("/sim/link/api/status", { clientId, requestId: rid() });
    expect(status).toEqual({
      status: 410,
      body: { error: { code: "BROKEN", message: "simulated page failure", details: [] } },
    });
    expect((await sim.post("/sim/link/break", { clientId, status: 522 })).status).toBe(200);
    expect((await sim.post("/sim/link/api/status", { clientId, requestId: rid() })).status).toBe(522);
    expect((await sim.post("/sim/link/break", { clientId, status: 200 })).status).toBe(400);
  });

  it("answers unknown clients with NOT_FOUND and bad bodies with BAD_USER_INPUT", async () => {
    for (const path of ["/sim/link/scan", "/sim/link/approve", "/sim/link/break"]) {
      const res = await sim.post(path, { clientId: "cl_nope" });
      expect(res).toEqual({
        status: 404,
        body: { error: { code: "NOT_FOUND", message: expect.stringContaining("cl_nope"), details: [] } },
      });
      expect((await sim.post(path, {})).body).toMatchObject({
        error: { code: "BAD_USER_INPUT", details: [{ field: "clientId" }] },
      });
    }
    expect((await sim.get("/sim/link/clients/cl_nope")).status).toBe(404);
    expect((await sim.get("/sim/link/receipt/cl_nope")).status).toBe(404);
    const bad = await sim.post("/sim/link/api/request_qr", {
      slug: "s",
      amount: "-1",
      currency: "EUR",
      requestId: "x",
    });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: { details: Array<{ field: string }> } }).error.details.map((d) => d.field)).toEqual([
      "amount",
      "currency",
      "requestId",
    ]);
    const malformed = await fetch(`${sim.baseUrl}/sim/link/scan`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { code: "BAD_USER_INPUT", message: "malformed JSON body" } });
    const notJson = await fetch(`${sim.baseUrl}/sim/link/approve`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "cl_x",
    });
    expect(notJson.status).toBe(400);
  });
});

describe("payment-link simulator: the page in a real browser", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      pipe: true,
      args: [...DEFAULT_CHROMIUM_ARGS, ...sandboxForThisMachine().args],
    });
  });
  afterAll(async () => {
    await browser.close();
  });

  it("lets a visitor pay: amount, Pay with KHQR, QR shown, status follows scan and approve, then resumes by clientId", async () => {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.goto(sim.linkUrl("coffee-shop", "USD"));
    await page.type("#amount", "3.75");
    await page.click("#pay-button");
    const qr = await waitFor(
      () => page.$eval("#qr", (el) => el.textContent || undefined),
      10_000,
      50,
      "QR in the page",
    );
    expect(qr).toMatch(/^KHQR-3\.75-840-/);
    const clientId = new URL(page.url()).searchParams.get("clientId")!;
    expect(clientId).toMatch(/^cl_test_/);
    const action = () => page.$eval("#status", (el) => (el as HTMLElement).dataset.action);

    await sim.post("/sim/link/scan", { clientId });
    await waitFor(async () => ((await action()) === "scanned" ? true : undefined), 10_000, 50, "scanned in the page");

    // Every poll carries a new request identifier.
    const view = await waitFor(
      async () => {
        const v = (await sim.get(`/sim/link/clients/${clientId}`)).body as { polls: number; requestIds: string[] };
        return v.polls >= 4 ? v : undefined;
      },
      10_000,
      50,
      "4 polls",
    );
    expect(new Set(view.requestIds).size).toBe(view.requestIds.length);

    // Reopening the page for the client goes straight to the polling view.
    const reopened = await context.newPage();
    await page.close();
    await reopened.goto(`${sim.linkUrl("coffee-shop", "USD")}&clientId=${clientId}`);
    expect(
      await waitFor(() => reopened.$eval("#qr", (el) => el.textContent || undefined), 10_000, 50, "resumed QR"),
    ).toBe(qr);
    expect(await reopened.$eval("#pay-form", (el) => (el as HTMLElement).hidden)).toBe(true);

    await sim.post("/sim/link/approve", { clientId });
    const receipt = await waitFor(
      () =>
        reopened.$eval("#receipt", (el) => ((el as HTMLElement).hidden ? undefined : (el as HTMLAnchorElement).href)),
      10_000,
      50,
      "receipt link",
    );
    expect(receipt).toBe(`${sim.baseUrl}/sim/link/receipt/${clientId}`);
    await context.close();
  });
});
