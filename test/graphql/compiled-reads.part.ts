import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";

// The direct door runs list reads compiled (graphql-jit, src/graphql/compiled.ts). A client must not be able to tell:
// each answer here, status and body byte for byte, is the one Apollo Server gives for the same request through
// graphql-js (an Accept header the direct door leaves to Apollo). Errors, variables that do not coerce, fragments,
// aliases, directives, custom scalars (exact money, dates, meta as sent) and several operations in one document.

/** The load bench's page (bench/graphql-rest.ts), the reference of issue 39. */
const PAGE_SMALL = `query { transactions(first: 20) { edges { cursor node { id status amount currency md5 createdAt } }
  pageInfo { hasNextPage endCursor } } }`;
/** Every field of a Transaction with its nested lists (8 rows: within the operation cost budget). */
const PAGE_EVERYTHING = `query { transactions(first: 8) { edges { cursor node { id area status amount currency merchantId
  apiKeyId qr latePayment failureReason meta metaJson expiredAt createdAt updatedAt completedAt md5 orderId merchantName
  mismatch { fields late resolution { action by at note } } events { id type createdAt meta transaction { transactionId
  area status amount currency payment late expiredAt createdAt updatedAt completedAt } }
  webhookDeliveries(first: 2) { id state attempts } } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
const FRAGMENTS = `query Page($first: Int!, $after: String, $withMeta: Boolean!) {
  page: transactions(first: $first, after: $after) { __typename
    edges { cursor node { ...Row sum: amount meta @include(if: $withMeta) metaJson @skip(if: $withMeta) } }
    pageInfo { ...Info } } }
query Other { transactions(first: 3) { edges { node { id } } } }
fragment Row on Transaction { __typename id status createdAt expiredAt ... on Transaction { currency amount } }
fragment Info on PageInfo { hasNextPage endCursor startCursor }`;

describe("compiled list reads answer as graphql-js does", () => {
  let t: TestApp;
  let a: Tenant;

  /** The answer of one request: by the direct door (Accept: application/json) or by Apollo (another Accept). */
  const send = async (door: "direct" | "apollo", body: unknown) => {
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: door === "direct" ? "application/json" : "application/json, text/plain;q=0.5",
        ...AUTH.qr(a.keys.qr),
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.text() };
  };

  /** Apollo's answer (its validation makes the text known), then the direct door's twice (compiled from the first). */
  const same = async (body: unknown) => {
    const apollo = await send("apollo", body);
    const first = await send("direct", body);
    const again = await send("direct", body);
    expect(first).toEqual(apollo);
    expect(again).toEqual(apollo);
    return JSON.parse(apollo.body) as { data?: Record<string, unknown>; errors?: { message: string }[] };
  };

  beforeAll(async () => {
    t = await startTestApp();
    a = await createTenant(t);
    // Meta as sent (key order, number text) and amounts with their currency's decimals.
    const bodies = [
      `{"amount":1.5,"currency":840,"expiredAfter":600000,"meta":{"b":1,"a":1.50,"10":"x","n":12345678901234567890}}`,
      `{"amount":4000,"currency":116,"expiredAfter":600000,"meta":{"order":"A-1"}}`,
    ];
    for (let i = 0; i < 24; i++) {
      const r = await post(`${t.url}/qr/generate`, bodies[i % 2], AUTH.qr(a.keys.qr));
      expect(r.status).toBe(200);
    }
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
  });

  it("the load bench's page and a page of every field", async () => {
    const small = await same({ query: PAGE_SMALL });
    expect((small.data?.transactions as { edges: unknown[] }).edges).toHaveLength(20);
    const every = await same({ query: PAGE_EVERYTHING });
    expect(every.errors).toBeUndefined();
    const text = JSON.stringify(every);
    expect(text).toContain(`"amount":"1.50"`);
    expect(text).toContain(`"amount":"4000"`);
    // meta leaves as it arrived (stringifyExact): the raw text, not JSON.stringify of the parsed object.
    expect((await send("direct", { query: PAGE_EVERYTHING })).body).toContain(
      `{"b":1,"a":1.50,"10":"x","n":12345678901234567890}`,
    );
  });

  it("variables, fragments, aliases, directives, __typename and a chosen operation", async () => {
    const first = await same({ query: FRAGMENTS, operationName: "Page", variables: { first: 5, withMeta: true } });
    const page = first.data?.page as { edges: { node: Record<string, unknown> }[]; pageInfo: { endCursor: string } };
    expect(page.edges).toHaveLength(5);
    expect(page.edges[0].node.__typename).toBe("Transaction");
    await same({
      query: FRAGMENTS,
      operationName: "Page",
      variables: { first: 7, after: page.pageInfo.endCursor, withMeta: false },
    });
    await same({ query: FRAGMENTS, operationName: "Other" });
  });

  it("errors, refused variables and unknown operations are answered as before", async () => {
    // A cursor the API did not return: the resolver refuses it (the compiled run meets the error: graphql-js answers).
    const bad = await same({
      query: FRAGMENTS,
      operationName: "Page",
      variables: { first: 2, after: "x", withMeta: true },
    });
    expect(bad.errors?.[0].message).toBe("Invalid cursor");
    // A page size out of range, again and again (a compiled operation that keeps failing is left to graphql-js).
    for (let i = 0; i < 4; i++)
      await same({ query: FRAGMENTS, operationName: "Page", variables: { first: 0, withMeta: true } });
    // It still answers the same when it succeeds again.
    await same({ query: FRAGMENTS, operationName: "Page", variables: { first: 2, withMeta: true } });
    // Variables that do not coerce, a missing one, and an operation that is not in the document.
    await same({ query: FRAGMENTS, operationName: "Page", variables: { first: "two", withMeta: true } });
    await same({ query: FRAGMENTS, operationName: "Page", variables: { withMeta: true } });
    await same({ query: FRAGMENTS, operationName: "Nope" });
    await same({ query: FRAGMENTS });
  });
});
