import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { startTestApp, ADMIN_TOKEN, type TestApp } from "../support/app.js";
import { Client, statusOf } from "../support/http.js";
import { openSocket } from "../support/ws.js";
import { randomBytes } from "node:crypto";
import { ConfigError, loadConfig, weakSecret } from "../../src/config.js";
import { BearerThrottle, throttleKey } from "../../src/auth/bearer-throttle.js";

const query = (t: TestApp, token: string) =>
  fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: "{ merchants { id } }" }),
  });

describe("admin token guessing (issue 16)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ BEARER_FAILURES_PER_MINUTE: "" }); // the default: 10 a minute
  });
  afterAll(async () => t?.stop());

  it("after 10 wrong bearer tokens from one address: 429 with retry-after, even for the right token, for a minute", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await query(t, `guess-${i}-${"x".repeat(20)}`)).status);
    expect(statuses.slice(0, 10).every((s) => s !== 429)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    const blocked = await query(t, ADMIN_TOKEN);
    expect(blocked.status).toBe(429);
    const wait = Number(blocked.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(((await blocked.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    // Requests without a bearer token (API keys, health) are not affected.
    expect(await statusOf(`${t.url}/healthz`)).toBe(200);
  });

  it("the secret rule: 32 characters in every mode; in production a strength estimate of more than 128 bits", () => {
    expect(weakSecret("x".repeat(31), false)).toBe("it has 31 characters, at least 32 are required");
    expect(weakSecret("x".repeat(31), true)).toBe("it has 31 characters, at least 32 are required");
    expect(weakSecret("x".repeat(32), false)).toBeNull();
    // The review's two tokens, and patterns a person types.
    for (const weak of [
      "abcdefghijklmnopqrstuvwxyz0123456789",
      "ThisIsMyAdminTokenForProduction2026!!",
      "password12345678password12345678",
      "xy".repeat(40),
      "admin-token-for-the-payment-qr-service",
    ])
      expect(weakSecret(weak, true)).toMatch(/^its strength estimate is \d+ bits, more than 128 are required/);
    expect(weakSecret("abcdefghijklmnopqrstuvwxyz0123456789", true)).toContain('Common character sequences like "abc"');
    for (let i = 0; i < 3; i++) expect(weakSecret(randomBytes(32).toString("base64url"), true)).toBeNull();
    expect(weakSecret(randomBytes(32).toString("base64"), true)).toBeNull();
    expect(weakSecret(ADMIN_TOKEN, true)).toBeNull();
  });

  it("loadConfig applies the one rule with one message: too weak, why, and how to make one (no token printed)", () => {
    const production = {
      NODE_ENV: "production",
      SECRET_KEY: "hdW3mQ8vYc2TfK9pLx4RnB7sZa1GeJ6uNq5Dw0Vt",
      SIMULATORS: "false",
      NETWORK_API_URL: "http://127.0.0.1:9/network",
      GATEWAY_API_URL: "http://127.0.0.1:9/gateway",
      DATABASE_URL: "postgresql://pqr@127.0.0.1:9/pqr",
    };
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return null;
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
    };
    const advice = /; use 32 random bytes \(`openssl rand -base64 32`, or `node -e .*`\)$/;
    for (const [env, name] of [
      [{ ...production, ADMIN_TOKEN: "ThisIsMyAdminTokenForProduction2026!!" }, "ADMIN_TOKEN"],
      [{ ...production, ADMIN_TOKEN: "abcdefghijklmnopqrstuvwxyz0123456789" }, "ADMIN_TOKEN"],
      [{ NODE_ENV: "development", ADMIN_TOKEN: "only-twenty-characte" }, "ADMIN_TOKEN"],
      [{ ...production, ADMIN_TOKEN, SECRET_KEY: "test-secret-key-0123456789-0123456789" }, "SECRET_KEY"],
      [{ ...production, ADMIN_TOKEN, METRICS_TOKEN: "metrics-token-for-the-payment-service" }, "METRICS_TOKEN"],
    ] as const) {
      const message = refusal(env);
      expect(message).toMatch(new RegExp(`^${name} is too weak \\(.+\\)`));
      expect(message).toMatch(advice);
      // Nothing generated is printed: a log keeps what it is given.
      expect(message).not.toMatch(/[\w-]{40,}/);
    }
    expect(refusal(production)).toMatch(/^ADMIN_TOKEN is required when NODE_ENV=production; use 32 random bytes/);
    expect(refusal({ ...production, ADMIN_TOKEN, SECRET_KEY: "" })).toMatch(/^SECRET_KEY is required when/);
    expect(refusal({ ...production, ADMIN_TOKEN: randomBytes(32).toString("base64url") })).toBeNull();
  });
});

