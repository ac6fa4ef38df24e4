// Live surfaces under hostile clients (issue "Live surfaces under hostile and heavy clients"): revocation
// and re-authorisation on websockets, the socket lifetime cap, one rate limiter on the resolved principal
// for HTTP and websocket alike, and the narrow checkout view of client tokens. Each case is run against
// PostgreSQL and against the embedded default (`npm start`'s PGlite) where the behaviour depends on how
// events and invalidations travel.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { request } from "node:http";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../../support/app.js";
import { openSocket } from "../../support/ws.js";
import { waitFor, within } from "../../support/wait.js";

const GENERATE = `mutation($input: GenerateQrInput!) { generateQr(input: $input) { transactionId } }`;
const FOLLOW_ALL = `subscription { transactionUpdates { id type transaction { transactionId status } } }`;
const CHECKOUT = `query($id: ID!) { transaction(id: $id) { id status amount currency qr qrImage expiredAt receiptUrl scanned merchantName deeplink } }`;

async function gql(
  url: string,
  headers: Record<string, string>,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{
  status: number;
  body: { data?: Record<string, unknown> | null; errors?: { message: string; extensions: { code: string } }[] };
}> {
  const r = await post(`${url}/graphql`, { query, variables }, headers);
  return { status: r.status, body: r.body as never };
}

const generate = async (t: TestApp, key: string, meta: Record<string, unknown> = { secret: "merchant-only" }) =>
  (await post(`${t.url}/qr/generate`, { amount: 1.25, currency: 840, expiredAfter: 120_000, meta }, AUTH.qr(key)))
    .body as { transactionId: string; clientToken: string; data: { md5: string } };

describe.each([
  ["PostgreSQL", false],
  ["the embedded default", true],
])("websockets are re-authorised (%s)", (_name, embedded) => {
  let t: TestApp;
  let a: Tenant;
  beforeAll(async () => {
    t = await startTestApp({ WS_MAX_LIFETIME_MS: "600000" }, { embedded });
    a = await createTenant(t);
  }, 120_000);
  afterAll(async () => t?.stop());

  it("revoking a key closes its open sockets with 4403, streams included, and nothing more runs on them", async () => {
    const key = (
      await t.admin<{ createApiKey: { apiKey: string; key: { id: string } } }>(
        `mutation($input: ApiKeyInput!) { createApiKey(input: $input) { apiKey key { id } } }`,
        { input: { merchantId: a.merchantId, kind: "qr" } },
      )
    ).createApiKey;
    const sock = await openSocket(t.url, AUTH.qr(key.apiKey));
    expect(sock.isOpen()).toBe(true);
    sock.subscribe("live", FOLLOW_ALL);
    const before = await generate(t, key.apiKey);
    await sock.next((m) => m.id === "live" && m.type === "next");
    expect(JSON.stringify(sock.messages)).toContain(before.transactionId);

    await t.admin(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: key.key.id });
    const closed = await within(sock.closed, 5000, "still open");
    expect(closed).toEqual({ code: 4403, reason: expect.any(String) });
    // HTTP refuses it too, and no transaction was created by the key after its revocation.
    expect((await post(`${t.url}/qr/verify`, { qrData: "x" }, AUTH.qr(key.apiKey))).status).toBe(401);
    const rows = await t.app.core.db.query<{ n: string }>(
      `select count(*)::text as n from "transaction" where api_key_ref = ?`,
      [key.key.id],
    );
    expect(rows[0].n).toBe("1");
  });

  it("a client token's socket closes with 4403 when its key is revoked, and the token is refused from then on", async () => {
    const key = (
      await t.admin<{ createApiKey: { apiKey: string; key: { id: string } } }>(
        `mutation($input: ApiKeyInput!) { createApiKey(input: $input) { apiKey key { id } } }`,
        { input: { merchantId: a.merchantId, kind: "qr" } },
      )
    ).createApiKey;
    const tx = await generate(t, key.apiKey);
    const sock = await openSocket(t.url, { clientToken: tx.clientToken });
    expect(sock.isOpen()).toBe(true);
    sock.subscribe("one", `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id type } }`, {
      id: tx.transactionId,
    });
    await t.admin(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: key.key.id });
    const closed = await within(sock.closed, 5000, "still open");
    expect(closed).toEqual({ code: 4403, reason: expect.any(String) });
    const after = await gql(t.url, { authorization: `Bearer ${tx.clientToken}` }, CHECKOUT, { id: tx.transactionId });
    expect(after.status).toBe(401);
    expect(after.body.errors?.[0].extensions.code).toBe("UNAUTHENTICATED");
    const again = await openSocket(t.url, { clientToken: tx.clientToken });
    expect((await again.closed).code).toBe(4403);
  });

  it("a client token's socket ends when the token expires", async () => {
    const tx = await generate(t, a.keys.qr);
    // The token lives until the transaction's expiry (120 s) + 10 min: move to 2 s before that.
    t.clock.advance(120_000 + 600_000 - 2_000);
    try {
      const sock = await openSocket(t.url, { clientToken: tx.clientToken });
      expect(sock.isOpen()).toBe(true);
      const closed = await within(sock.closed, 8000, "still open");
      expect(closed).toEqual({ code: 4403, reason: "Client token expired" });
    } finally {
      t.clock.advance(-(120_000 + 600_000 - 2_000));
    }
  });
});

