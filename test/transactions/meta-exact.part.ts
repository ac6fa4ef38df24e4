import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import { startReceiver } from "../support/webhook-receiver.js";
import { parseExact, stringifyExact } from "../../src/exact-json.js";
import { waitFor } from "../support/wait.js";

// Integer-like keys ("10", "2", "1") are what JavaScript objects and jsonb both move to the front; 1.50 and the
// 20-digit number are what a double or jsonb rewrite; \u00e9 is an escape a re-serialiser would decode.
const META = `{"z":1,"a":{"2":"x","1":[1.50,{"b":1,"a":2}]},"10":3,"2":4,"big":12345678901234567890,"e":"\\u00e9"}`;
const META_AS_SENT = `{ "z": 1, "a": { "2": "x", "1": [1.50, { "b": 1, "a": 2 }] },\n  "10": 3, "2": 4, "big": 12345678901234567890, "e": "\\u00e9" }`;

/** POST a body given as text; the answer as text. */
async function postText(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  return { status: res.status, text: await res.text() };
}

/** A raw graphql-transport-ws session: every `next` frame as the text the server sent. */
function rawSubscription(
  baseUrl: string,
  init: Record<string, string>,
  query: string,
  variables: Record<string, unknown>,
): { frames: string[]; close(): void } {
  const frames: string[] = [];
  const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
  ws.on("open", () => ws.send(JSON.stringify({ type: "connection_init", payload: init })));
  ws.on("message", (data: Buffer) => {
    const text = data.toString("utf8");
    const msg = JSON.parse(text) as { type: string };
    if (msg.type === "connection_ack")
      ws.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query, variables } }));
    if (msg.type === "next") frames.push(text);
  });
  return { frames, close: () => ws.close() };
}

const SUB = `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id type meta transaction { status } } }`;

