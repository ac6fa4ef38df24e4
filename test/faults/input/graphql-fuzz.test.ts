// Issue 8 "Bad input" on /graphql: generated documents (schema walks with wrong arguments and variable
// types, aliases by the thousand, deep nesting, fragment cycles and doubling chains, batched bodies,
// huge variables, broken transports) with API keys, a clientToken, no credentials and the admin token,
// plus introspection against a production-mode instance. Every answer: no 5xx, the GraphQL response
// shape with documented codes only (never INTERNAL), depth ≤ 12 and ≤ 500 fields enforced exactly,
// admin operations unreachable without the admin token, and a key sees only its own rows.
//
// Replay: FUZZ_SEED=<printed seed>; FUZZ_GQL_RUNS scales the counts; the failure message names the path.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import fc from "fast-check";
import { startService, healthy, type FuzzService } from "../../support/service.js";
import { Client, pool, type Answer, type OutRequest } from "../../support/http.js";
import { runSession } from "../../support/ws-session.js";
import { checkErrorBody, checkGraphQLResponse } from "../../support/contract.js";
import {
  FAMILIES,
  adminKeysAtRoot,
  build,
  lexNesting,
  measureDoc,
  tryParse,
  usesIntrospection,
  type Family,
} from "../../support/gql-docs.js";
import { ADMIN_TOKEN } from "../../support/service.js";
import type { Tenant } from "../../support/app.js";

const RUNS = Number(process.env.FUZZ_GQL_RUNS ?? 4000);
const BATCH = 100;
const WIDTH = 12;
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const SLOW_MS = 10_000;

type Cred = "qr" | "gateway" | "gatewayLink" | "client" | "garbageBearer" | "none" | "admin" | "keyAndAdmin";
type Transport =
  | "post"
  | "post"
  | "get"
  | "getNoCsrf"
  | "batch"
  | "invalidJson"
  | "huge"
  | "textPlain"
  | "form"
  | "apq"
  | "noQuery"
  | "weirdVariables"
  | "operationName";

interface GqlCase {
  cred: Cred;
  family: Family;
  seed: number;
  size: number;
  transport: Transport;
}

const caseArb = (creds: Cred[], transports: fc.Arbitrary<Transport>) =>
  fc.record({
    cred: fc.constantFrom(...creds),
    family: fc.constantFrom(...FAMILIES, "walk", "walk", "walk", "walk"),
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    size: fc.integer({ min: 0, max: 100 }),
    transport: transports,
  });
const mostlyPost = fc.oneof(
  { weight: 20, arbitrary: fc.constant<Transport>("post") },
  { weight: 1, arbitrary: fc.constantFrom<Transport>("get", "weirdVariables", "operationName") },
);
const transportNoise = fc.constantFrom<Transport>(
  "post",
  "get",
  "getNoCsrf",
  "batch",
  "invalidJson",
  "huge",
  "textPlain",
  "form",
  "apq",
  "noQuery",
  "weirdVariables",
  "operationName",
);

interface Who {
  tenant: Tenant;
  clientToken: string;
}

function headersFor(cred: Cred, who: Who): Record<string, string> {
  const k = who.tenant.keys;
  switch (cred) {
    case "qr":
      return { "x-api-key": k.qr, "x-auth-type": "api-key" };
    case "gateway":
      return { "x-api-key": k.gateway, "x-auth-type": "api-gateway" };
    case "gatewayLink":
      return { "x-api-key": k.gatewayLink, "x-auth-type": "api-gateway-link" };
    case "client":
      return { authorization: `Bearer ${who.clientToken}` };
    case "garbageBearer":
      return { authorization: "Bearer not-a-token" };
    case "none":
      return {};
    case "admin":
      return { authorization: `Bearer ${ADMIN_TOKEN}` };
    case "keyAndAdmin":
      return { "x-api-key": k.qr, "x-auth-type": "api-key", authorization: `Bearer ${ADMIN_TOKEN}` };
  }
}

