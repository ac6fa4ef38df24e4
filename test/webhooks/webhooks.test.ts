import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createHmac } from "node:crypto";
import { startTestApp, createTenant, moreJobRuns, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { startReceiver } from "../support/webhook-receiver.js";
import { verifyWebhook } from "../../src/webhooks/signing.js";
import { waitFor } from "../support/wait.js";

/** The receiver's own check, written from the documented recipe (not the project's helper). */
function signedBy(secret: string, headers: Record<string, string>, body: string): boolean {
  const expected = createHmac("sha256", secret).update(`${headers["x-timestamp"]}.${body}`).digest("hex");
  return headers["x-signature"].split(" ").includes(`v1=${expected}`);
}

const addEndpoint = async (t: TestApp, apiKeyId: string, url: string, events?: string[]) =>
  (
    await t.admin<{ createWebhookEndpoint: { secret: string; endpoint: { id: string } } }>(
      `mutation($i: WebhookEndpointInput!) { createWebhookEndpoint(input: $i) { secret endpoint { id } } }`,
      { i: { apiKeyId, url, events } },
    )
  ).createWebhookEndpoint;

describe("signed webhooks", () => {
  let t: TestApp;
  // The service that made the database: a test below replaces `t` with a worker on the same database, and the
  // database goes only with this one's stop (stopping its service again is a no-op).
  let owner: TestApp | undefined;
  let tenant: Tenant;
  beforeAll(async () => {
    t = owner = await startTestApp();
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t?.stop();
    if (owner !== t) await owner?.stop();
  });

  it("a paid QR: payment.created then payment.completed, signed, with meta unchanged", async () => {
    const rx = await startReceiver();
    const { secret } = await addEndpoint(t, tenant.keyIds.qr, rx.url());
    try {
      const meta = { orderRef: "R-9", unicode: "ស្វាគមន៍", n: 1.25, deep: { a: [true, null] } };
      const g = (
        await post(
          `${t.url}/qr/generate`,
          { amount: 9.99, currency: 840, expiredAfter: 60000, meta },
          AUTH.qr(tenant.keys.qr),
        )
      ).body as { transactionId: string; data: { md5: string } };
      await post(`${t.url}/sim/network/pay`, { md5: g.data.md5 });
      await waitFor(async () => rx.received.length >= 2, 10_000);
      const [created, completed] = rx.received.map((r) => ({ r, body: JSON.parse(r.body) }));
      for (const { r, body } of [created, completed]) {
        expect(signedBy(secret, r.headers, r.body)).toBe(true);
        expect(Math.abs(Number(r.headers["x-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
        expect(r.headers["x-event-id"]).toBe(body.id);
        expect(r.headers["x-event-type"]).toBe(body.type);
        expect(Object.keys(body).sort()).toEqual(["createdAt", "data", "id", "type"]);
        expect(body.data.meta).toEqual(meta);
        expect(body.data.transaction.transactionId).toBe(g.transactionId);
      }
      expect(created.body.type).toBe("payment.created");
      expect(completed.body.type).toBe("payment.completed");
      expect(completed.body.data.transaction).toMatchObject({
        status: "SUCCESS",
        amount: "9.99",
        currency: "USD",
        md5: g.data.md5,
      });
      // The exported helper agrees, and refuses a tampered body or an old timestamp.
      const r = completed.r;
      expect(verifyWebhook(r.body, r.headers, secret)).toBe(true);
      expect(verifyWebhook(r.body, r.headers, ["whsec_other", secret])).toBe(true);
      expect(verifyWebhook(r.body.replace("SUCCESS", "FAILED"), r.headers, secret)).toBe(false);
      expect(verifyWebhook(r.body, r.headers, secret, { now: Number(r.headers["x-timestamp"]) + 301 })).toBe(false);
    } finally {
      await rx.down();
    }
  });

  it("a receiver failing 3 times then answering 200 gets the event exactly once more, with 4 attempts logged", async () => {
    const rx = await startReceiver((n) => (n <= 3 ? 500 : 200));
    const { endpoint } = await addEndpoint(t, tenant.keyIds.qr, rx.url(), ["payment.created"]);
    try {
      const g = (
        await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 60000 }, AUTH.qr(tenant.keys.qr))
      ).body as { transactionId: string };
      // A minute on the clock, then a dispatcher pass: each retry's backoff (5 s, 10 s, 20 s, …) is due at once.
      await waitFor(
        async () => {
          if (rx.received.length >= 4) return true;
          t.clock.advance(60_000);
          await moreJobRuns(t, "webhooks.dispatch", 1);
          return false;
        },
        60_000,
        0,
        "the receiver's 4th attempt",
      );
      await waitFor(async () => {
        const d = (
          await t.admin<{ webhookDeliveries: { state: string; attempts: number; log: { statusCode: number }[] }[] }>(
            `query($e: ID) { webhookDeliveries(endpointId: $e) { state attempts log { statusCode } } }`,
            { e: endpoint.id },
          )
        ).webhookDeliveries;
        return d.length === 1 && d[0].state === "delivered" ? d : null;
      }, 10_000).then((d) => {
        expect(d[0].attempts).toBe(4);
        expect(d[0].log.map((a) => a.statusCode)).toEqual([500, 500, 500, 200]);
      });
      // An hour later, three more dispatcher passes: nothing is sent again.
      t.clock.advance(3600_000);
      await moreJobRuns(t, "webhooks.dispatch", 3);
      expect(rx.received).toHaveLength(4);
      expect(new Set(rx.received.map((r) => JSON.parse(r.body).id)).size).toBe(1);
      expect(JSON.parse(rx.received[3].body).data.transaction.transactionId).toBe(g.transactionId);
    } finally {
      await rx.down();
    }
  });

  it("secret rotation signs with both secrets during the overlap", async () => {
    const rx = await startReceiver();
    const { secret: oldSecret, endpoint } = await addEndpoint(t, tenant.keyIds.qr, rx.url(), ["payment.created"]);
    try {
      const { rotateWebhookSecret } = await t.admin<{ rotateWebhookSecret: { secret: string } }>(
        `mutation($id: ID!) { rotateWebhookSecret(id: $id, overlapMinutes: 60) { secret } }`,
        { id: endpoint.id },
      );
      await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 60000 }, AUTH.qr(tenant.keys.qr));
      await waitFor(async () => rx.received.length >= 1, 10_000);
      const r = rx.received[0];
      expect(r.headers["x-signature"].split(" ")).toHaveLength(2);
      expect(signedBy(oldSecret, r.headers, r.body)).toBe(true);
      expect(signedBy(rotateWebhookSecret.secret, r.headers, r.body)).toBe(true);
    } finally {
      await rx.down();
    }
  });

  it("events committed where no dispatcher runs (an api process) are delivered by a worker started later", async () => {
    const rx = await startReceiver();
    const api = await startTestApp({}, { role: "api", dbUrl: t.dbUrl });
    try {
      const { secret, endpoint } = await addEndpoint(t, tenant.keyIds.qr, rx.url(), ["payment.created"]);
      await t.app.stop(); // no worker now
      await post(`${api.url}/qr/generate`, { amount: 2, currency: 840, expiredAfter: 60000 }, AUTH.qr(tenant.keys.qr));
      const workerStarted = Date.now();
      t = await startTestApp({}, { role: "serve", dbUrl: t.dbUrl });
      await waitFor(async () => rx.received.length >= 1, 10_000);
      expect(signedBy(secret, rx.received[0].headers, rx.received[0].body)).toBe(true);
      // Sent once, by the worker: nothing arrived before it started, and the delivery took one attempt.
      expect(rx.received[0].at).toBeGreaterThanOrEqual(workerStarted);
      const delivered = await waitFor(async () => {
        const d = (
          await t.admin<{ webhookDeliveries: { state: string; attempts: number }[] }>(
            `query($e: ID) { webhookDeliveries(endpointId: $e) { state attempts } }`,
            { e: endpoint.id },
          )
        ).webhookDeliveries;
        return d.length === 1 && d[0].state === "delivered" ? d : null;
      }, 10_000);
      expect(delivered.map((d) => d.attempts)).toEqual([1]);
    } finally {
      await api.stop();
      await rx.down();
    }
  });

  it("refuses unknown event kinds and non-http URLs", async () => {
    await expect(addEndpoint(t, tenant.keyIds.qr, "ftp://x.example/hook")).rejects.toThrow(/url/);
    await expect(addEndpoint(t, tenant.keyIds.qr, "https://x.example/hook", ["payment.exploded"])).rejects.toThrow(
      /unknown event kind/,
    );
  });
});
