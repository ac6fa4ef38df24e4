import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";

interface Node {
  id: string;
  area: string;
  status: string;
  orderId: string | null;
  md5: string | null;
  apiKeyId: string;
  createdAt: string;
}
interface Conn {
  edges: { cursor: string; node: Node }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}
interface Gql<T> {
  data?: T;
  errors?: { message: string; extensions: { code: string } }[];
}

const PAGE = `query($first: Int!, $after: String, $filter: TransactionFilter) {
  transactions(first: $first, after: $after, filter: $filter) { edges { cursor node { id area status orderId md5 apiKeyId createdAt } } pageInfo { hasNextPage endCursor } } }`;

describe("transactions connection (GraphQL)", () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const mine: Record<string, string[]> = { a: [], b: [] };
  const gql = async <T>(query: string, variables: Record<string, unknown>, headers: Record<string, string>) =>
    (await post(`${t.url}/graphql`, { query, variables }, headers)).body as Gql<T>;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const page = (headers: Record<string, string>, variables: Record<string, unknown>) =>
    gql<{ transactions: Conn }>(PAGE, variables, headers);
  /** Every page until the end, `first` at a time. */
  const all = async (headers: Record<string, string>, first: number, filter?: Record<string, unknown>) => {
    const ids: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 100; i++) {
      const res = await page(headers, { first, after, filter });
      expect(res.errors).toBeUndefined();
      const c = res.data!.transactions;
      ids.push(...c.edges.map((e) => e.node.id));
      if (!c.pageInfo.hasNextPage) return ids;
      after = c.pageInfo.endCursor;
    }
    throw new Error("too many pages");
  };
  const qr = async (key: string, amount = 1) =>
    (await post(`${t.url}/qr/generate`, { amount, currency: 840, expiredAfter: 60_000 }, AUTH.qr(key))).body as {
      transactionId: string;
      data: { md5: string };
      clientToken: string;
    };
  const gw = async (key: string, orderId: string) =>
    (await post(`${t.url}/gateway/generate-qr`, { qrData: { orderId, amount: 1, currency: "USD" } }, AUTH.gateway(key)))
      .body as { transactionId: string };

  beforeAll(async () => {
    t = await startTestApp();
    a = await createTenant(t, { gatewayMerchantId: "tq_gw_a", gatewaySecret: "tq-secret-a-0123456789" });
    b = await createTenant(t, { name: "Other", gatewayMerchantId: "tq_gw_b", gatewaySecret: "tq-secret-b-0123456789" });
    await post(`${t.url}/sim/gateway/merchants`, { merchantId: "tq_gw_a", apiKey: "tq-secret-a-0123456789" });
    // Several per millisecond (id breaks the tie) and a few spread out in time.
    for (let i = 0; i < 7; i++) mine.a.push((await qr(a.keys.qr, i + 1)).transactionId);
    for (let i = 0; i < 4; i++) mine.b.push((await qr(b.keys.qr)).transactionId);
    mine.a.push(
      (await gw(a.keys.gateway, "ORD-ALPHA-1")).transactionId,
      (await gw(a.keys.gateway, "ORD-ALPHA-2")).transactionId,
    );
  });
  afterAll(async () => t?.stop());

  it("pages through everything in (createdAt desc, id desc) order with no duplicates, even when rows arrive mid-way (admin sees all merchants)", async () => {
    const expected = (
      await t.app.core.db.query<{ id: string }>(`select id from "transaction" order by created_at desc, id desc`)
    ).map((r) => r.id);
    const first = await page(admin, { first: 4 });
    const after = first.data!.transactions.pageInfo.endCursor;
    await qr(a.keys.qr); // newer than every page boundary: must not shift the following pages
    const rest: string[] = [];
    let cursor = after;
    for (;;) {
      const p = (await page(admin, { first: 4, after: cursor })).data!.transactions;
      rest.push(...p.edges.map((e) => e.node.id));
      if (!p.pageInfo.hasNextPage) break;
      cursor = p.pageInfo.endCursor;
    }
    const seen = [...first.data!.transactions.edges.map((e) => e.node.id), ...rest];
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining([...mine.a, ...mine.b]));
    // Page size does not change the order.
    expect((await all(admin, 100)).slice(1)).toEqual(expected);
  });

  it("scopes an API key to its own transactions: another key's never appear, nor by id", async () => {
    const seenByB = await all(AUTH.qr(b.keys.qr), 2);
    expect(seenByB.sort()).toEqual([...mine.b].sort());
    const seenByAQr = await all(AUTH.qr(a.keys.qr), 3);
    expect(seenByAQr.some((id) => mine.b.includes(id))).toBe(false);
    expect(seenByAQr.some((id) => mine.a.slice(-2).includes(id))).toBe(false); // a's gateway key made those
    const byGatewayKey = await all(AUTH.gateway(a.keys.gateway), 10);
    expect(byGatewayKey.sort()).toEqual(mine.a.slice(-2).sort());
    const stolen = await gql<{ transaction: unknown }>(
      `query($id: ID!) { transaction(id: $id) { id } }`,
      { id: mine.a[0] },
      AUTH.qr(b.keys.qr),
    );
    expect(stolen.data!.transaction).toBeNull();
  });

  it("filters by area, status, creation time and search (orderId/md5/transactionId, exact or prefix)", async () => {
    const ids = async (filter: Record<string, unknown>) => all(admin, 50, filter);
    expect((await ids({ area: "gateway" })).sort()).toEqual(mine.a.slice(-2).sort());
    await t.app.core.store.transition({ id: mine.b[1], to: "SUCCESS", event: "payment.completed" });
    expect(await ids({ status: "SUCCESS" })).toEqual([mine.b[1]]);
    expect(await ids({ search: "ORD-ALPHA" })).toHaveLength(2);
    expect(await ids({ search: "ORD-ALPHA-2" })).toEqual([mine.a.at(-1)]);
    const [row] = await t.app.core.db.query<{ md5: string }>(
      `select upstream_ref as md5 from "transaction" where id = ?`,
      [mine.a[3]],
    );
    expect(await ids({ search: row.md5 })).toEqual([mine.a[3]]);
    expect(await ids({ search: mine.b[2].slice(0, -3) })).toContain(mine.b[2]);
    expect(await ids({ search: "%" })).toEqual([]); // LIKE wildcards are literal
    const [{ created_at: mid }] = await t.app.core.db.query<{ created_at: string }>(
      `select created_at::text from "transaction" where id = ?`,
      [mine.b[0]],
    );
    const from = new Date(mid.replace(" ", "T").replace(/\+00$/, "Z"));
    const since = await ids({ createdFrom: from.toISOString() });
    const before = await ids({ createdTo: from.toISOString() });
    expect(since).toContain(mine.b[0]);
    expect(before).not.toContain(mine.b[0]);
    expect(before).toContain(mine.a[0]);
    expect(since.length + before.length).toBe((await ids({})).length);
  });

  it("a pending transaction past its expiry is EXPIRED in the list and the filter, without a worker", async () => {
    const fresh = await qr(b.keys.qr);
    // Past the expiry and the generic QR area's grace (10 min by default), a read expires it by itself.
    t.clock.advance(61_000 + 600_000);
    const expired = await all(AUTH.qr(b.keys.qr), 100, { status: "EXPIRED" });
    expect(expired).toContain(fresh.transactionId);
    expect(await all(AUTH.qr(b.keys.qr), 100, { status: "PENDING" })).not.toContain(fresh.transactionId);
    const one = await page(AUTH.qr(b.keys.qr), { first: 1 });
    expect(one.data!.transactions.edges[0].node).toMatchObject({ id: fresh.transactionId, status: "EXPIRED" });
  });

  it("transaction(id) carries its event timeline, webhook deliveries and a QR image; a clientToken sees only its own", async () => {
    const x = await qr(a.keys.qr);
    await t.app.core.store.transition({ id: x.transactionId, to: "SUCCESS", event: "payment.completed" });
    const q = `query($id: ID!) { transaction(id: $id) { id status qrImage events { type transaction { status } } webhookDeliveries { id } } }`;
    const res = await gql<{
      transaction: { status: string; qrImage: string; events: { type: string }[]; webhookDeliveries: unknown[] };
    }>(q, { id: x.transactionId }, admin);
    expect(res.data!.transaction.status).toBe("SUCCESS");
    expect(res.data!.transaction.events.map((e) => e.type)).toEqual(["payment.created", "payment.completed"]);
    expect(res.data!.transaction.qrImage).toMatch(/^data:image\/png;base64,/);
    expect(res.data!.transaction.webhookDeliveries).toEqual([]);
    const client = { authorization: `Bearer ${x.clientToken}` };
    const list = await gql<{ transactions: { edges: { node: { id: string } }[] } }>(
      `{ transactions(first: 10) { edges { node { id status } } } }`,
      {},
      client,
    );
    expect(list.data!.transactions.edges.map((e) => e.node.id)).toEqual([x.transactionId]);
    const view = `query($id: ID!) { transaction(id: $id) { id status qrImage } }`;
    expect((await gql<{ transaction: unknown }>(view, { id: mine.a[0] }, client)).data!.transaction).toBeNull();
    expect(
      (await gql<{ transaction: { status: string } }>(view, { id: x.transactionId }, client)).data!.transaction,
    ).toEqual(expect.objectContaining({ id: x.transactionId, status: "SUCCESS" }));
  });

  it("refuses anonymous callers, first > 100 and foreign cursors", async () => {
    expect((await page({}, { first: 5 })).errors![0].extensions.code).toBe("UNAUTHENTICATED");
    expect((await page({ authorization: "Bearer wrong-token" }, { first: 5 })).errors![0].extensions.code).toBe(
      "UNAUTHENTICATED",
    );
    expect((await page(admin, { first: 101 })).errors![0].extensions.code).toBe("BAD_USER_INPUT");
    expect((await page(admin, { first: 0 })).errors![0].extensions.code).toBe("BAD_USER_INPUT");
    expect((await page(admin, { first: 5, after: "not-a-cursor" })).errors![0].extensions.code).toBe("BAD_USER_INPUT");
  });
});