function request(c: GqlCase, who: Who): { req: OutRequest; query: string | null; operationName?: string } {
  const { query, variables } = build(c.family, c.seed, c.size);
  const headers: Record<string, string> = { "content-type": "application/json", ...headersFor(c.cred, who) };
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  const post = (body: Buffer, extra: Record<string, string> = {}) => ({
    method: "POST",
    path: "/graphql",
    headers: { ...headers, ...extra },
    body,
  });
  switch (c.transport) {
    case "post":
      return { req: post(json({ query, variables })), query };
    case "get":
    case "getNoCsrf": {
      const qs = `query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify(variables))}`;
      // Node's header block (request line included) is capped at 16 KiB: longer documents go by POST.
      if (qs.length > 12_000) return { req: post(json({ query, variables })), query };
      const h: Record<string, string> = { ...headersFor(c.cred, who) };
      if (c.transport === "get") h["apollo-require-preflight"] = "true";
      // A GET may only run queries; the oracle below knows mutations are refused over GET.
      return {
        req: { method: "GET", path: `/graphql?${qs}`, headers: h },
        query: c.transport === "get" ? query : null,
      };
    }
    case "batch":
      return { req: post(json([{ query, variables }, { query: "{ __typename }" }])), query: null };
    case "invalidJson":
      return { req: post(Buffer.from(JSON.stringify({ query, variables }).slice(0, -1 - (c.size % 5)))), query: null };
    case "huge":
      return {
        req: post(json({ query, variables: { ...variables, pad: "p".repeat(70_000 + c.size * 1000) } })),
        query: null,
      };
    case "textPlain":
      return { req: post(json({ query, variables }), { "content-type": "text/plain" }), query: null };
    case "form":
      return {
        req: post(Buffer.from(`query=${encodeURIComponent(query)}`), {
          "content-type": "application/x-www-form-urlencoded",
        }),
        query: null,
      };
    case "apq":
      return {
        req: post(
          json(
            c.size % 2
              ? { extensions: { persistedQuery: { version: 1, sha256Hash: "0".repeat(64) } } }
              : { query, extensions: { persistedQuery: { version: 1, sha256Hash: "f".repeat(64) } } },
          ),
        ),
        query: null,
      };
    case "noQuery":
      return {
        req: post(json([{}, { query: 5 }, { query: null }, { variables: {} }, { query: "" }][c.size % 5])),
        query: null,
      };
    case "weirdVariables":
      return {
        req: post(
          json({
            query,
            variables: [[1], "vars", 5, true, { deep: JSON.parse("[".repeat(4000) + "]".repeat(4000)) }][c.size % 5],
          }),
        ),
        query: null,
      };
    case "operationName":
      return {
        req: post(json({ query, variables, operationName: ["Nope", "", "A", "B", null][c.size % 5] })),
        query,
        operationName: ["Nope", "", "A", "B", undefined][c.size % 5] ?? undefined,
      };
  }
}

interface Judged {
  problem: string | null;
}

