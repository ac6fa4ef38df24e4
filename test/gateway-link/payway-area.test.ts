import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { linkModule } from "../../src/gateway-link/index.js";
import { verifyWebhook } from "../../src/webhooks/signing.js";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { startReceiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";
import { statusOf } from "../support/http.js";

// The gateway-link area with a PayWay link, end to end in real Chromium against the service's own PayWay twin:
// the page gives the QR and is closed; the worker follows the payment by polling the page's API itself.

interface LinkTx {
  transactionId: string;
  expiredAt: string;
  status: string;
  data: { qr: string; clientId: string };
  deeplink?: string;
  receiptUrl?: string;
  scanned?: boolean;
}

interface TwinClientView {
  qr: string;
  polls: number;
  deviceIds: string[];
  reusedDeviceIds: number;
  lastPollAt: string | null;
  action: string;
}

interface Delivered {
  type: string;
  createdAt: string;
  data: { transaction: { transactionId: string; status: string; receiptUrl?: string; late?: boolean } };
}

describe("gateway-link with a PayWay link (payway adapter, protocol-level monitoring)", () => {
  let t: TestApp;
  let tenant: Tenant;
  let secret: string;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  const gen = (amount = 5000, key = tenant.keys.gatewayLink) =>
    post(`${t.url}/gateway-link/generate-qr`, { amount, currency: 116 }, AUTH.gatewayLink(key));
  const check = async (id: string) =>
    (await post(`${t.url}/gateway-link/check`, { transactionId: id }, AUTH.gatewayLink(tenant.keys.gatewayLink)))
      .body as LinkTx;
  const twinClient = async (clientId: string) =>
    (await (await fetch(`${t.url}/sim/link/clients/${clientId}`)).json()) as TwinClientView;
  const outbox = async (id: string) =>
    (
      await t.app.core.db.query<{ type: string }>(
        `select type from transaction_event where transaction_ref = ? order by seq`,
        [id],
      )
    ).map((e) => e.type);
  const delivered = (id: string) =>
    rx.received
      .map((r) => ({ r, d: JSON.parse(r.body) as Delivered }))
      .filter(({ d }) => d.data.transaction.transactionId === id)
      .sort((a, b) => a.d.createdAt.localeCompare(b.d.createdAt));
  const newPolls = async (clientId: string, after: number) =>
    waitFor(async () => {
      const c = await twinClient(clientId);
      return c.polls > after ? c : null;
    }, 15_000);

  beforeAll(async () => {
    t = await startTestApp();
    rx = await startReceiver();
    const link = (await post(`${t.url}/sim/payway/links`, { currency: "KHR", merchant: "Twin Coffee" })).body as {
      code: string;
    };
    tenant = await createTenant(t, { linkUrl: `${t.url}/sim/payway/${link.code}`, linkProtocol: "payway" });
    const { createWebhookEndpoint } = await t.admin<{ createWebhookEndpoint: { secret: string } }>(
      `mutation($i: WebhookEndpointInput!) { createWebhookEndpoint(input: $i) { secret } }`,
      { i: { apiKeyId: tenant.keyIds.gatewayLink, url: rx.url() } },
    );
    secret = createWebhookEndpoint.secret;
  });
  afterAll(async () => {
    await t?.stop();
    await rx?.down();
  });

  it("generate → the twin's QR and a deeplink, no page held → scan → approve → SUCCESS with the receipt, signed webhooks", async () => {
    const res = await gen(5000);
    expect(res.status).toBe(200);
    const b = res.body as LinkTx;
    const client = await twinClient(b.data.clientId);
    expect(b.data.qr).toBe(client.qr);
    expect(b.deeplink).toBe(`abamobilebank://ababank.com?type=payway&qrcode=${encodeURIComponent(b.data.qr)}`);
    const decoded = await post(`${t.url}/qr/decode`, { qrData: b.data.qr }, AUTH.qr(tenant.keys.qr));
    expect(decoded.body).toMatchObject({ data: { transactionAmount: "5000", transactionCurrency: "116" } });
    // The page was closed once its QR was read; the worker polls by itself.
    await waitFor(async () => t.app.module(linkModule).pool.stats().pages === 0, 5_000);
    const polled = await newPolls(b.data.clientId, 0);
    expect(polled.deviceIds[0]).toMatch(/^[a-z0-9]{10}$/);

    expect((await post(`${t.url}/sim/link/scan`, { clientId: b.data.clientId })).status).toBe(200);
    await waitFor(async () => (await outbox(b.transactionId)).includes("payment.scanned"), 15_000);
    expect((await post(`${t.url}/sim/link/approve`, { clientId: b.data.clientId })).status).toBe(200);
    const done = await waitFor(async () => {
      const c = await check(b.transactionId);
      return c.status === "SUCCESS" ? c : null;
    }, 20_000);
    expect(done.receiptUrl).toMatch(/\/api\/payment-gateway\/v1\/payments\/download-receipt\?file=/);
    expect(await statusOf(done.receiptUrl as string)).toBe(200);
    expect(await outbox(b.transactionId)).toEqual(["payment.created", "payment.scanned", "payment.completed"]);
    const seen = await twinClient(b.data.clientId);
    expect(new Set(seen.deviceIds).size).toBe(seen.deviceIds.length);
    expect(seen.reusedDeviceIds).toBe(0);

    await waitFor(async () => delivered(b.transactionId).length >= 3, 15_000);
    const hooks = delivered(b.transactionId);
    expect(hooks.map(({ d }) => d.type)).toEqual(["payment.created", "payment.scanned", "payment.completed"]);
    for (const { r } of hooks) expect(verifyWebhook(r.body, r.headers, secret)).toBe(true);
    expect(hooks[2].d.data.transaction).toMatchObject({ status: "SUCCESS", receiptUrl: done.receiptUrl });
  }, 60_000);

  it("declined on the page → FAILED, naming what PayWay said", async () => {
    const b = (await gen(2000)).body as LinkTx;
    expect((await post(`${t.url}/sim/link/decline`, { clientId: b.data.clientId })).status).toBe(200);
    await waitFor(async () => (await check(b.transactionId)).status === "FAILED", 15_000);
    expect(await outbox(b.transactionId)).toEqual(["payment.created", "payment.failed"]);
    const tx = await t.app.core.store.get(b.transactionId);
    expect(tx?.upstream.failure).toEqual({ message: 'PayWay reported "declined": Transaction declined' });
  }, 30_000);

  it("expires at exactly 180 s (moved clock), then a late approval → SUCCESS with late: true", async () => {
    const b = (await gen(3000)).body as LinkTx;
    const expiresAt = Date.parse(b.expiredAt);
    await newPolls(b.data.clientId, 0);
    // 1.5 s before the end: still pending, and the worker keeps polling.
    t.clock.advance(expiresAt - t.clock.now().getTime() - 1500);
    expect((await check(b.transactionId)).status).toBe("PENDING");
    // No read in between: the watch itself ends it when the 180 s are over.
    await waitFor(async () => (await outbox(b.transactionId)).includes("payment.expired"), 15_000);
    const expired = await t.app.core.store.get(b.transactionId);
    expect(expired?.status).toBe("EXPIRED");
    expect(expired?.completedAt?.getTime()).toBeGreaterThanOrEqual(expiresAt);

    // The payer approves after the QR's 180 s, as ABA allows: the late watch records it.
    const polls = (await twinClient(b.data.clientId)).polls;
    await newPolls(b.data.clientId, polls);
    expect((await post(`${t.url}/sim/link/approve`, { clientId: b.data.clientId })).status).toBe(200);
    await waitFor(async () => (await check(b.transactionId)).status === "SUCCESS", 30_000);
    expect(await outbox(b.transactionId)).toEqual(["payment.created", "payment.expired", "payment.completed"]);
    expect((await t.app.core.store.get(b.transactionId))?.upstream.late).toBe(true);
    await waitFor(async () => delivered(b.transactionId).length >= 3, 15_000);
    const completed = delivered(b.transactionId)[2];
    expect(completed.d.type).toBe("payment.completed");
    expect(completed.d.data.transaction).toMatchObject({ status: "SUCCESS", late: true });
    expect(verifyWebhook(completed.r.body, completed.r.headers, secret)).toBe(true);
  }, 60_000);

  it("a status poll refused as a bot (403) falls back to a page held for that payment, which reads the approval", async () => {
    await post(`${t.url}/sim/payway/fault`, { mode: "bot-check" });
    try {
      const b = (await gen(4000)).body as LinkTx;
      const watch = t.app.module(linkModule).watch;
      await waitFor(async () => watch.stats().viaPage === 1, 15_000);
      await waitFor(async () => t.app.module(linkModule).pool.stats().pages === 1, 15_000);
      const polls = (await twinClient(b.data.clientId)).polls;
      await newPolls(b.data.clientId, polls);
      expect((await post(`${t.url}/sim/link/approve`, { clientId: b.data.clientId })).status).toBe(200);
      await waitFor(async () => (await check(b.transactionId)).status === "SUCCESS", 20_000);
      await waitFor(async () => t.app.module(linkModule).pool.stats().pages === 0, 10_000);
    } finally {
      await post(`${t.url}/sim/payway/fault`, { mode: "ok" });
    }
  }, 60_000);

  it("a page refused with 403 → 502 and FAILED naming it; /readyz names the likely cause and LINK_PROXY", async () => {
    await post(`${t.url}/sim/payway/fault`, { mode: "forbidden" });
    try {
      const res = await gen(1000);
      expect(res.status).toBe(502);
      const { transactionId } = (res.body as { error: { transactionId: string } }).error;
      const tx = await t.app.core.store.get(transactionId);
      expect(tx?.status).toBe("FAILED");
      expect((tx?.upstream.failure as { message: string }).message).toMatch(/HTTP 403/);
      const ready = (await (await fetch(`${t.url}/readyz`)).json()) as {
        details?: { gatewayLink?: { refused: string; likelyCause: string; setting: string } };
      };
      expect(ready.details?.gatewayLink).toMatchObject({ setting: "LINK_PROXY" });
      expect(ready.details?.gatewayLink?.refused).toMatch(/the payment page answered HTTP 403 since/);
      expect(ready.details?.gatewayLink?.likelyCause).toMatch(/datacenter or outside Cambodia.*LINK_PROXY/);
    } finally {
      await post(`${t.url}/sim/payway/fault`, { mode: "ok" });
    }
    expect((await gen(1000)).status).toBe(200);
    // Answered again: no refusal going on; what was refused since start stays counted.
    const ready = (await (await fetch(`${t.url}/readyz`)).json()) as {
      details?: { gatewayLink?: { refused?: string; refusals: { cloudflareBlock: { count: number } } } };
    };
    expect(ready.details?.gatewayLink?.refused).toBeUndefined();
    expect(ready.details?.gatewayLink?.refusals.cloudflareBlock.count).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it("a status other than 00 → 502 and FAILED naming the code and message", async () => {
    await post(`${t.url}/sim/payway/fault`, { mode: "status", code: "12", message: "Merchant suspended" });
    try {
      const res = await gen(1000);
      expect(res.status).toBe(502);
      const { transactionId, message } = (res.body as { error: { transactionId: string; message: string } }).error;
      expect(message).toBe('The payment page refused: PayWay answered status 12 "Merchant suspended"');
      const tx = await t.app.core.store.get(transactionId);
      expect((tx?.upstream.failure as { message: string }).message).toBe(
        'the payment page refused: PayWay answered status 12 "Merchant suspended"',
      );
    } finally {
      await post(`${t.url}/sim/payway/fault`, { mode: "ok" });
    }
  }, 60_000);
});