// The same budget on every channel. The service listens on 127.0.0.1; clients bind other loopback addresses
// (127.0.0.2, …) so the service sees distinct client addresses.
const wrong = (i: number) => `guess-${i}-${"x".repeat(30)}`;
const THROTTLED = /^Too many failed credentials from this address; retry in \d+ s$/;

/** POST /graphql `{ merchants { id } }` with a bearer token from `localAddress`. */
async function overHttp(baseUrl: string, localAddress: string, token: string) {
  const client = new Client(baseUrl, 1, localAddress);
  try {
    return await client.send({
      method: "POST",
      path: "/graphql",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: Buffer.from(JSON.stringify({ query: "{ merchants { id } }" })),
    });
  } finally {
    client.close();
  }
}

/** A graphql-ws connection_init from `localAddress`: acknowledged (open) or closed with a code and reason. */
async function overSocket(baseUrl: string, localAddress: string, params: Record<string, string>) {
  const socket = await openSocket(baseUrl, params, { localAddress });
  if (socket.isOpen()) {
    socket.close();
    return { code: 0, reason: "acknowledged" };
  }
  return socket.closed;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("one throttle for admin credentials: HTTP and websockets share the per-address budget", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ BEARER_FAILURES_PER_MINUTE: "" }); // the default: 10 a minute
  });
  afterAll(async () => t?.stop());

  it("10 wrong tokens in connection_init: the next socket closes 4429 and HTTP answers 429, even for the right token", async () => {
    const guesser = "127.0.0.2";
    for (let i = 0; i < 10; i++) expect((await overSocket(t.url, guesser, bearer(wrong(i)))).code).toBe(4403);
    expect(await overSocket(t.url, guesser, bearer(wrong(10)))).toEqual({
      code: 4429,
      reason: expect.stringMatching(THROTTLED),
    });
    expect(await overSocket(t.url, guesser, bearer(ADMIN_TOKEN))).toEqual({
      code: 4429,
      reason: expect.stringMatching(THROTTLED),
    });
    const http = await overHttp(t.url, guesser, ADMIN_TOKEN);
    expect(http.status).toBe(429);
    expect(Number(http.headers["retry-after"])).toBeGreaterThan(0);
    expect(Number(http.headers["retry-after"])).toBeLessThanOrEqual(60);
    expect(http.json).toEqual({
      error: { code: "RATE_LIMITED", message: expect.stringMatching(THROTTLED), details: [] },
    });
    // Another address keeps its own budget, on both channels.
    expect(await overSocket(t.url, "127.0.0.3", bearer(ADMIN_TOKEN))).toEqual({ code: 0, reason: "acknowledged" });
    expect((await overHttp(t.url, "127.0.0.3", ADMIN_TOKEN)).status).toBe(200);
  });

  it("10 wrong bearer tokens over HTTP: the websocket from that address closes 4429, for the admin token and a clientToken alike", async () => {
    const guesser = "127.0.0.4";
    for (let i = 0; i < 10; i++) expect((await overHttp(t.url, guesser, wrong(i))).status).toBe(401);
    expect(await overSocket(t.url, guesser, bearer(ADMIN_TOKEN))).toEqual({
      code: 4429,
      reason: expect.stringMatching(THROTTLED),
    });
    expect((await overSocket(t.url, guesser, { clientToken: "ct_nope.nope" })).code).toBe(4429);
    expect(await overSocket(t.url, "127.0.0.5", bearer(ADMIN_TOKEN))).toEqual({ code: 0, reason: "acknowledged" });
  });

  it("a graphql-ws client sees the 4429 and its reason, and does not reconnect against the throttle", async () => {
    const guesser = "127.0.0.6";
    for (let i = 0; i < 10; i++) await overHttp(t.url, guesser, wrong(i));
    // graphql-ws' own client, with its retries on: 4429 is one of the close codes it treats as final.
    class FromGuesser extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { localAddress: guesser });
      }
    }
    let attempts = 0;
    const client = createClient({
      url: `${t.url.replace(/^http/, "ws")}/graphql`,
      webSocketImpl: FromGuesser,
      connectionParams: bearer(ADMIN_TOKEN),
      retryAttempts: 5,
      retryWait: async () => undefined,
      lazy: true,
      on: { connecting: () => void attempts++ },
    });
    const error = await new Promise<unknown>((resolve) =>
      client.subscribe(
        { query: "subscription { transactionUpdates { id } }" },
        {
          next: () => undefined,
          error: resolve,
          complete: () => resolve(null),
        },
      ),
    );
    await client.dispose();
    expect(error).toMatchObject({ code: 4429, reason: expect.stringMatching(THROTTLED) });
    expect(attempts).toBe(1);
  });
});