describe("the socket lifetime cap", () => {
  let t: TestApp;
  let a: Tenant;
  beforeAll(async () => {
    t = await startTestApp({ WS_MAX_LIFETIME_MS: "1500" });
    a = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  it("closes a socket after WS_MAX_LIFETIME_MS with 4000 (reconnect), even while it streams", async () => {
    const sock = await openSocket(t.url, AUTH.qr(a.keys.qr));
    sock.subscribe("live", FOLLOW_ALL);
    const opened = Date.now();
    const closed = await within(sock.closed, 6000, "still open");
    expect(closed).toEqual({ code: 4000, reason: expect.stringMatching(/lifetime/) });
    expect(Date.now() - opened).toBeGreaterThanOrEqual(1000);
  });
});

describe("one rate limiter on the resolved principal", () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  let c: Tenant;
  beforeAll(async () => {
    // 120 a minute: a burst of 30, then two a second (the operator's own token is limited too: three tenants
    // are 18 admin calls).
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: "120" });
    a = await createTenant(t);
    b = await createTenant(t, { name: "B" });
    c = await createTenant(t, { name: "C" });
  });
  afterAll(async () => t?.stop());

  it("a key with bytes outside the key alphabet appended is 401, not a fresh bucket of the same key", async () => {
    const raw = (headers: Record<string, string | Buffer>) =>
      new Promise<number>((resolve, reject) => {
        const u = new URL(`${t.url}/qr/verify`);
        const req = request(
          {
            host: u.hostname,
            port: u.port,
            path: u.pathname,
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify({ qrData: "x" }));
      });
    // 0xA0 as a raw header byte (latin1): String.prototype.trim() used to remove it.
    const padded = Buffer.from(`${a.keys.qr}\u00a0\u00a0`, "latin1").toString("latin1");
    expect(await raw({ "x-api-key": padded, "x-auth-type": "api-key" })).toBe(401);
    expect(await raw({ "x-api-key": `${a.keys.qr}\u00a0`, "x-auth-type": "api-key" })).toBe(401);
    expect(await raw({ "x-api-key": a.keys.qr, "x-auth-type": "api-key" })).toBe(200);
    // In a websocket's connection_init (JSON, no HTTP parser in between) the padded key used to authenticate.
    const padded0 = await openSocket(t.url, { "x-api-key": `${a.keys.qr}\u00a0`, "x-auth-type": "api-key" });
    expect(await within(padded0.closed, 3000, "still open")).toEqual({ code: 4403, reason: "Forbidden" });
    const tabbed = await openSocket(t.url, { "x-api-key": `${a.keys.qr}\u2003`, "x-auth-type": "api-key" });
    expect(await within(tabbed.closed, 3000, "still open")).toEqual({ code: 4403, reason: "Forbidden" });
  });

  it("variants of a key do not get fresh buckets: callers without a valid key share their address's bucket", async () => {
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post(`${t.url}/qr/verify`, { qrData: "x" }, AUTH.qr(`pqr_qr_guess${i}`)).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(25);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(20);
  });

  it("websocket operations are limited, and share the key's bucket with HTTP", async () => {
    const sock = await openSocket(t.url, AUTH.qr(b.keys.qr));
    for (let i = 0; i < 50; i++)
      sock.subscribe(`g${i}`, GENERATE, { input: { amount: 1, currency: 840, expiredAfter: 60_000 } });
    // Every one of the 50 operations has ended (answered or refused) before they are counted.
    await waitFor(
      () =>
        new Set(sock.messages.filter((m) => m.type === "error" || m.type === "complete").map((m) => m.id)).size >= 50,
      30_000,
      50,
      "the 50 operations' ends",
    );
    const created = sock.messages.filter((m) => m.type === "next" && JSON.stringify(m.payload).includes("txn_"));
    const limited = sock.messages.filter((m) => JSON.stringify(m.payload ?? "").includes("RATE_LIMITED"));
    expect(created.length).toBeLessThanOrEqual(31);
    expect(limited.length).toBeGreaterThanOrEqual(19);
    // The same key over HTTP is out of tokens too.
    expect((await post(`${t.url}/qr/verify`, { qrData: "x" }, AUTH.qr(b.keys.qr))).status).toBe(429);
    sock.close();
  });

  it("a client token (bearer) is limited too", async () => {
    const tx = await generate(t, c.keys.qr);
    const ask = () =>
      gql(t.url, { authorization: `Bearer ${tx.clientToken}` }, `query($id: ID!) { transaction(id: $id) { status } }`, {
        id: tx.transactionId,
      }).then((r) => r.status);
    const statuses = await Promise.all(Array.from({ length: 60 }, ask));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(25);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(20);
  });
});

