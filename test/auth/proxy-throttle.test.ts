import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp } from "../support/app.js";
import { Client, type Answer } from "../support/http.js";
import { openSocket } from "../support/ws.js";

// The service listens on 127.0.0.1 and trusts 127.0.0.1 as its proxy (TRUSTED_PROXIES): requests sent from
// 127.0.0.1 with X-Forwarded-For are what a reverse proxy in front would send; requests from 127.0.0.2… are a
// client reaching the service directly. The failed-credential budget is the default, 10 a minute.
const PROXY = "127.0.0.1";
const THROTTLED = /^Too many failed credentials from this address; retry in \d+ s$/;
const bogus = (i: number) => `ct_${Buffer.from(`txn_bogus${i}.9999999999999.key_x`).toString("base64url")}.forged`;
const SUBSCRIPTION = `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id transaction { status } } }`;

/** One request from `from` (a loopback address), with a bearer token and, as a proxy would add, X-Forwarded-For. */
async function send(
  baseUrl: string,
  from: string,
  r: { method?: string; path: string; token?: string; forwardedFor?: string; body?: unknown },
): Promise<Answer> {
  const client = new Client(baseUrl, 1, from);
  try {
    return await client.send({
      method: r.method ?? "GET",
      path: r.path,
      headers: {
        ...(r.token === undefined ? {} : { authorization: `Bearer ${r.token}` }),
        ...(r.forwardedFor === undefined ? {} : { "x-forwarded-for": r.forwardedFor }),
        ...(r.body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: r.body === undefined ? undefined : Buffer.from(JSON.stringify(r.body)),
    });
  } finally {
    client.close();
  }
}

const adminQuery = { method: "POST", path: "/graphql", body: { query: "{ merchants { id } }" } };

/** A graphql-ws connection_init from `from` (forwarded for `forwardedFor`): acknowledged, or how it closed. */
async function connect(baseUrl: string, from: string, params: Record<string, string>, forwardedFor?: string) {
  const headers = forwardedFor === undefined ? undefined : { "x-forwarded-for": forwardedFor };
  const socket = await openSocket(baseUrl, params, { localAddress: from, headers });
  if (!socket.isOpen()) return { socket: null, closed: await socket.closed };
  return { socket, closed: null };
}

describe("behind a trusted proxy: one sender of bogus client tokens is throttled, the other shoppers are not", () => {
  let t: TestApp;
  let view: (forwardedFor?: string, from?: string) => Promise<Answer>;
  let transactionId: string;
  let clientToken: string;
  beforeAll(async () => {
    t = await startTestApp({ BEARER_FAILURES_PER_MINUTE: "", TRUSTED_PROXIES: PROXY });
    const tenant = await createTenant(t);
    const g = await post(
      `${t.url}/qr/generate`,
      { amount: 1, currency: 840, expiredAfter: 600_000 },
      AUTH.qr(tenant.keys.qr),
    );
    ({ transactionId, clientToken } = g.body as { transactionId: string; clientToken: string });
    // What the checkout page reads first: its transaction's view, with the client token as a bearer token.
    view = (forwardedFor, from = PROXY) =>
      send(t.url, from, { path: `/checkout/view/${transactionId}`, token: clientToken, forwardedFor });
  });
  afterAll(async () => t?.stop());

  it("over HTTP: the bogus sender gets 429 after 10; a valid client token is served, from another address and from its own", async () => {
    const hostile = "203.0.113.7";
    const statuses: number[] = [];
    for (let i = 0; i < 13; i++)
      statuses.push(
        (await send(t.url, PROXY, { path: `/checkout/view/${transactionId}`, token: bogus(i), forwardedFor: hostile }))
          .status,
      );
    expect(statuses).toEqual([...Array<number>(10).fill(401), 429, 429, 429]);
    // Another shopper behind the same proxy: its own budget.
    const other = await view("198.51.100.20");
    expect(other.status).toBe(200);
    expect(other.json).toMatchObject({ transactionId, status: "PENDING" });
    // A shopper behind the same NAT as the sender (one forwarded address): a valid client token is never refused.
    expect((await view(hostile)).status).toBe(200);
    // The admin token from the throttled address stays refused, unchecked.
    const admin = await send(t.url, PROXY, { ...adminQuery, token: ADMIN_TOKEN, forwardedFor: hostile });
    expect(admin.status).toBe(429);
    expect(admin.json).toEqual({
      error: { code: "RATE_LIMITED", message: expect.stringMatching(THROTTLED), details: [] },
    });
    expect(
      (await send(t.url, PROXY, { ...adminQuery, token: ADMIN_TOKEN, forwardedFor: "198.51.100.21" })).status,
    ).toBe(200);
  });

  it("over graphql-ws: the bogus sender's sockets close 4429 after 10; a valid clientToken is acknowledged and subscribed", async () => {
    const hostile = "203.0.113.8";
    for (let i = 0; i < 10; i++)
      expect((await connect(t.url, PROXY, { clientToken: bogus(i) }, hostile)).closed?.code).toBe(4403);
    expect((await connect(t.url, PROXY, { clientToken: bogus(10) }, hostile)).closed).toEqual({
      code: 4429,
      reason: expect.stringMatching(THROTTLED),
    });
    for (const forwardedFor of ["198.51.100.30", hostile]) {
      const { socket, closed } = await connect(t.url, PROXY, { clientToken }, forwardedFor);
      expect({ forwardedFor, closed }).toEqual({ forwardedFor, closed: null });
      // The subscription sends the current state first: the page is live.
      socket!.subscribe("1", SUBSCRIPTION, { id: transactionId });
      const first = await socket!.next((m) => m.type === "next");
      expect(first.payload).toMatchObject({ data: { transactionUpdated: { transaction: { status: "PENDING" } } } });
      socket!.close();
    }
    expect((await connect(t.url, PROXY, { authorization: `Bearer ${ADMIN_TOKEN}` }, hostile)).closed).toEqual({
      code: 4429,
      reason: expect.stringMatching(THROTTLED),
    });
  });

  it("a peer that is not a trusted proxy cannot choose its address: its X-Forwarded-For is ignored", async () => {
    const direct = "127.0.0.2";
    // Each guess claims another address; all are charged to the peer itself.
    for (let i = 0; i < 10; i++)
      expect(
        (
          await send(t.url, direct, {
            ...adminQuery,
            token: `guess-${i}-${"x".repeat(30)}`,
            forwardedFor: `192.0.2.${i}`,
          })
        ).status,
      ).toBe(401);
    const claimed = await send(t.url, direct, { ...adminQuery, token: ADMIN_TOKEN, forwardedFor: "198.51.100.99" });
    expect(claimed.status).toBe(429);
    expect(
      (await connect(t.url, direct, { authorization: `Bearer ${ADMIN_TOKEN}` }, "198.51.100.98")).closed?.code,
    ).toBe(4429);
    // …and the addresses it claimed were charged nothing.
    expect((await send(t.url, PROXY, { ...adminQuery, token: ADMIN_TOKEN, forwardedFor: "192.0.2.3" })).status).toBe(
      200,
    );
  });

  it("without a proxy too: 10 wrong admin tokens lock the admin token out of that address, not a valid client token", async () => {
    const shared = "127.0.0.3";
    for (let i = 0; i < 10; i++)
      expect((await send(t.url, shared, { ...adminQuery, token: `guess-${i}-${"y".repeat(30)}` })).status).toBe(401);
    expect((await send(t.url, shared, { ...adminQuery, token: ADMIN_TOKEN })).status).toBe(429);
    expect((await view(undefined, shared)).status).toBe(200);
    expect((await connect(t.url, shared, { clientToken })).closed).toBeNull();
    expect((await connect(t.url, shared, { authorization: `Bearer ${ADMIN_TOKEN}` })).closed?.code).toBe(4429);
  });
});

describe("behind a trusted proxy, every budget kept per address is kept per forwarded address", () => {
  let t: TestApp;
  beforeAll(async () => {
    // RATE_LIMIT_PER_MINUTE=4: a burst of 10 per anonymous address. Two sockets per address, two connections.
    t = await startTestApp({
      TRUSTED_PROXIES: `${PROXY}, ::1`,
      RATE_LIMIT_PER_MINUTE: "4",
      WS_MAX_SOCKETS_PER_IP: "2",
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: "2",
    });
  });
  afterAll(async () => t?.stop());

  it("the rate limiter's bucket of callers without credentials, and the gateway pushback's per address", async () => {
    const anonymous = (forwardedFor: string) =>
      send(t.url, PROXY, { method: "POST", path: "/graphql", forwardedFor, body: { query: "{ __typename }" } });
    for (let i = 0; i < 10; i++) expect((await anonymous("198.51.100.40")).status).not.toBe(429);
    expect((await anonymous("198.51.100.40")).status).toBe(429);
    expect((await anonymous("198.51.100.41")).status).not.toBe(429);
    const pushback = (forwardedFor: string, i: number) =>
      send(t.url, PROXY, { method: "POST", path: `/gateway/pushback/cfg-${i}`, forwardedFor, body: { tran_id: "o1" } });
    for (let i = 0; i < 10; i++) expect((await pushback("198.51.100.42", i)).status).toBe(200);
    expect((await pushback("198.51.100.42", 10)).status).toBe(429);
    expect((await pushback("198.51.100.43", 11)).status).toBe(200);
  });

  it("websockets per address count the forwarded address", async () => {
    const { socket: a } = await connect(t.url, PROXY, { authorization: `Bearer ${ADMIN_TOKEN}` }, "198.51.100.50");
    const { socket: b } = await connect(t.url, PROXY, { authorization: `Bearer ${ADMIN_TOKEN}` }, "198.51.100.50");
    const third = await connect(t.url, PROXY, { authorization: `Bearer ${ADMIN_TOKEN}` }, "198.51.100.50");
    expect(third.closed).toEqual({ code: 4429, reason: expect.stringMatching(/^Too many sockets from this address/) });
    const other = await connect(t.url, PROXY, { authorization: `Bearer ${ADMIN_TOKEN}` }, "198.51.100.51");
    expect(other.closed).toBeNull();
    for (const s of [a, b, other.socket]) s?.close();
  });

  it("the proxy's connections are not capped per address (it carries every client); a direct client still is", async () => {
    const proxied = await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        connect(t.url, PROXY, { authorization: `Bearer ${ADMIN_TOKEN}` }, `198.51.100.${60 + i}`),
      ),
    );
    expect(proxied.map((p) => p.closed)).toEqual([null, null, null, null, null]);
    const direct = await Promise.all(
      [0, 1, 2].map(() => connect(t.url, "127.0.0.4", { authorization: `Bearer ${ADMIN_TOKEN}` })),
    );
    // The third direct connection is reset before its upgrade is read (closed without a graphql-ws code).
    expect(direct.filter((d) => d.closed === null)).toHaveLength(2);
    for (const p of [...proxied, ...direct]) p.socket?.close();
  });
});