describe("one throttle for admin credentials: the operator listener (ADMIN_PORT) shares it too", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ BEARER_FAILURES_PER_MINUTE: "", ADMIN_PORT: "0", ADMIN_HOST: "127.0.0.1" });
  });
  afterAll(async () => t?.stop());

  it("10 wrong tokens on the operator listener: the public port's HTTP and websocket refuse that address", async () => {
    const operator = t.app.adminUrl as string;
    const guesser = "127.0.0.7";
    for (let i = 0; i < 10; i++) expect((await overHttp(operator, guesser, wrong(i))).status).toBe(401);
    expect((await overHttp(operator, guesser, ADMIN_TOKEN)).status).toBe(429);
    expect((await overHttp(t.url, guesser, ADMIN_TOKEN)).status).toBe(429);
    expect(await overSocket(t.url, guesser, bearer(ADMIN_TOKEN))).toEqual({
      code: 4429,
      reason: expect.stringMatching(THROTTLED),
    });
    expect((await overHttp(operator, "127.0.0.8", ADMIN_TOKEN)).status).toBe(200);
  });
});

describe("the throttle's budgets", () => {
  it("IPv4 and its IPv4-mapped IPv6 form share one; an IPv6 client is charged per /64", () => {
    expect(throttleKey("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(throttleKey("192.0.2.7")).toBe("192.0.2.7");
    expect(throttleKey("2001:db8:1:2:aaaa::1")).toBe(throttleKey("2001:db8:1:2:bbbb:cccc:dddd:2"));
    expect(throttleKey("2001:db8:1:3::1")).not.toBe(throttleKey("2001:db8:1:2::1"));
    let now = 0;
    const throttle = new BearerThrottle(
      { isAdminToken: () => false, isClientToken: () => false },
      { maxFailures: 3, windowMs: 60_000, now: () => now },
    );
    for (const a of ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"]) throttle.fail(a);
    expect(throttle.blockedFor("2001:db8:1:2::99")).toBe(60);
    expect(throttle.blockedFor("2001:db8:1:3::1")).toBe(0);
    throttle.fail("::ffff:192.0.2.7");
    throttle.fail("192.0.2.7");
    throttle.fail("::ffff:192.0.2.7");
    expect(throttle.blockedFor("192.0.2.7")).toBe(60);
    now = 60_000;
    expect(throttle.blockedFor("192.0.2.7")).toBe(0);
  });
});