describe("a client token sees the checkout view only", () => {
  let t: TestApp;
  let a: Tenant;
  beforeAll(async () => {
    t = await startTestApp();
    a = await createTenant(t, { gatewayMerchantId: "gw_checkout", gatewaySecret: "gw-secret-checkout-0123" });
    await post(`${t.url}/sim/gateway/merchants`, { merchantId: "gw_checkout", apiKey: "gw-secret-checkout-0123" });
  });
  afterAll(async () => t?.stop());

  it("reads status, amount, currency, qr, expiry, receipt, scanned, the merchant's name and the deeplink", async () => {
    const tx = await generate(t, a.keys.qr);
    const r = await gql(t.url, { authorization: `Bearer ${tx.clientToken}` }, CHECKOUT, { id: tx.transactionId });
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data!.transaction).toEqual({
      id: tx.transactionId,
      status: "PENDING",
      amount: "1.25",
      currency: "USD",
      qr: expect.stringMatching(/^000201/),
      qrImage: expect.stringMatching(/^data:image\/png;base64,/),
      expiredAt: expect.any(String),
      receiptUrl: null,
      scanned: false,
      merchantName: "Test Shop",
      deeplink: null,
    });
  });

  it("cannot read meta, internal ids, the timeline, deliveries or the payer (403 FORBIDDEN, nothing answered)", async () => {
    const tx = await generate(t, a.keys.qr);
    await t.app.core.store.transition({
      id: tx.transactionId,
      to: "SUCCESS",
      event: "payment.completed",
      upstream: { payment: { hash: "abc123", fromAccountId: "payer@bank" } },
    });
    const bearer = { authorization: `Bearer ${tx.clientToken}` };
    for (const field of ["meta", "metaJson", "merchantId", "apiKeyId", "events { id }", "webhookDeliveries { id }"]) {
      const r = await gql(t.url, bearer, `query($id: ID!) { transaction(id: $id) { status ${field} } }`, {
        id: tx.transactionId,
      });
      expect({ field, status: r.status, code: r.body.errors?.[0].extensions.code, data: r.body.data }).toEqual({
        field,
        status: 403,
        code: "FORBIDDEN",
        data: undefined,
      });
    }
    // Over the websocket: the snapshot's payer details and the event's meta are refused as well.
    const sock = await openSocket(t.url, { clientToken: tx.clientToken });
    for (const [id, sel] of [
      ["meta", "meta"],
      ["payment", "transaction { payment }"],
      ["orderId", "transaction { orderId md5 }"],
    ]) {
      sock.subscribe(id, `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id ${sel} } }`, {
        id: tx.transactionId,
      });
      const m = await sock.next((x) => x.id === id && (x.type === "error" || x.type === "next"));
      expect({ id, type: m.type, body: JSON.stringify(m.payload) }).toEqual({
        id,
        type: "error",
        body: expect.stringContaining("FORBIDDEN"),
      });
    }
    // The checkout selection streams the final state.
    sock.subscribe(
      "ok",
      `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id type transaction { status amount } } }`,
      {
        id: tx.transactionId,
      },
    );
    const ok = await sock.next((x) => x.id === "ok" && x.type === "next");
    expect(JSON.stringify(ok.payload)).toContain("SUCCESS");
    expect(JSON.stringify(sock.messages)).not.toContain("payer@bank");
    sock.close();
  });

  it("lives at most 24 h, even for a transaction that lives 30 days (the gateway's longest)", async () => {
    const res = await post(
      `${t.url}/gateway/generate-qr`,
      { qrData: { orderId: `lt-${Date.now() % 1e9}`, amount: 1, currency: "USD", lifetime: 43200 } },
      AUTH.gateway(a.keys.gateway),
    );
    expect(res.body).toHaveProperty("clientToken");
    const g = res.body as { transactionId: string; clientToken: string; deeplink: string };
    const bearer = { authorization: `Bearer ${g.clientToken}` };
    const now = await gql(t.url, bearer, CHECKOUT, { id: g.transactionId });
    expect(now.status).toBe(200);
    expect((now.body.data!.transaction as { deeplink: string }).deeplink).toBe(g.deeplink);
    t.clock.advance(24 * 3600_000 + 60_000);
    try {
      const later = await gql(t.url, bearer, CHECKOUT, { id: g.transactionId });
      expect(later.status).toBe(401);
      // The key still reads it: only the token ended.
      const byKey = await gql(
        t.url,
        AUTH.gateway(a.keys.gateway),
        `query($id: ID!) { transaction(id: $id) { status } }`,
        {
          id: g.transactionId,
        },
      );
      expect(byKey.body.data!.transaction).toEqual({ status: "CHECKOUT" });
    } finally {
      t.clock.advance(-(24 * 3600_000 + 60_000));
    }
  });
});

