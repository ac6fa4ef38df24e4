// Regressions found by the GraphQL fuzz suite (test/faults/input/graphql-fuzz.test.ts): each case once
// answered INTERNAL (or HTTP 500), or a body that was not a GraphQL response.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import { subscribe } from "../support/ws.js";

type Gql = { data?: unknown; errors?: { message: string; extensions: { code: string; details: unknown[] } }[] };
const codes = (body: unknown) => ((body as Gql).errors ?? []).map((e) => e.extensions.code);

describe("GraphQL: hostile requests get GraphQL errors with documented codes", () => {
  let t: TestApp;
  let tenant: Tenant;
  const gql = (body: unknown, headers: Record<string, string> = {}) => post(`${t.url}/graphql`, body, headers);
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  it("invalid JSON and bodies over 64 KiB are answered as GraphQL errors, not the REST error body", async () => {
    const broken = await gql('{"query": "{ viewer { type } }"');
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({
      errors: [{ message: expect.any(String), extensions: { code: "BAD_USER_INPUT", details: [] } }],
    });
    const huge = await gql({ query: "{ viewer { type } }", variables: { pad: "x".repeat(70_000) } });
    expect(huge.status).toBe(413);
    expect(codes(huge.body)).toEqual(["BAD_USER_INPUT"]);
  });

  it("a subscription sent over HTTP is refused as BAD_USER_INPUT (it used to run as a query and fail INTERNAL)", async () => {
    const res = await gql({ query: "subscription { transactionUpdates { id } }" }, AUTH.qr(tenant.keys.qr));
    expect(res.status).toBe(400);
    expect(codes(res.body)).toEqual(["BAD_USER_INPUT"]);
  });

  it("null through a nullable variable into a non-null argument with a default is BAD_USER_INPUT naming it (was INTERNAL)", async () => {
    const query = `query($f: String) { cardImage(format: $f, transactionId: "txn_nope") }`;
    const res = await gql({ query, variables: { f: null } }, AUTH.qr(tenant.keys.qr));
    expect(res.status).toBe(400);
    const errors = (res.body as { errors: { extensions: { code: string; details: unknown[] } }[] }).errors;
    expect(errors.map((e) => e.extensions.code)).toEqual(["BAD_USER_INPUT"]);
    expect(errors[0].extensions.details).toEqual([
      { field: "format", message: expect.stringContaining("must not be null") },
    ]);
  });

  it("an operationName the document does not define, and an unknown persisted-query hash, are BAD_USER_INPUT", async () => {
    for (const operationName of ["", "Nope"])
      expect(codes((await gql({ query: "query A { viewer { type } }", operationName })).body)).toEqual([
        "BAD_USER_INPUT",
      ]);
    const apq = await gql({ extensions: { persistedQuery: { version: 1, sha256Hash: "0".repeat(64) } } });
    expect(codes(apq.body)).toEqual(["BAD_USER_INPUT"]);
    // Apollo Client's persisted-query link recognises the message.
    expect((apq.body as Gql).errors?.[0].message).toBe("PersistedQueryNotFound");
  });

  it("more than 50 variable errors: every error is BAD_USER_INPUT, none INTERNAL", async () => {
    const input = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`unknown${i}`, i]));
    const res = await gql(
      {
        query: "mutation($input: GenerateQrInput!) { generateQr(input: $input) { transactionId } }",
        variables: { input },
      },
      AUTH.qr(tenant.keys.qr),
    );
    expect(res.status).toBe(400);
    expect(new Set(codes(res.body))).toEqual(new Set(["BAD_USER_INPUT"]));
  });

  it("a document nested thousands of levels deep (inline fragments, list literals) is refused before parsing; 90 levels still run", async () => {
    for (const query of [
      `query { ${"... on Query { ".repeat(3500)}viewer { type }${" }".repeat(3500)} }`,
      `query { transactions(filter: { search: ${"[".repeat(3000)}"x"${"]".repeat(3000)} }) { edges { cursor } } }`,
    ]) {
      // Whether graphql-js overflows its stack while parsing, validating or executing such a document depends on
      // how warm the JIT is (the fuzz suite saw INTERNAL and HTTP 500); the guard refuses it before any of that.
      const res = await gql({ query }, AUTH.qr(tenant.keys.qr));
      expect(res.status).toBe(400);
      expect(codes(res.body)).toEqual(["BAD_USER_INPUT"]);
      expect((res.body as Gql).errors?.[0].message).toMatch(/document is nested \d+ levels deep .*the limit is 100/);
    }
    const ok = await gql(
      { query: `query { ${"... on Query { ".repeat(90)}viewer { type }${" }".repeat(90)} }` },
      AUTH.qr(tenant.keys.qr),
    );
    expect(ok.body).toEqual({ data: { viewer: { type: "key" } } });
    // Braces inside strings and comments do not count.
    const quoted = await gql(
      { query: `query { verifyQr(qrData: "${"{".repeat(500)}") # ${"[".repeat(500)}\n }` },
      AUTH.qr(tenant.keys.qr),
    );
    expect(quoted.body).toEqual({ data: { verifyQr: false } });
  });

  it("over graphql-ws, errors raised while opening a stream carry extensions.code (NOT_FOUND, UNAUTHENTICATED) as over HTTP", async () => {
    const missing = subscribe(
      t.url,
      AUTH.qr(tenant.keys.qr),
      `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id } }`,
      { id: "txn_doesnotexist000" },
    );
    await missing.sub.done;
    expect(JSON.stringify(missing.sub.error)).toContain(`"code":"NOT_FOUND"`);
    const gen = (
      await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 60000 }, AUTH.qr(tenant.keys.qr))
    ).body as { clientToken: string };
    const everything = subscribe(t.url, { clientToken: gen.clientToken }, `subscription { transactionUpdates { id } }`);
    await everything.sub.done;
    // Not part of the checkout view: refused before it runs.
    expect(JSON.stringify(everything.sub.error)).toContain(`"code":"FORBIDDEN"`);
  });

  it("admin operations with NUL in an id or a text field are BAD_USER_INPUT naming it, not INTERNAL", async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const list = await gql({ query: `query { apiKeys(merchantId: "\\u0000") { id } }` }, admin);
    expect((list.body as Gql).errors?.[0]).toMatchObject({
      extensions: { code: "BAD_USER_INPUT", details: [{ field: "merchantId" }] },
    });
    const created = await gql(
      {
        query: `mutation($input: MerchantInput!) { createMerchant(input: $input) { id } }`,
        variables: { input: { name: "a\u0000b" } },
      },
      admin,
    );
    expect((created.body as Gql).errors?.[0]).toMatchObject({
      extensions: { code: "BAD_USER_INPUT", details: [{ field: "name" }] },
    });
  });

  it("over graphql-ws, a syntax error answers that subscription and keeps the socket (it used to close it with 4500)", async () => {
    const client = createClient({
      url: `${t.url.replace(/^http/, "ws")}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: AUTH.qr(tenant.keys.qr),
      retryAttempts: 0,
      lazy: false,
    });
    const closes: number[] = [];
    client.on("closed", (e) => void closes.push((e as { code: number }).code));
    const first = await new Promise<unknown>((resolve) =>
      client.subscribe(
        { query: "subscription { transactionUpdates { id } " },
        { next: resolve, error: resolve, complete: () => resolve("complete") },
      ),
    );
    expect(JSON.stringify(first)).toContain(`"code":"BAD_USER_INPUT"`);
    const viewer = await new Promise<unknown>((resolve) =>
      client.subscribe({ query: "{ viewer { type } }" }, { next: resolve, error: resolve, complete: () => undefined }),
    );
    expect(viewer).toEqual({ data: { viewer: { type: "key" } } });
    expect(closes).toEqual([]);
    await client.dispose();
  });

  it("over graphql-ws, a frame over 64 KiB closes the socket with 1009, like a body over 64 KiB", async () => {
    const ws = new WebSocket(`${t.url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
    const code = await new Promise<number>((resolve) => {
      ws.on("open", () => ws.send(JSON.stringify({ type: "connection_init", payload: { pad: "p".repeat(70_000) } })));
      ws.on("close", (c) => resolve(c));
      ws.on("error", () => undefined);
    });
    expect(code).toBe(1009);
  });

  it("over graphql-ws, a deeply nested document is refused with BAD_USER_INPUT too", async () => {
    // 2 000 levels: deep enough to be refused, small enough (≈ 44 KB) to fit the 64 KiB frame cap.
    const query = `subscription { ${"... on Subscription { ".repeat(2000)}transactionUpdates { id }${" }".repeat(2000)} }`;
    const { sub } = subscribe(t.url, AUTH.qr(tenant.keys.qr), query);
    await sub.done;
    expect(JSON.stringify(sub.error)).toContain("BAD_USER_INPUT");
    expect(sub.events).toEqual([]);
  });
});