describe("meta comes back exactly as sent (key order, number text, escapes) on every read path", () => {
  let t: TestApp;
  let tenant: Tenant;
  const gen = (extra: Record<string, string> = {}) =>
    postText(`${t.url}/qr/generate`, `{"amount": 1, "currency": 840, "expiredAfter": 60000, "meta": ${META_AS_SENT}}`, {
      ...AUTH.qr(tenant.keys.qr),
      ...extra,
    });
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t, { gatewayMerchantId: "exact_gw", gatewaySecret: "exact-secret-0123456789" });
    expect(
      (await post(`${t.url}/sim/gateway/merchants`, { merchantId: "exact_gw", apiKey: "exact-secret-0123456789" }))
        .status,
    ).toBeLessThan(300);
  });
  afterAll(async () => t?.stop());

  it("parseExact/stringifyExact keep the text; plain JSON.stringify would not", () => {
    const v = parseExact(META);
    expect(JSON.stringify(v)).not.toBe(META);
    expect(stringifyExact(v)).toBe(META);
    expect(stringifyExact({ data: { meta: parseExact(META_AS_SENT) } })).toBe(`{"data":{"meta":${META}}}`);
    // Duplicate keys are kept as sent; the value the code reads is the last one, as JSON.parse has it.
    const dup = parseExact(`{"m":{"a":1,"a":2}}`) as { m: { a: number } };
    expect(dup.m.a).toBe(2);
    expect(stringifyExact(dup)).toBe(`{"m":{"a":1,"a":2}}`);
  });

  it("REST generate and /qr/check, GraphQL queries (key and dashboard), webhooks, a live subscription and its replay", async () => {
    const rx = await startReceiver();
    await t.admin(`mutation($i: WebhookEndpointInput!) { createWebhookEndpoint(input: $i) { secret } }`, {
      i: { apiKeyId: tenant.keyIds.qr, url: rx.url() },
    });
    try {
      const g = await gen();
      expect(g.status).toBe(200);
      expect(g.text).toContain(`"meta":${META}`);
      const { transactionId, data } = JSON.parse(g.text) as { transactionId: string; data: { md5: string } };

      const live = rawSubscription(t.url, AUTH.qr(tenant.keys.qr), SUB, { id: transactionId });
      // Open once its current state (the creation) has arrived: the payment is then a live change on it.
      await waitFor(async () => live.frames.length >= 1, 10_000, 20, "the live subscription's current state");
      await post(`${t.url}/sim/network/pay`, { md5: data.md5 });

      const check = await postText(`${t.url}/qr/check`, JSON.stringify({ md5: data.md5 }), AUTH.qr(tenant.keys.qr));
      expect(check.text).toContain(`"meta":${META}`);

      // Both deliveries: payment.created (written with the create) and payment.completed (built from the stored row).
      await waitFor(async () => rx.received.length >= 2, 15_000);
      for (const r of rx.received) expect(r.body).toContain(`"meta":${META}}`);
      expect(rx.received.map((r) => JSON.parse(r.body).type).sort()).toEqual(["payment.completed", "payment.created"]);

      // The current state, then the completion as it happened.
      await waitFor(async () => live.frames.length >= 2, 10_000, 20, "the live completion");
      live.close();
      const typeOf = (frame: string) =>
        (JSON.parse(frame) as { payload: { data: { transactionUpdated: { type: string } } } }).payload.data
          .transactionUpdated.type;
      expect(live.frames.map(typeOf)).toEqual(["payment.created", "payment.completed"]);
      for (const f of live.frames) expect(f).toContain(`"meta":${META}`);
      // A subscription opened after the end replays the final event from the outbox.
      const replay = rawSubscription(t.url, AUTH.qr(tenant.keys.qr), SUB, { id: transactionId });
      await waitFor(async () => replay.frames.length >= 1, 10_000);
      replay.close();
      expect(replay.frames[0]).toContain(`"meta":${META}`);

      const gql = await postText(
        `${t.url}/graphql`,
        JSON.stringify({
          query: `query($id: ID!, $md5: String!) { transaction(id: $id) { meta events { type meta } } qrTransaction(md5: $md5) { requestData { meta } } }`,
          variables: { id: transactionId, md5: data.md5 },
        }),
        AUTH.qr(tenant.keys.qr),
      );
      expect(gql.status).toBe(200);
      expect(gql.text.split(`"meta":${META}`)).toHaveLength(5); // transaction, its two events, qrTransaction
      const dashboard = await postText(
        `${t.url}/graphql`,
        JSON.stringify({ query: `{ transactions(first: 5) { edges { node { id meta metaJson } } } }` }),
        { authorization: `Bearer ${ADMIN_TOKEN}` },
      );
      expect(dashboard.text).toContain(`"id":"${transactionId}","meta":${META}`);
      // The dashboard shows metaJson: exact even after a browser's JSON.parse.
      const nodes = (
        JSON.parse(dashboard.text) as {
          data: { transactions: { edges: { node: { id: string; metaJson: string } }[] } };
        }
      ).data.transactions.edges;
      expect(nodes.find((e) => e.node.id === transactionId)?.node.metaJson).toBe(META);
    } finally {
      await rx.down();
    }
  }, 60_000);

  it("meta sent as a GraphQL variable is kept exactly too", async () => {
    const body = `{"query":"mutation($i: GenerateQrInput!) { generateQr(input: $i) { transactionId requestData { meta } data { md5 } } }","variables":{"i":{"amount":1,"currency":840,"expiredAfter":60000,"meta":${META_AS_SENT}}}}`;
    const res = await postText(`${t.url}/graphql`, body, AUTH.qr(tenant.keys.qr));
    expect(res.status).toBe(200);
    expect(res.text).toContain(`"meta":${META}`);
    const md5 = (JSON.parse(res.text) as { data: { generateQr: { data: { md5: string } } } }).data.generateQr.data.md5;
    expect((await postText(`${t.url}/qr/check`, JSON.stringify({ md5 }), AUTH.qr(tenant.keys.qr))).text).toContain(
      `"meta":${META}`,
    );
  });

  it("hosted gateway metaData is kept exactly in its events", async () => {
    const res = await postText(
      `${t.url}/gateway/generate-qr`,
      `{"qrData":{"orderId":"ex-${Date.now().toString(36)}","amount":1,"currency":"USD"},"metaData":${META_AS_SENT}}`,
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(res.status).toBe(200);
    const { transactionId } = JSON.parse(res.text) as { transactionId: string };
    const gql = await postText(
      `${t.url}/graphql`,
      JSON.stringify({
        query: `query($id: ID!) { transaction(id: $id) { meta events { meta } } }`,
        variables: { id: transactionId },
      }),
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(gql.text.split(`"meta":${META}`)).toHaveLength(3);
  });

  it("a key twice in meta is refused over HTTP, as docs/api.md says (the README said such keys were kept)", async () => {
    const dup = `{"a":1,"b":{"c":1,"c":2}}`;
    const rest = await postText(
      `${t.url}/qr/generate`,
      `{"amount":1,"currency":840,"expiredAfter":60000,"meta":${dup}}`,
      AUTH.qr(tenant.keys.qr),
    );
    expect(rest.status).toBe(400);
    expect(JSON.parse(rest.text)).toMatchObject({
      error: { code: "BAD_USER_INPUT", details: [{ field: "c", message: "appears more than once" }] },
    });
    const gql = await postText(
      `${t.url}/graphql`,
      `{"query":"mutation($i: GenerateQrInput!) { generateQr(input: $i) { transactionId } }",` +
        `"variables":{"i":{"amount":1,"currency":840,"expiredAfter":60000,"meta":${dup}}}}`,
      AUTH.qr(tenant.keys.qr),
    );
    expect(gql.status).toBe(400);
    const page = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
    const bullet = /- \*\*`meta` comes back exactly as sent\*\*[\s\S]*?(?=\n- \*\*)/.exec(page)?.[0] ?? "";
    expect(bullet).toMatch(/key twice in one object[^.]*refused/);
    expect(bullet).not.toMatch(/escapes, duplicate keys/);
  });

  it("an idempotent retry answers the stored response with meta exactly as sent", async () => {
    const key = { "idempotency-key": `exact-${Date.now()}` };
    const first = await gen(key);
    const again = await gen(key);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.text).transactionId).toBe(JSON.parse(first.text).transactionId);
    expect(again.text).toContain(`"meta":${META}`);
  });
});