describe("GraphQL cost: a budget per operation, list sizes multiplied", () => {
  let t: TestApp;
  let a: Tenant;
  const HEAVY = `{ ${Array.from(
    { length: 40 },
    (_, i) =>
      `a${i}: transactions(first: 100) { edges { node { qrImage events { id meta } webhookDeliveries(first: 200) { id log { error } } } } }`,
  ).join(" ")} }`;
  beforeAll(async () => {
    t = await startTestApp({ GRAPHQL_MAX_RESPONSE_BYTES: "8192" });
    a = await createTenant(t);
    for (let i = 0; i < 30; i++) await generate(t, a.keys.qr, { i });
  });
  afterAll(async () => t?.stop());

  it("the amplification document of the review (5 KB, 440 fields) is refused with 400 naming its cost and the budget, before any work", async () => {
    expect(Buffer.byteLength(HEAVY)).toBeLessThan(6000);
    const started = Date.now();
    const r = await gql(t.url, AUTH.qr(a.keys.qr), HEAVY);
    expect(r.status).toBe(400);
    expect(r.body.data).toBeUndefined();
    expect(r.body.errors?.[0]).toEqual({
      message: expect.stringMatching(/^Query cost \d+ exceeds the budget of 5000 per operation \(GRAPHQL_MAX_COST\)/),
      extensions: { code: "BAD_USER_INPUT", details: [] },
    });
    expect(Date.now() - started).toBeLessThan(2000);
    // One alias of it is still far over: the list sizes multiply.
    const one = await gql(
      t.url,
      AUTH.qr(a.keys.qr),
      `{ transactions(first: 100) { edges { node { id events { id } webhookDeliveries(first: 200) { id } } } } }`,
    );
    expect(one.status).toBe(400);
    expect(one.body.errors?.[0].message).toMatch(/^Query cost \d+ exceeds the budget of 5000/);
    // The same over a websocket.
    const sock = await openSocket(t.url, AUTH.qr(a.keys.qr));
    sock.subscribe("heavy", HEAVY);
    const m = await sock.next((x) => x.id === "heavy" && (x.type === "error" || x.type === "next"));
    expect(m.type).toBe("error");
    expect(JSON.stringify(m.payload)).toMatch(/Query cost \d+ exceeds the budget of 5000/);
    sock.close();
  });

  it("renders qrImage only where one transaction is read", async () => {
    const list = await gql(t.url, AUTH.qr(a.keys.qr), `{ transactions(first: 5) { edges { node { id qrImage } } } }`);
    expect(list.status).toBe(400);
    expect(list.body.errors?.[0].message).toMatch(/Transaction.qrImage is rendered only where one transaction is read/);
    const tx = await generate(t, a.keys.qr);
    const one = await gql(t.url, AUTH.qr(a.keys.qr), `query($id: ID!) { transaction(id: $id) { qrImage } }`, {
      id: tx.transactionId,
    });
    expect(one.status).toBe(200);
    expect((one.body.data!.transaction as { qrImage: string }).qrImage).toMatch(/^data:image\/png;base64,/);
  });

  it("a dashboard page within the budget runs; a response over GRAPHQL_MAX_RESPONSE_BYTES is refused with 400", async () => {
    const fields = "id area status amount currency orderId md5 clientId createdAt updatedAt";
    const page = await gql(t.url, AUTH.qr(a.keys.qr), `{ transactions(first: 5) { edges { node { ${fields} } } } }`);
    expect(page.status).toBe(200);
    expect((page.body.data!.transactions as { edges: unknown[] }).edges).toHaveLength(5);
    const big = await gql(
      t.url,
      AUTH.qr(a.keys.qr),
      `{ transactions(first: 100) { edges { node { ${fields} meta } } } }`,
    );
    expect(big.status).toBe(400);
    expect(big.body).toEqual({
      errors: [
        {
          message: expect.stringMatching(/^The response is larger than 8192 bytes \(GRAPHQL_MAX_RESPONSE_BYTES\)/),
          extensions: { code: "BAD_USER_INPUT", details: [] },
        },
      ],
    });
  });
});

