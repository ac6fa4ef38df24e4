import { linkModule } from "../../src/gateway-link/index.js";
import { faultAnswers, pagePolls } from "../support/link-sim.js";
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { waitFor } from "../support/wait.js";

interface LinkTx {
  transactionId: string;
  expiredAt: string;
  status: string;
  requestData: { amount: number; currency: number; meta: Record<string, unknown> };
  data: { qr: string; clientId: string };
  receiptUrl?: string;
  clientToken?: string;
}

describe("gateway-link area in real headless Chromium, against the link-page simulator", () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  const gen = (body: Record<string, unknown>, key = tenant.keys.gatewayLink) =>
    post(`${t.url}/gateway-link/generate-qr`, body, AUTH.gatewayLink(key));
  const check = (transactionId: string, key = tenant.keys.gatewayLink) =>
    post(`${t.url}/gateway-link/check`, { transactionId }, AUTH.gatewayLink(key));
  const events = async (id: string) =>
    (
      await t.app.core.db.query<{ type: string }>(
        `select type from transaction_event where transaction_ref = ? order by seq`,
        [id],
      )
    ).map((e) => e.type);
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    other = await createTenant(t, { name: "Other" });
  });
  afterAll(async () => t?.stop());

  it("generate → scan → approve → check shows SUCCESS with the receipt URL", async () => {
    const before = Date.now();
    const res = await gen({ amount: 5000, currency: 116, meta: { table: 7 } });
    expect(res.status).toBe(200);
    const b = res.body as LinkTx;
    expect(Object.keys(b).sort()).toEqual([
      "checkoutUrl",
      "clientToken",
      "data",
      "expiredAt",
      "requestData",
      "status",
      "transactionId",
    ]);
    expect(b.status).toBe("PENDING");
    expect(b.requestData).toEqual({ amount: 5000, currency: 116, meta: { table: 7 } });
    expect(b.data.clientId).toMatch(/.+/);
    const lifetime = Date.parse(b.expiredAt) - before;
    expect(lifetime).toBeGreaterThanOrEqual(180_000);
    expect(lifetime).toBeLessThan(180_000 + 30_000);
    // The page's QR is a real KHQR for the amount.
    const decoded = await post(`${t.url}/qr/decode`, { qrData: b.data.qr }, AUTH.qr(tenant.keys.qr));
    expect(decoded.body).toMatchObject({
      status: { code: 0 },
      data: { transactionAmount: "5000", transactionCurrency: "116" },
    });

    expect((await post(`${t.url}/sim/link/scan`, { clientId: b.data.clientId })).status).toBe(200);
    await waitFor(async () => (await events(b.transactionId)).includes("payment.scanned"), 15_000);
    expect(((await check(b.transactionId)).body as LinkTx).status).toBe("PENDING");
    expect((await post(`${t.url}/sim/link/approve`, { clientId: b.data.clientId })).status).toBe(200);
    const done = await waitFor(async () => {
      const r = (await check(b.transactionId)).body as LinkTx;
      return r.status === "SUCCESS" ? r : null;
    }, 15_000);
    expect(done.receiptUrl).toMatch(new RegExp(`/sim/link/receipt/${b.data.clientId}$`));
    expect(done.transactionId).toBe(b.transactionId);
    expect(await events(b.transactionId)).toEqual(["payment.created", "payment.scanned", "payment.completed"]);
  });

  it("a page that would go back to a payment it remembers starts a new one: payments share no browser state", async () => {
    // This page remembers its last client in localStorage and, opened again in the same browser, resumes it.
    // Each payment's page has a browser context of its own, so the second visit is a new visitor.
    const sticky = await createTenant(t, {
      name: "Sticky",
      linkUrl: `${t.url}/sim/link/p/sticky?currency=KHR&remember=1`,
    });
    const first = await gen({ amount: 2000, currency: 116 }, sticky.keys.gatewayLink);
    expect(first.status).toBe(200);
    const a = first.body as LinkTx;
    // The page has shown its QR (and so remembered its client) once it polls.
    await waitFor(async () => {
      const res = await fetch(`${t.url}/sim/link/clients/${a.data.clientId}`);
      return ((await res.json()) as { polls: number }).polls > 0;
    }, 15_000);
    const second = await gen({ amount: 2000, currency: 116 }, sticky.keys.gatewayLink);
    expect(second.status).toBe(200);
    const b = second.body as LinkTx;
    expect(b.data.clientId).not.toBe(a.data.clientId);
    // Approving the first session pays the first payment only.
    expect((await post(`${t.url}/sim/link/approve`, { clientId: a.data.clientId })).status).toBe(200);
    await waitFor(
      async () => ((await check(a.transactionId, sticky.keys.gatewayLink)).body as LinkTx).status === "SUCCESS",
      15_000,
    );
    expect(((await check(b.transactionId, sticky.keys.gatewayLink)).body as LinkTx).status).toBe("PENDING");
  });

  it("one upstream link session is held by one payment: the database refuses a second holder", async () => {
    const holder = (id: string) => ({
      id,
      area: "gateway_link" as const,
      merchantRef: tenant.merchantId,
      apiKeyRef: tenant.keyIds.gatewayLink,
      status: "PENDING" as const,
      amount: "1000",
      currency: "KHR" as const,
      meta: {},
      request: {},
      upstreamRef: "cl_shared_session",
      expiresAt: new Date(Date.now() + 60_000),
    });
    const { tx } = await t.app.core.store.create(holder("txn_link_holder_a"));
    expect(tx.upstreamRef).toBe("cl_shared_session");
    await expect(t.app.core.store.create(holder("txn_link_holder_b"))).rejects.toMatchObject({ code: "23505" });
  });

  it("left alone → EXPIRED at 180 s (moved clock), and the page is released", async () => {
    const b = (await gen({ amount: 1000, currency: 116 })).body as LinkTx;
    // The monitor holds the page: it polls.
    await waitFor(async () => (await pagePolls(t.url, b.data.clientId)) > 0, 30_000, 100, "the page's first poll");
    t.clock.advance(180_000);
    await waitFor(async () => (await events(b.transactionId)).includes("payment.expired"), 10_000);
    expect(((await check(b.transactionId)).body as LinkTx).status).toBe("EXPIRED");
    await waitFor(async () => t.app.module(linkModule).pool.stats().pages === 0, 10_000);
  });

  it("break → FAILED after bounded retries", async () => {
    const b = (await gen({ amount: 2000, currency: 116 })).body as LinkTx;
    await post(`${t.url}/sim/link/break`, { clientId: b.data.clientId });
    await waitFor(async () => ((await check(b.transactionId)).body as LinkTx).status === "FAILED", 90_000, 500);
    expect(await events(b.transactionId)).toEqual(["payment.created", "payment.failed"]);
  }, 120_000);

  it("the payment page's site down (503) past the monitor's give-up count: the payment stays PENDING, then the payer approves → SUCCESS", async () => {
    const b = (await gen({ amount: 4000, currency: 116 })).body as LinkTx;
    // The monitor holds the page: it polls.
    await waitFor(async () => (await pagePolls(t.url, b.data.clientId)) > 0, 30_000, 100, "the page's first poll");
    const before = await faultAnswers(t.url);
    await post(`${t.url}/sim/link/fault`, { mode: "down" });
    try {
      // Five failed polls end the page session, and each reopening of the page is one more refused request. Were
      // the outage counted as failures, the fourth loss (the session, then three reopenings: the 8th refused
      // request) would end the payment FAILED with no further request. The site answers 9 of the page's requests
      // with 503 (one past that), and the payment stays PENDING throughout: the monitor waits the outage out.
      await waitFor(
        async () => {
          expect(((await check(b.transactionId)).body as LinkTx).status).toBe("PENDING");
          return (await faultAnswers(t.url)) >= before + 9;
        },
        60_000,
        500,
        "9 requests refused by the outage",
      );
    } finally {
      await post(`${t.url}/sim/link/fault`, { mode: "ok" });
    }
    await post(`${t.url}/sim/link/approve`, { clientId: b.data.clientId });
    await waitFor(async () => ((await check(b.transactionId)).body as LinkTx).status === "SUCCESS", 30_000, 500);
    expect(await events(b.transactionId)).toEqual(["payment.created", "payment.completed"]);
  }, 90_000);

  it("wrong currency, expiredAfter ≠ 180000, a url field → 400 naming the field; 180000 is accepted", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: 10, currency: 840 }, "currency"],
      [{ amount: 1000, currency: 116, expiredAfter: 60000 }, "expiredAfter"],
      [{ amount: 1000, currency: 116, url: "https://evil.example" }, "url"],
      [{ amount: 1000, currency: 116, link: "https://evil.example" }, "link"],
      [{ amount: 0, currency: 116 }, "amount"],
      [{ amount: 10.5, currency: 116 }, "amount"],
    ];
    for (const [body, field] of cases) {
      const res = await gen(body);
      expect(res.status).toBe(400);
      expect((res.body as { error: { details: { field: string }[] } }).error.details.map((d) => d.field)).toEqual([
        field,
      ]);
    }
    const ok = await gen({ amount: 1000, currency: 116, expiredAfter: 180000 });
    expect(ok.status).toBe(200);
  });

  it("check reads local state only; another key's transaction → 404", async () => {
    const b = (await gen({ amount: 3000, currency: 116 })).body as LinkTx;
    expect((await check(b.transactionId, other.keys.gatewayLink)).status).toBe(404);
    expect((await check("txn_missing")).status).toBe(404);
  });

  it("a page that cannot produce a QR → 502 and a FAILED transaction", async () => {
    const broken = await createTenant(t, { name: "Broken link", linkUrl: `${t.url}/sim/link/p/shop?currency=EUR` });
    const res = await gen({ amount: 1000, currency: 116 }, broken.keys.gatewayLink);
    expect(res.status).toBe(502);
    const rows = await t.app.core.db.query<{ status: string }>(
      `select status from "transaction" where api_key_ref = ?`,
      [broken.keyIds.gatewayLink],
    );
    expect(rows).toEqual([{ status: "FAILED" }]);
  }, 60_000);
});
