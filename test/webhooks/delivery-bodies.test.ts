import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { waitFor } from "../support/wait.js";
import { startReceiver, type Answer, type WebhookReceiver } from "../support/webhook-receiver.js";

type Attempt = {
  attemptedAt: string;
  statusCode: number | null;
  requestHeaders: string | null;
  responseHeaders: string | null;
  responseBody: string | null;
  responseTruncated: boolean;
};
type Delivery = {
  id: string;
  createdAt: string;
  redeliveredAt: string | null;
  requestBody: string;
  state: string;
  eventId: string;
  endpointId: string;
  log: Attempt[];
};

/** A header block (`name: value` a line) as an object. */
const block = (text: string | null): Record<string, string> =>
  Object.fromEntries((text ?? "").split("\n").map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]));

const DELIVERIES = `query($tx: ID!) { webhookDeliveries(transactionId: $tx) { id eventId endpointId state createdAt redeliveredAt requestBody
  log { attemptedAt statusCode requestHeaders responseHeaders responseBody responseTruncated } } }`;

/**
 * The delivery log shows what each attempt sent and got back, as an integrator debugging an endpoint needs it:
 * the body (byte for byte what arrived), the headers sent with the signature hidden, the answer's status, headers
 * and first 4 KB of body with credentials hidden even where the endpoint echoes them.
 */
describe("the delivery log keeps each attempt's bodies", () => {
  let t: TestApp;
  let tenant: Tenant;
  let rx: WebhookReceiver;
  let txId = "";
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    // First answer: 500, the signature echoed in a header and the body, a cookie, and 10 KB of text; then 200 with
    // a short JSON body.
    rx = await startReceiver((n, r): Answer => {
      const sig = r.headers["x-signature"];
      return n === 1
        ? {
            status: 500,
            headers: { "content-type": "text/plain", "set-cookie": "session=s3cr3t-cookie", "x-echo": sig },
            body: `failed for ${sig}\n${"x".repeat(4090)}ខ្មែរ${"y".repeat(6000)}`,
          }
        : { status: 200, headers: { "content-type": "application/json" }, body: `{"received":true}` };
    });
  });
  afterAll(async () => {
    await rx?.down();
    await t?.stop();
  });

  it("request body and headers, the answer's status, headers and first 4 KB; secrets and signatures redacted", async () => {
    const { createWebhookEndpoint: ep } = await t.admin<{ createWebhookEndpoint: { secret: string } }>(
      `mutation($i: WebhookEndpointInput!) { createWebhookEndpoint(input: $i) { secret endpoint { id } } }`,
      { i: { apiKeyId: tenant.keyIds.qr, url: rx.url(), events: ["payment.created"] } },
    );
    const generated = await post(
      `${t.url}/qr/generate`,
      { amount: 3, currency: 840, expiredAfter: 600000, meta: { note: 'ស្វាគមន៍, "hi"' } },
      AUTH.qr(tenant.keys.qr),
    );
    expect(generated.status).toBe(200);
    const g = generated.body as { transactionId: string };
    txId = g.transactionId;
    const read = async () =>
      (await t.admin<{ webhookDeliveries: Delivery[] }>(DELIVERIES, { tx: g.transactionId })).webhookDeliveries[0];
    await waitFor(async () => ((await read())?.log.length === 1 ? true : undefined), 20_000);
    t.clock.advance(60_000); // past the first retry's backoff (5 s ± 20 %)
    const d = await waitFor(async () => {
      const delivery = await read();
      return delivery?.state === "delivered" ? delivery : undefined;
    }, 20_000);
    expect(d.log.map((a) => a.statusCode)).toEqual([500, 200]);
    // The body every attempt sent, byte for byte.
    expect(rx.received.map((a) => a.body)).toEqual([d.requestBody, d.requestBody]);
    const [failed, ok] = d.log;
    const sent = block(failed.requestHeaders);
    expect(sent).toMatchObject({
      "x-signature": "[redacted]",
      "x-event-type": "payment.created",
      "content-type": "application/json",
      "x-timestamp": String(rx.received[0].headers["x-timestamp"]),
    });
    const got = block(failed.responseHeaders);
    expect(got["set-cookie"]).toBe("[redacted]");
    expect(got["x-echo"]).toBe("v1=[redacted]");
    expect(failed.responseTruncated).toBe(true);
    expect(Buffer.byteLength(failed.responseBody ?? "")).toBeLessThanOrEqual(4096);
    expect(failed.responseBody).toMatch(/^failed for v1=\[redacted\]\nx+/);
    // Nothing of the signature or the secret anywhere in what the log shows.
    const shown = JSON.stringify(d);
    const sigHex = String(rx.received[0].headers["x-signature"]).slice(3);
    expect(shown).not.toContain(sigHex);
    expect(shown).not.toContain(ep.secret);
    expect(ok).toMatchObject({ responseBody: '{"received":true}', responseTruncated: false });
  });

  it("redeliver adds an attempt and keeps the delivery's creation time", async () => {
    const tx = txId;
    const before = (await t.admin<{ webhookDeliveries: Delivery[] }>(DELIVERIES, { tx })).webhookDeliveries[0];
    await t.admin(`mutation($e: ID!, $w: ID!) { redeliverWebhook(eventId: $e, endpointId: $w) { id } }`, {
      e: before.eventId,
      w: before.endpointId,
    });
    const after = await waitFor(async () => {
      const d = (await t.admin<{ webhookDeliveries: Delivery[] }>(DELIVERIES, { tx })).webhookDeliveries[0];
      return d.log.length === before.log.length + 1 && d.state === "delivered" ? d : undefined;
    }, 20_000);
    expect(after.createdAt).toBe(before.createdAt);
    expect(after.redeliveredAt).not.toBeNull();
    expect(Date.parse(after.redeliveredAt as string)).toBeGreaterThan(Date.parse(before.createdAt));
    expect(after.log.slice(0, before.log.length)).toEqual(before.log);
    expect(after.log.at(-1)?.statusCode).toBe(200);
  });
});
