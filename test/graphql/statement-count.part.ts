import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { installStatementCounter, marked, statementsOf } from "../support/statement-counter.js";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { startReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";

// What PostgreSQL is asked per request, counted at the `pg` client for the request's own async context (background
// jobs are not counted): a GraphQL read costs what the REST shim's does, and a page of transactions costs a bounded
// number of statements whatever it selects and however many rows it has (docs/decisions/0243, 0244).
installStatementCounter();

/** The shim's own selections (src/qr/qr.routes.ts). */
const GENERATE = `mutation($input: GenerateQrInput!) { generateQr(input: $input) { transactionId expiredAt status
  requestData { amount currency expiredAfter meta } data { qr md5 } clientToken checkoutUrl deeplink } }`;
const CHECK = `query($md5: String!) { qrTransaction(md5: $md5) { transactionId status data { qr md5 } requestData {
  meta amount currency expiredAfter } expiredAt } }`;
/** Every field of a Transaction, nested ones included (qrImage only where one transaction is read). */
const NODE = `id area status amount currency merchantId apiKeyId qr latePayment failureReason meta metaJson expiredAt
  createdAt updatedAt completedAt md5 orderId merchantName
  mismatch { fields expected { amount currency account } arrived { amount } reference source detectedAt late
    resolution { action by at note } }
  events { id type createdAt transaction { transactionId status } }
  webhookDeliveries(first: 2) { id eventId transactionId state attempts log { statusCode } }`;
const PAGE = `query($first: Int!) { transactions(first: $first) { edges { cursor node { ${NODE} } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
const ONE = `query($id: ID!) { transaction(id: $id) { ${NODE} qrImage } }`;

interface Node {
  id: string;
  merchantName: string | null;
  md5: string | null;
  orderId: string | null;
  events: { type: string; transaction: { transactionId: string } }[];
  webhookDeliveries: { transactionId: string; state: string; log: unknown[] }[];
}

/** Bound for a page of transactions whatever it selects: the page, events, merchant names, deliveries, attempts. */
const PAGE_BOUND = 5;

/**
 * The statements of the read itself: without the lookups a cache with a time-to-live saves most requests (the API
 * key's, auth/keys.ts; the merchant's name, a minute; the merchant a QR is issued for, 5 s, read by the ORM as `from
 * "merchant"`), nor the key's `last_used_at`, written at most once a minute — whether one runs depends on the clock,
 * not on the query.
 */
const reads = (statements: string[]) =>
  statements.filter((s) => !/ from "?(api_key|merchant)"? |^update "?api_key"? set last_used_at /.test(s));

describe("PostgreSQL statements per request", () => {
  let t: TestApp;
  let a: Tenant;
  let rx: WebhookReceiver;
  const md5s: string[] = [];
  const ids: string[] = [];
  const report: string[] = [];

  /** Sends one request with a marker; its status, body and the statements it sent. */
  const counted = async (path: string, body: unknown, headers: Record<string, string>) => {
    const m = marked();
    const res = await post(`${t.url}${path}`, body, { ...headers, ...m.headers });
    const statements = [...statementsOf(m.marker)];
    return { status: res.status, body: res.body as Record<string, unknown>, statements };
  };
  const gql = async (query: string, variables: Record<string, unknown>, headers = AUTH.qr(a.keys.qr)) => {
    const r = await counted("/graphql", { query, variables }, headers);
    expect((r.body as { errors?: unknown }).errors).toBeUndefined();
    return { data: (r.body as { data: Record<string, unknown> }).data, statements: r.statements };
  };
  const note = (what: string, statements: string[]) => {
    report.push(`${what}: ${statements.length}\n    ${statements.join("\n    ")}`);
  };

  beforeAll(async () => {
    rx = await startReceiver();
    t = await startTestApp();
    a = await createTenant(t, { webhooks: rx });
    for (let i = 0; i < 22; i++) {
      const r = await post(
        `${t.url}/qr/generate`,
        { amount: 1 + i, currency: 840, expiredAfter: 600_000, meta: { i } },
        AUTH.qr(a.keys.qr),
      );
      const b = r.body as { transactionId: string; data: { md5: string } };
      md5s.push(b.data.md5);
      ids.push(b.transactionId);
    }
    // Every created transaction's event delivered to the key's endpoint: the pages below have deliveries to read.
    await waitFor(() => (rx.deliveries.length >= 22 ? true : null), 20_000);
    // The key's first request looks the key up; the figures below are the steady state.
    await post(`${t.url}/qr/check`, { md5: md5s[0] }, AUTH.qr(a.keys.qr));
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
    await rx?.down();
    if (process.env.STATEMENTS_REPORT === "1") console.log(report.join("\n"));
  });

  it("generateQr sends no more statements than the shim's /qr/generate", async () => {
    const input = { amount: 2.5, currency: 840, expiredAfter: 600_000, meta: { order: "A-1" } };
    // Three of each, alternating, compared by their fewest: a cache's time-to-live can lapse between two requests on
    // a busy machine, whichever door the request came through.
    const [restReads, gqlReads]: [number[], number[]] = [[], []];
    for (let i = 0; i < 3; i++) {
      const rest = await counted("/qr/generate", input, AUTH.qr(a.keys.qr));
      expect(rest.status).toBe(200);
      const g = await gql(GENERATE, { input });
      expect((g.data.generateQr as { status: string }).status).toBe("PENDING");
      if (i === 0) {
        note("REST /qr/generate", rest.statements);
        note("GraphQL generateQr", g.statements);
      }
      restReads.push(reads(rest.statements).length);
      gqlReads.push(reads(g.statements).length);
    }
    expect(Math.min(...gqlReads)).toBeLessThanOrEqual(Math.min(...restReads));
  });

  it("qrTransaction is one statement, as the shim's /qr/check", async () => {
    const rest = await counted("/qr/check", { md5: md5s[3] }, AUTH.qr(a.keys.qr));
    expect(rest.status).toBe(200);
    const g = await gql(CHECK, { md5: md5s[3] });
    note("REST /qr/check", rest.statements);
    note("GraphQL qrTransaction", g.statements);
    expect((g.data.qrTransaction as { transactionId: string }).transactionId).toBe(ids[3]);
    expect(reads(rest.statements)).toHaveLength(1);
    expect(reads(g.statements)).toHaveLength(1);
  });

  it("a page of transactions costs the same bounded number of statements for 1 row and for 20, every field selected", async () => {
    const one = await gql(PAGE, { first: 1 });
    const twenty = await gql(PAGE, { first: 20 });
    note("GraphQL transactions(first: 1), every field", one.statements);
    note("GraphQL transactions(first: 20), every field", twenty.statements);
    const nodes = (twenty.data.transactions as { edges: { node: Node }[] }).edges.map((e) => e.node);
    expect(nodes).toHaveLength(20);
    // Each row's own nested data, as it would have been read row by row.
    for (const n of nodes) {
      expect(n.merchantName).toBe("Test Shop");
      expect(n.md5).toMatch(/^[0-9a-f]{32}$/);
      expect(n.events.length).toBeGreaterThanOrEqual(1);
      expect(n.events[0].type).toBe("payment.created");
      for (const e of n.events) expect(e.transaction.transactionId).toBe(n.id);
      for (const d of n.webhookDeliveries) expect(d.transactionId).toBe(n.id);
    }
    // Every seeded transaction's creation was delivered: those on the page show their delivery.
    const seeded = nodes.filter((n) => ids.includes(n.id));
    expect(seeded.length).toBeGreaterThan(10);
    for (const n of seeded) expect(n.webhookDeliveries.map((d) => d.state)).toContain("delivered");
    expect(reads(twenty.statements).length).toBeLessThanOrEqual(PAGE_BOUND);
    // One statement per kind of row, not one per row: no statement text comes twice, and 20 rows cost what 1 does.
    expect(new Set(twenty.statements).size).toBe(twenty.statements.length);
    expect(reads(twenty.statements).length).toBe(reads(one.statements).length);
  });

  it("the dashboard's table and the load bench's page are one statement", async () => {
    const bench = await gql(
      `query { transactions(first: 20) { edges { cursor node { id status amount currency md5 createdAt } }
        pageInfo { hasNextPage endCursor } } }`,
      {},
    );
    const table = await gql(
      `query { transactions(first: 20) { edges { node { id area status latePayment amount currency md5 orderId
        createdAt updatedAt mismatch { resolution { action } } } } pageInfo { hasNextPage endCursor } } }`,
      {},
    );
    note("GraphQL transactions(first: 20), the load bench's fields", bench.statements);
    note("GraphQL transactions(first: 20), the dashboard table's fields", table.statements);
    expect(reads(bench.statements)).toHaveLength(1);
    expect(reads(table.statements)).toHaveLength(1);
  });

  it("one transaction with every field is bounded too", async () => {
    const g = await gql(ONE, { id: ids[5] });
    note("GraphQL transaction(id), every field", g.statements);
    const n = g.data.transaction as Node & { qrImage: string };
    expect(n.id).toBe(ids[5]);
    expect(n.qrImage).toMatch(/^data:image\/png;base64,/);
    expect(n.webhookDeliveries.map((d) => d.state)).toContain("delivered");
    expect(reads(g.statements).length).toBeLessThanOrEqual(PAGE_BOUND);
  });
});