describe("smaller items: crafted cursors, suggestions in production, HTTP status of authentication errors", () => {
  let t: TestApp;
  let prod: TestApp;
  let a: Tenant;
  beforeAll(async () => {
    t = await startTestApp();
    a = await createTenant(t);
    await generate(t, a.keys.qr);
    prod = await startTestApp({
      NODE_ENV: "production",
      SECRET_KEY: "prod-secret-key-Hq4Zt8Wn2Xc6Lv9Rb3Mj7Pk5Ds1F", // production's rule refuses the tests' usual one
      SIMULATORS: "false",
      NETWORK_API_URL: "http://127.0.0.1:9",
      GATEWAY_API_URL: "http://127.0.0.1:9",
    });
  });
  afterAll(async () => {
    await t?.stop();
    await prod?.stop();
  });

  it("a crafted cursor (a date PostgreSQL refuses, a NUL in the id) is 400 BAD_USER_INPUT, never 500", async () => {
    const cursor = (c: string, i: string) => Buffer.from(JSON.stringify([c, i])).toString("base64url");
    for (const after of [
      cursor("2026-13-45 99:99:99+00", "txn_x"),
      cursor("2026-02-30 10:00:00+00", "txn_x"),
      cursor("0000-01-01 00:00:00+00", "txn_x"),
      cursor("2026-01-01 10:00:00+99", "txn_x"),
      cursor("2026-01-01 10:00:00+00", "txn_\u0000x"),
    ]) {
      const r = await gql(
        t.url,
        AUTH.qr(a.keys.qr),
        `query($after: String) { transactions(first: 5, after: $after) { edges { node { id } } } }`,
        { after },
      );
      expect({ after, status: r.status, code: r.body.errors?.[0].extensions.code }).toEqual({
        after,
        status: 400,
        code: "BAD_USER_INPUT",
      });
    }
  });

  it("no 'Did you mean' suggestions in production (they stay in development)", async () => {
    const typo = `{ transactionz(first: 1) { edges { node { id } } } }`;
    const inProd = await gql(prod.url, {}, typo);
    expect(inProd.status).toBe(400);
    expect(inProd.body.errors?.[0].message).not.toMatch(/Did you mean/);
    expect(inProd.body.errors?.[0].message).toMatch(/Cannot query field "transactionz"/);
    const inDev = await gql(t.url, {}, typo);
    expect(inDev.body.errors?.[0].message).toMatch(/Did you mean/);
  });

  it("a GraphQL operation refused for its credentials answers 401 (Apollo's convention), not 200", async () => {
    const q = `{ transactions(first: 1) { edges { node { id } } } }`;
    const refused: Record<string, string>[] = [{}, AUTH.qr("pqr_qr_not-a-key"), { authorization: "Bearer nope" }];
    for (const headers of refused) {
      const r = await gql(t.url, headers, q);
      expect({ status: r.status, code: r.body.errors?.[0].extensions.code }).toEqual({
        status: 401,
        code: "UNAUTHENTICATED",
      });
    }
    const ok = await gql(t.url, AUTH.qr(a.keys.qr), q);
    expect(ok.status).toBe(200);
  });
});