/** Every check on one answer. */
function judge(
  c: GqlCase,
  query: string | null,
  operationName: string | undefined,
  a: Answer,
  who: Who,
  production: boolean,
): Judged {
  const fail = (problem: string) => ({ problem });
  if (a.status === 0) return fail("no answer");
  if (a.status >= 500) return fail(`HTTP ${a.status}`);
  if (a.ms > SLOW_MS) return fail(`took ${a.ms.toFixed(0)} ms`);
  if (!/^application\/(graphql-response\+)?json/.test(String(a.headers["content-type"] ?? "")))
    return fail(`content-type ${a.headers["content-type"]}`);
  // Refused by Node's HTTP parser before any route is known (a request line over 16 KiB): the one error body every path gets.
  if (a.status === 431) return { problem: checkErrorBody(a.status, a.json) };
  const shape = checkGraphQLResponse(a.status, a.json);
  if (shape) return fail(shape);
  const body = a.json as {
    data?: Record<string, unknown> | null;
    errors?: { message: string; extensions: { code: string } }[];
  };
  // Refused before the document was read (413: over 64 KiB): nothing below applies.
  if (query === null || a.status === 413) return { problem: null };
  const ran = body.data !== undefined && body.data !== null;
  // Documents nested over 100 levels ({ [ ( as lexed) are refused before parsing; others never for that.
  const nesting = lexNesting(query);
  const nestError = (body.errors ?? []).some((e) => /document is nested \d+ levels/.test(e.message));
  if (nesting !== null && nesting > 100)
    return ran || !nestError ? fail(`nested ${nesting} deep but not refused for it`) : { problem: null };
  if (nestError) return fail(`nested ${nesting} deep (≤ 100) but refused for it`);
  const doc = tryParse(query);
  if (doc === null) return { problem: null };
  // Limits (docs/decisions/0012-graphql-limits.md): depth ≤ 12, ≤ 500 fields per operation, measured here
  // independently.
  const sizes = measureDoc(doc);
  const over = sizes.some((s) => s.depth > 12 || s.fields > 500);
  const limitError = (body.errors ?? []).some((e) =>
    /Query is nested \d+ levels deep|selects more than \d+ fields/.test(e.message),
  );
  if (over && (ran || !limitError)) return fail(`over the limits (${JSON.stringify(sizes)}) but not refused for it`);
  if (!over && limitError) return fail(`within the limits (${JSON.stringify(sizes)}) but refused for them`);
  // Introspection is off in production, even for the admin token.
  if (production && usesIntrospection(doc) && ran) return fail("introspection answered in production");
  // Admin operations: never data for anything but the admin token (which wins when a key is sent beside it).
  if (c.cred !== "admin" && c.cred !== "keyAndAdmin" && ran) {
    for (const key of adminKeysAtRoot(doc, operationName)) {
      if (body.data?.[key] !== null && body.data?.[key] !== undefined)
        return fail(`admin field ${key} answered for ${c.cred}`);
      if (!(body.errors ?? []).some((e) => e.extensions.code === "UNAUTHENTICATED"))
        return fail(`admin field ${key} refused without UNAUTHENTICATED`);
    }
  }
  // A key sees its own rows only.
  if (["qr", "gateway", "gatewayLink"].includes(c.cred) && ran) {
    const keyId = who.tenant.keyIds[c.cred as "qr"];
    const stack: unknown[] = [body.data];
    while (stack.length) {
      const v = stack.pop();
      if (Array.isArray(v)) stack.push(...v);
      else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          if (k === "apiKeyId" && x !== keyId) return fail(`saw apiKeyId ${String(x)} as ${c.cred}`);
          if (k === "merchantId" && x !== who.tenant.merchantId)
            return fail(`saw merchantId ${String(x)} as ${c.cred}`);
          stack.push(x);
        }
      }
    }
  }
  return { problem: null };
}

function describeCase(c: GqlCase, req: OutRequest, a: Answer): string {
  const body = req.body ? req.body.toString("utf8") : "";
  return `${JSON.stringify(c)}\n  → ${req.method} ${req.path.slice(0, 300)} ${body.length > 1200 ? `${body.slice(0, 1200)}… (${body.length} bytes)` : body}\n  ← ${a.status} ${a.text.slice(0, 800)}`;
}

