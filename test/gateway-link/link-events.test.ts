import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { startReceiver } from "../support/webhook-receiver.js";
import { pagePolls } from "../support/link-sim.js";
import { waitFor } from "../support/wait.js";

// Key order and number text that a jsonb round trip or a JavaScript object would change.
const META = `{"z":1,"10":"ten","2":[1.50,{"b":1,"a":2}],"a":"x"}`;

interface Delivered {
  id: string;
  type: string;
  createdAt: string;
  data: { transaction: { transactionId: string; status: string; receiptUrl?: string }; meta: unknown };
}

describe("gateway-link: each of the six event kinds is emitted in its documented situation (signed webhooks, real Chromium)", () => {
  let t: TestApp;
  let tenant: Tenant;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  const deliveries = (txId: string) =>
    rx.received.filter((r) => (JSON.parse(r.body) as Delivered).data.transaction.transactionId === txId);
  const kinds = (txId: string) =>
    deliveries(txId)
      .map((r) => JSON.parse(r.body) as Delivered)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map((d) => d.type);
  const outbox = async (txId: string) =>
    (
      await t.app.core.db.query<{ type: string }>(
        `select type from transaction_event where transaction_ref = ? order by seq`,
        [txId],
      )
    ).map((e) => e.type);
  const check = async (transactionId: string) => {
    const res = await fetch(`${t.url}/gateway-link/check`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTH.gatewayLink(tenant.keys.gatewayLink) },
      body: JSON.stringify({ transactionId }),
    });
    const text = await res.text();
    return { text, body: JSON.parse(text) as { status: string; receiptUrl?: string; scanned?: boolean } };
  };
  const endpoint = (apiKeyId: string) =>
    t.admin(`mutation($i: WebhookEndpointInput!) { createWebhookEndpoint(input: $i) { secret } }`, {
      i: { apiKeyId, url: rx.url() },
    });
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    rx = await startReceiver();
    await endpoint(tenant.keyIds.gatewayLink);
  });
  afterAll(async () => {
    await t?.stop();
    await rx?.down();
  });

  it("created → scanned → completed (approved before its receipt exists) → transaction.updated when the receipt arrives", async () => {
    const res = await fetch(`${t.url}/gateway-link/generate-qr`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTH.gatewayLink(tenant.keys.gatewayLink) },
      body: `{"amount":5000,"currency":116,"meta":${META}}`,
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain(`"meta":${META}`);
    const { transactionId, data } = JSON.parse(text) as { transactionId: string; data: { clientId: string } };
    await waitFor(async () => kinds(transactionId).includes("payment.created"), 10_000);

    expect((await post(`${t.url}/sim/link/scan`, { clientId: data.clientId })).status).toBe(200);
    await waitFor(async () => kinds(transactionId).includes("payment.scanned"), 15_000);

    // The page reports approved with no receipt yet: SUCCESS now, and the monitor keeps watching the page.
    expect(
      (await post(`${t.url}/sim/link/approve`, { clientId: data.clientId, receipt: "later" })).body,
    ).not.toHaveProperty("receiptUrl");
    const success = await waitFor(async () => {
      const c = await check(transactionId);
      return c.body.status === "SUCCESS" ? c : null;
    }, 15_000);
    expect(success.body.receiptUrl).toBeUndefined();
    expect(success.text).toContain(`"meta":${META}`);
    // A few more polls of the page without a receipt change nothing.
    const polled = await pagePolls(t.url, data.clientId);
    await waitFor(async () => (await pagePolls(t.url, data.clientId)) >= polled + 3, 15_000, 100, "3 more polls");
    expect(await outbox(transactionId)).toEqual(["payment.created", "payment.scanned", "payment.completed"]);

    const issued = (await post(`${t.url}/sim/link/receipt`, { clientId: data.clientId })).body as {
      receiptUrl: string;
    };
    const withReceipt = await waitFor(async () => {
      const c = await check(transactionId);
      return c.body.receiptUrl ? c : null;
    }, 15_000);
    expect(withReceipt.body).toMatchObject({ status: "SUCCESS", receiptUrl: issued.receiptUrl, scanned: true });
    expect(withReceipt.text).toContain(`"meta":${META}`);
    expect(await outbox(transactionId)).toEqual([
      "payment.created",
      "payment.scanned",
      "payment.completed",
      "transaction.updated",
    ]);

    await waitFor(async () => deliveries(transactionId).length >= 4, 10_000);
    expect(kinds(transactionId)).toEqual([
      "payment.created",
      "payment.scanned",
      "payment.completed",
      "transaction.updated",
    ]);
    const byType = Object.fromEntries(
      deliveries(transactionId).map((r) => [(JSON.parse(r.body) as Delivered).type, r.body]),
    );
    for (const body of Object.values(byType)) expect(body).toContain(`"meta":${META}}`);
    expect((JSON.parse(byType["payment.completed"]) as Delivered).data.transaction).not.toHaveProperty("receiptUrl");
    expect((JSON.parse(byType["transaction.updated"]) as Delivered).data.transaction).toMatchObject({
      status: "SUCCESS",
      receiptUrl: issued.receiptUrl,
    });
  }, 60_000);

  it("failed: a page that produces no QR → 502, then payment.created and payment.failed", async () => {
    const broken = await createTenant(t, { name: "Broken link", linkUrl: `${t.url}/sim/link/p/shop?currency=EUR` });
    await endpoint(broken.keyIds.gatewayLink);
    const res = await post(
      `${t.url}/gateway-link/generate-qr`,
      { amount: 1000, currency: 116 },
      AUTH.gatewayLink(broken.keys.gatewayLink),
    );
    expect(res.status).toBe(502);
    const { transactionId } = (res.body as { error: { transactionId: string } }).error;
    await waitFor(async () => deliveries(transactionId).length >= 2, 10_000);
    expect(kinds(transactionId)).toEqual(["payment.created", "payment.failed"]);
  }, 60_000);

  it("expired: left alone for 180 s (moved clock) → payment.expired", async () => {
    const g = (
      await post(
        `${t.url}/gateway-link/generate-qr`,
        { amount: 1000, currency: 116 },
        AUTH.gatewayLink(tenant.keys.gatewayLink),
      )
    ).body as { transactionId: string; data: { clientId: string } };
    // The monitor holds the page: it polls.
    await waitFor(async () => (await pagePolls(t.url, g.data.clientId)) > 0, 30_000, 100, "the page's first poll");
    t.clock.advance(180_000);
    await waitFor(async () => deliveries(g.transactionId).length >= 2, 15_000);
    expect(kinds(g.transactionId)).toEqual(["payment.created", "payment.expired"]);
  }, 60_000);
});