describe("websocket caps: sockets per credential and per address, operations per socket, subscribe rate, idle, replay", () => {
  let t: TestApp;
  let a: Tenant;
  beforeAll(async () => {
    t = await startTestApp({
      WS_MAX_SOCKETS_PER_PRINCIPAL: "3",
      WS_MAX_SOCKETS_PER_IP: "6",
      WS_MAX_SUBSCRIPTIONS_PER_SOCKET: "3",
      WS_SUBSCRIBES_PER_SECOND: "5",
      WS_IDLE_TIMEOUT_MS: "1500",
      WS_MAX_REPLAY: "5",
    });
    a = await createTenant(t);
  });
  afterAll(async () => t?.stop());
  const closedWithin = (s: { closed: Promise<unknown> }, ms: number) => within(s.closed, ms, "still open");

  it("one client token opens at most WS_MAX_SOCKETS_PER_PRINCIPAL sockets (4429); others are unaffected", async () => {
    const tx = await generate(t, a.keys.qr);
    const follow = `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id } }`;
    const mine = [];
    for (let i = 0; i < 3; i++) {
      const s = await openSocket(t.url, { clientToken: tx.clientToken });
      s.subscribe("f", follow, { id: tx.transactionId });
      mine.push(s);
    }
    expect(mine.every((s) => s.isOpen())).toBe(true);
    const fourth = await openSocket(t.url, { clientToken: tx.clientToken });
    expect(await closedWithin(fourth, 3000)).toEqual({ code: 4429, reason: expect.stringMatching(/limit is 3/) });
    const key = await openSocket(t.url, AUTH.qr(a.keys.qr));
    expect(key.isOpen()).toBe(true);
    // One closes: there is room again.
    mine[0].close();
    await mine[0].closed;
    const again = await openSocket(t.url, { clientToken: tx.clientToken });
    expect(again.isOpen()).toBe(true);
    for (const s of [...mine, key, again]) s.close();
    await Promise.all([...mine, key, again].map((s) => s.closed));
  });

  it("one address opens at most WS_MAX_SOCKETS_PER_IP sockets, authenticated or not (4429)", async () => {
    const open = [];
    // Two sockets for each of three keys: under the per-credential cap, at the per-address cap.
    for (const auth of [AUTH.qr(a.keys.qr), AUTH.gateway(a.keys.gateway), AUTH.gatewayLink(a.keys.gatewayLink)])
      for (let i = 0; i < 2; i++) open.push(await openSocket(t.url, auth));
    expect(open.every((s) => s.isOpen())).toBe(true);
    // Each runs a subscription, so none is idle.
    for (const s of open) s.subscribe("live", FOLLOW_ALL);
    const seventh = await openSocket(t.url, { clientToken: (await generate(t, a.keys.qr)).clientToken });
    expect(await closedWithin(seventh, 3000)).toEqual({ code: 4429, reason: expect.stringMatching(/address/) });
    for (const s of open) s.close();
    await Promise.all(open.map((s) => s.closed));
  });

  it("a socket runs at most WS_MAX_SUBSCRIPTIONS_PER_SOCKET operations at once and WS_SUBSCRIBES_PER_SECOND subscribes a second", async () => {
    const s = await openSocket(t.url, AUTH.qr(a.keys.qr));
    for (let i = 0; i < 4; i++) s.subscribe(`s${i}`, FOLLOW_ALL);
    const fourth = await s.next((m) => m.id === "s3");
    expect(fourth.type).toBe("error");
    expect(JSON.stringify(fourth.payload)).toMatch(/Too many subscriptions on this socket \(the limit is 3\)/);
    expect(s.isOpen()).toBe(true);
    s.close();
    await s.closed;
    // The rate: 8 quick one-shot operations on a fresh socket, 5 a second.
    const r = await openSocket(t.url, AUTH.qr(a.keys.qr));
    for (let i = 0; i < 8; i++) r.subscribe(`q${i}`, `{ transactions(first: 1) { edges { node { id } } } }`);
    await r.next((m) => m.id === "q7" && (m.type === "error" || m.type === "complete"));
    const refused = r.messages.filter((m) => m.type === "error" && JSON.stringify(m.payload).includes("a second"));
    expect(refused.length).toBeGreaterThanOrEqual(3);
    r.close();
    await r.closed;
  });

  it("a socket with no operation closes after WS_IDLE_TIMEOUT_MS (4000); one that streams stays", async () => {
    const idle = await openSocket(t.url, AUTH.qr(a.keys.qr));
    const busy = await openSocket(t.url, AUTH.qr(a.keys.qr));
    busy.subscribe("live", FOLLOW_ALL);
    expect(await closedWithin(idle, 6000)).toEqual({ code: 4000, reason: expect.stringMatching(/Idle/) });
    expect(busy.isOpen()).toBe(true);
    busy.close();
    await busy.closed;
  });

  it("a replay of more than WS_MAX_REPLAY events is refused, naming the setting", async () => {
    const first = await generate(t, a.keys.qr);
    for (let i = 0; i < 6; i++) await generate(t, a.keys.qr);
    const [ev] = await t.app.core.db.query<{ id: string }>(
      `select id from transaction_event where transaction_ref = ?`,
      [first.transactionId],
    );
    const s = await openSocket(t.url, AUTH.qr(a.keys.qr));
    s.subscribe("r", `subscription($last: ID) { transactionUpdates(lastEventId: $last) { id } }`, { last: ev.id });
    const m = await s.next((x) => x.id === "r" && (x.type === "error" || x.type === "next"));
    // Raised while opening the stream: a result with errors (as NOT_FOUND is), then complete.
    expect(JSON.stringify(m.payload)).toMatch(/More than 5 events to replay after lastEventId \(WS_MAX_REPLAY\)/);
    s.close();
    await s.closed;
  });
});