describe(`GraphQL fuzz (seed ${SEED})`, () => {
  let svc: FuzzService;
  let prod: FuzzService;
  let client: Client;
  let who: Who;
  let other: Tenant;
  const stats: Record<string, { n: number; ms: number; maxMs: number; statuses: Record<number, number> }> = {};
  const adminTables = [
    "merchant",
    "gateway_config",
    "link_config",
    "api_key",
    "webhook_endpoint",
    "webhook_delivery",
    "idempotency_key",
  ];
  const counts = async (s: FuzzService) =>
    Object.fromEntries(
      await Promise.all(
        adminTables.map(async (t) => [t, (await s.sql<{ n: string }>(`select count(*)::text as n from ${t}`))[0].n]),
      ),
    );

  beforeAll(async () => {
    console.log(`GraphQL fuzz seed ${SEED} — replay with FUZZ_SEED=${SEED}`);
    svc = await startService();
    // Production mode: simulators off, upstream URLs that are never called by these documents.
    prod = await startService({
      NODE_ENV: "production",
      SECRET_KEY: "prod-secret-key-Hq4Zt8Wn2Xc6Lv9Rb3Mj7Pk5Ds1F", // production's rule refuses the tests' usual one
      SIMULATORS: "false",
      NETWORK_API_URL: "http://127.0.0.1:9/network",
      GATEWAY_API_URL: "http://127.0.0.1:9/gateway",
    });
    client = new Client(svc.url, WIDTH);
    const tenant = await svc.createTenant({ name: "GQL A" });
    other = await svc.createTenant({ name: "GQL B" });
    const gen = async (t: Tenant) => {
      const res = await client.send({
        method: "POST",
        path: "/qr/generate",
        headers: { "content-type": "application/json", "x-api-key": t.keys.qr, "x-auth-type": "api-key" },
        body: Buffer.from(
          JSON.stringify({ amount: 2, currency: 840, expiredAfter: 3_600_000, meta: { who: t.merchantId } }),
        ),
      });
      return res.json as { transactionId: string; clientToken: string };
    };
    const mine = await gen(tenant);
    for (let i = 0; i < 3; i++) await gen(other);
    who = { tenant, clientToken: mine.clientToken };
  }, 120_000);

  afterAll(async () => {
    client?.close();
    const rows = Object.entries(stats).map(
      ([k, s]) =>
        `${k.padEnd(34)} ${String(s.n).padStart(6)} req ${(s.ms / 1000).toFixed(1).padStart(6)} s  max ${s.maxMs.toFixed(0)} ms  ${JSON.stringify(s.statuses)}`,
    );
    if (rows.length) console.log(`GraphQL fuzz (seed ${SEED})\n${rows.join("\n")}`);
    await svc?.stop();
    await prod?.stop();
  });

  const run = async (
    name: string,
    target: () => FuzzService,
    creds: Cred[],
    transports: fc.Arbitrary<Transport>,
    runs: number,
    seedOffset: number,
    production = false,
    afterBatch?: () => Promise<string | null>,
  ) => {
    const s: (typeof stats)[string] = (stats[name] = { n: 0, ms: 0, maxMs: 0, statuses: {} });
    const started = performance.now();
    const c = target() === svc ? client : new Client(target().url, WIDTH);
    await fc.assert(
      fc.asyncProperty(fc.array(caseArb(creds, transports), { minLength: BATCH, maxLength: BATCH }), async (cases) => {
        const answers = await pool(cases, WIDTH, async (gc) => {
          const { req, query, operationName } = request(gc, who);
          const a = await c.send(req).catch(
            (err: Error) =>
              ({
                status: 0,
                headers: {},
                rawHeaderNames: [],
                text: `client error: ${err.message}`,
                json: undefined,
                ms: 0,
              }) as Answer,
          );
          return { gc, req, query, operationName, a };
        });
        for (const { gc, req, query, operationName, a } of answers) {
          s.n++;
          s.maxMs = Math.max(s.maxMs, a.ms);
          s.statuses[a.status] = (s.statuses[a.status] ?? 0) + 1;
          const { problem } = judge(gc, query, operationName, a, who, production);
          if (problem) throw new Error(`${problem}\n${describeCase(gc, req, a)}`);
        }
        const after = await afterBatch?.();
        if (after) throw new Error(after);
        if (target().exit !== null) throw new Error(`the service exited: ${JSON.stringify(target().exit)}`);
      }),
      {
        seed: SEED + seedOffset,
        numRuns: Math.ceil(runs / BATCH),
        endOnFailure: true,
        path: process.env.FUZZ_PATH,
        reporter: (r) => {
          if (r.failed)
            throw new Error(
              `FUZZ_SEED=${SEED} (${name}) path ${r.counterexamplePath}: ${r.errorInstance instanceof Error ? r.errorInstance.message : String(r.errorInstance)}`,
            );
        },
      },
    );
    if (c !== client) c.close();
    s.ms = performance.now() - started;
    expect(await healthy(target())).toBe(true);
  };

  it(`${RUNS} documents with API keys, a clientToken and no credentials: documented errors only, limits exact, no admin reach, nothing written to admin tables`, async () => {
    const before = await counts(svc);
    await run(
      "keys / client token / anonymous",
      () => svc,
      ["qr", "gateway", "gatewayLink", "client", "garbageBearer", "none"],
      mostlyPost,
      RUNS,
      0,
      false,
      async () => {
        const now = await counts(svc);
        // Generates by a key may add idempotency rows only with an Idempotency-Key header, which these requests never send.
        return JSON.stringify(now) === JSON.stringify(before)
          ? null
          : `admin-owned tables changed under non-admin credentials: ${JSON.stringify(before)} → ${JSON.stringify(now)}`;
      },
    );
  });

  it(`${Math.ceil(RUNS / 2)} documents with the admin token (and the admin token beside a key)`, async () => {
    await run("admin token", () => svc, ["admin", "keyAndAdmin"], mostlyPost, Math.ceil(RUNS / 2), 1);
  });

  it(`${Math.ceil(RUNS / 4)} broken transports: batches, GET with and without the CSRF header, invalid JSON, > 64 KiB, form bodies, persisted-query hashes`, async () => {
    await run("transports", () => svc, ["qr", "admin", "none", "client"], transportNoise, Math.ceil(RUNS / 4), 2);
  });

  it(`production mode: introspection refused for every credential (${Math.ceil(RUNS / 4)} documents)`, async () => {
    const direct = [
      "{ __schema { types { name } } }",
      '{ __type(name: "Query") { name } }',
      "query { a: __schema { queryType { name } } }",
      "query { ...F } fragment F on Query { __schema { queryType { name } } }",
      '{ ... on Query { __type(name: "Transaction") { fields { name } } } }',
    ];
    for (const query of direct) {
      for (const headers of [{}, { authorization: `Bearer ${ADMIN_TOKEN}` }] as Record<string, string>[]) {
        const a = await new Client(prod.url, 1).send({
          method: "POST",
          path: "/graphql",
          headers: { "content-type": "application/json", ...headers },
          body: Buffer.from(JSON.stringify({ query })),
        });
        expect(a.status).toBe(400);
        expect(checkGraphQLResponse(a.status, a.json)).toBeNull();
        expect((a.json as { data?: unknown }).data).toBeUndefined();
      }
    }
    // __typename is not introspection and still answers.
    const t = await new Client(prod.url, 1).send({
      method: "POST",
      path: "/graphql",
      headers: { "content-type": "application/json" },
      body: Buffer.from(JSON.stringify({ query: "{ __typename }" })),
    });
    expect(t.json).toEqual({ data: { __typename: "Query" } });
    await run(
      "production instance",
      () => prod,
      ["admin", "none", "garbageBearer"],
      mostlyPost,
      Math.ceil(RUNS / 4),
      3,
      true,
    );
  });

  it(`graphql-ws: ${Math.ceil(RUNS / 10)} sessions of generated frames (credentials, documents, garbage, oversized frames): documented codes only, no 4500, no crash`, async () => {
    const started = performance.now();
    const s: (typeof stats)[string] = (stats["graphql-ws sessions"] = { n: 0, ms: 0, maxMs: 0, statuses: {} });
    const params = fc.constantFrom<Record<string, unknown>>(
      headersFor("qr", who),
      headersFor("gateway", who),
      headersFor("admin", who),
      { clientToken: who.clientToken },
      { authorization: "Bearer nope" },
      {},
      { apiKey: who.tenant.keys.qr, authType: "api-key" },
      { "x-api-key": who.tenant.keys.qr, "x-auth-type": "api-gateway" },
      { "x-api-key": ["x"], nested: { deep: true } },
    );
    const subDoc = fc
      .record({
        id: fc.constantFrom("txn_doesnotexist000", "", "\u0000", "x".repeat(300)),
        field: fc.constantFrom("transactionUpdated", "transactionUpdates"),
        last: fc.option(fc.constantFrom("evt_nope", "", "\ud800"), { nil: undefined }),
      })
      .map(({ id, field, last }) =>
        field === "transactionUpdated"
          ? `subscription { transactionUpdated(transactionId: "${id}"${last !== undefined ? `, lastEventId: "${last}"` : ""}) { id type transaction { transactionId status } } }`
          : `subscription { transactionUpdates(status: SUCCESS${last !== undefined ? `, lastEventId: "${last}"` : ""}) { id } }`,
      );
    const doc = fc.oneof(
      subDoc,
      caseArb(["qr"], fc.constant<Transport>("post")).map((c) => build(c.family, c.seed, c.size).query),
    );
    const frame = fc.oneof(
      {
        weight: 6,
        arbitrary: fc
          .tuple(
            fc.constantFrom("1", "2", "a", "1"),
            doc,
            fc.option(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 })), { nil: undefined }),
          )
          .map(([id, query, variables]) => JSON.stringify({ id, type: "subscribe", payload: { query, variables } })),
      },
      { weight: 2, arbitrary: params.map((payload) => JSON.stringify({ type: "connection_init", payload })) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          JSON.stringify({ type: "ping" }),
          JSON.stringify({ type: "pong", payload: [1] }),
          JSON.stringify({ id: "1", type: "complete" }),
          JSON.stringify({ type: "nope" }),
          "{",
          "null",
          "[]",
          JSON.stringify({ type: "subscribe" }),
          JSON.stringify({ id: 5, type: "subscribe", payload: { query: 5 } }),
        ),
      },
      { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 50 }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(200_000, 2_000_000).map((n) =>
          JSON.stringify({
            id: "big",
            type: "subscribe",
            payload: { query: "subscription { transactionUpdates { id } }", variables: { pad: "p".repeat(n) } },
          }),
        ),
      },
    );
    const session = fc
      .tuple(fc.boolean(), params, fc.array(frame, { minLength: 1, maxLength: 6 }))
      .map(([init, p, frames]) =>
        init ? [JSON.stringify({ type: "connection_init", payload: p }), ...frames] : frames,
      );
    const allowedClose = new Set([1000, 1005, 1006, 1009, 4400, 4401, 4403, 4408, 4409, 4429]);
    await fc.assert(
      fc.asyncProperty(fc.array(session, { minLength: 20, maxLength: 20 }), async (sessions) => {
        const outcomes = await pool(sessions, 6, (frames) => runSession(svc.url, frames));
        for (const [i, o] of outcomes.entries()) {
          s.n++;
          s.statuses[o.closeCode ?? 0] = (s.statuses[o.closeCode ?? 0] ?? 0) + 1;
          const where = `frames ${JSON.stringify(sessions[i].map((f) => f.slice(0, 300)))}\n  got ${JSON.stringify(o).slice(0, 1500)}`;
          if (o.closeCode !== null && !allowedClose.has(o.closeCode))
            throw new Error(`closed with ${o.closeCode} ${o.closeReason}\n  ${where}`);
          for (const m of o.messages as { type?: string; payload?: unknown }[]) {
            const errors =
              m.type === "error"
                ? (m.payload as unknown[])
                : m.type === "next"
                  ? ((m.payload as { errors?: unknown[] }).errors ?? [])
                  : [];
            if (errors.length === 0) continue;
            const problem = checkGraphQLResponse(200, { errors });
            if (problem) throw new Error(`${problem}\n  ${where}`);
          }
        }
        if (svc.exit !== null) throw new Error(`the service exited: ${JSON.stringify(svc.exit)}`);
      }),
      {
        seed: SEED + 4,
        numRuns: Math.ceil(RUNS / 10 / 20),
        endOnFailure: true,
        path: process.env.FUZZ_PATH,
        reporter: (r) => {
          if (r.failed)
            throw new Error(
              `FUZZ_SEED=${SEED} (graphql-ws) path ${r.counterexamplePath}: ${r.errorInstance instanceof Error ? r.errorInstance.message : String(r.errorInstance)}`,
            );
        },
      },
    );
    s.ms = performance.now() - started;
    expect(await healthy(svc)).toBe(true);
  });

  it("the service is still up, logged no errors, and the other tenant's rows never showed", async () => {
    expect(svc.exit).toBeNull();
    expect(await healthy(svc)).toBe(true);
    expect(svc.errorLines().map((l) => l.slice(0, 2000))).toEqual([]);
    expect(prod.errorLines().map((l) => l.slice(0, 2000))).toEqual([]);
  });
});