describe("replayed events are budgeted per credential (WS_REPLAY_EVENTS_PER_MINUTE)", () => {
  let t: TestApp;
  let a: Tenant;
  beforeAll(async () => {
    // A bucket of 5 events (one whole WS_MAX_REPLAY replay) that refills one event every 15 s.
    t = await startTestApp({ WS_MAX_REPLAY: "5", WS_REPLAY_EVENTS_PER_MINUTE: "4" });
    a = await createTenant(t);
  });
  afterAll(async () => t?.stop());
  const REPLAY = `subscription($last: ID) { transactionUpdates(lastEventId: $last) { id } }`;
  const firstEventOf = async (transactionId: string) =>
    (
      await t.app.core.db.query<{ id: string }>(`select id from transaction_event where transaction_ref = ?`, [
        transactionId,
      ])
    )[0].id;

  it("a key that used its budget is refused further replays (RATE_LIMITED, naming the setting); live streams and other keys are not", async () => {
    const first = await generate(t, a.keys.qr);
    for (let i = 0; i < 5; i++) await generate(t, a.keys.qr);
    const from = await firstEventOf(first.transactionId);
    const s = await openSocket(t.url, AUTH.qr(a.keys.qr));
    // The whole budget: 5 events replayed.
    s.subscribe("r1", REPLAY, { last: from });
    await s.next((m) => m.id === "r1" && m.type === "next" && s.messages.filter((x) => x.id === "r1").length === 5);
    expect(s.messages.filter((m) => m.id === "r1" && m.type === "next")).toHaveLength(5);
    // The same replay again: refused before any event is sent.
    s.subscribe("r2", REPLAY, { last: from });
    const refused = await s.next((m) => m.id === "r2" && (m.type === "next" || m.type === "error"));
    expect(JSON.stringify(refused.payload)).toMatch(
      /Too many events replayed for this credential \(WS_REPLAY_EVENTS_PER_MINUTE\); retry in \d+ s/,
    );
    expect(JSON.stringify(refused.payload)).toMatch(/RATE_LIMITED/);
    expect(s.isOpen()).toBe(true);
    // A stream without lastEventId costs nothing from the budget.
    s.subscribe("live", FOLLOW_ALL);
    const next = await generate(t, a.keys.qr);
    const live = await s.next((m) => m.id === "live" && m.type === "next");
    expect(JSON.stringify(live.payload)).toContain(next.transactionId);
    s.close();
    await s.closed;
    // Another key has its own budget.
    const b = await createTenant(t);
    const bFirst = await generate(t, b.keys.qr);
    await generate(t, b.keys.qr);
    const sb = await openSocket(t.url, AUTH.qr(b.keys.qr));
    sb.subscribe("rb", REPLAY, { last: await firstEventOf(bFirst.transactionId) });
    const replayed = await sb.next((m) => m.id === "rb" && m.type === "next");
    expect(JSON.stringify(replayed.payload)).not.toMatch(/errors/);
    sb.close();
    await sb.closed;
  });
});
