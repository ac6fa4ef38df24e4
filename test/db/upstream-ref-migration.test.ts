import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createTestDatabase } from "../support/db.js";
import { ENTITIES, MODULE_MIGRATIONS } from "../../src/app.js";
import { createOrm, migrate, type Orm } from "../../src/db/orm.js";

/**
 * m0011 (areas own their data, decision 0208) on a database holding transactions of the earlier layout: each row's
 * order id, md5 or client id moves into upstream_ref and a receipt into the link's part of `upstream`, nothing is
 * lost, the old columns go, and the areas' own migrations give back the uniqueness the old indexes had.
 */
describe("m0011: the per-area transaction columns move into upstream_ref", () => {
  let orm: Orm;
  let drop: () => Promise<void>;
  const sql = <T = Record<string, unknown>>(q: string, params: unknown[] = []) =>
    orm.em.fork().getConnection().execute<T[]>(q, params);
  const insert = (
    id: string,
    area: string,
    cols: { order?: string; md5?: string; client?: string; receipt?: string },
  ) =>
    sql(
      `insert into "transaction" (id, area, merchant_ref, api_key_ref, status, amount, currency, order_id, md5, client_id,
         receipt_url, upstream, expires_at, created_at, updated_at)
       values (?, ?, 'm1', 'k1', 'SUCCESS', 1, 'USD', ?, ?, ?, ?, '{"approvedAt": "2026-01-01T00:00:00Z"}', now(), now(), now())`,
      [id, area, cols.order ?? null, cols.md5 ?? null, cols.client ?? null, cols.receipt ?? null],
    );

  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    orm = await createOrm(db.url, 2, ENTITIES, MODULE_MIGRATIONS);
    await orm.migrator.up({ to: "m0010-delivery-created-index" });
    await sql(
      `insert into merchant (id, name, account_type, bakong_account_id, merchant_name, merchant_city,
       default_currency, created_at, updated_at) values ('m1', 'M', 'merchant', 'm@devb', 'M', 'PP', 840, now(), now())`,
    );
    await sql(
      `insert into api_key (id, merchant_ref, kind, prefix, hash, created_at) values ('k1', 'm1', 'qr', 'p', 'h', now())`,
    );
    await insert("t_qr", "qr", { md5: "0123456789abcdef0123456789abcdef" });
    await insert("t_gw", "gateway", { order: "ORDER-1" });
    await insert("t_gl", "gateway_link", { client: "cl_1", receipt: "https://link.example/receipt/1" });
    await insert("t_gl_none", "gateway_link", {});
    await migrate(orm);
  });
  afterAll(async () => {
    await orm?.close();
    await drop?.();
  });

  it("keeps every row's identifier, in upstream_ref, and the receipt in the link's part of upstream", async () => {
    expect(await sql(`select id, upstream_ref, upstream from "transaction" order by id`)).toEqual([
      {
        id: "t_gl",
        upstream_ref: "cl_1",
        upstream: { approvedAt: "2026-01-01T00:00:00Z", receiptUrl: "https://link.example/receipt/1" },
      },
      { id: "t_gl_none", upstream_ref: null, upstream: { approvedAt: "2026-01-01T00:00:00Z" } },
      { id: "t_gw", upstream_ref: "ORDER-1", upstream: { approvedAt: "2026-01-01T00:00:00Z" } },
      {
        id: "t_qr",
        upstream_ref: "0123456789abcdef0123456789abcdef",
        upstream: { approvedAt: "2026-01-01T00:00:00Z" },
      },
    ]);
    const cols = await sql<{ column_name: string }>(
      `select column_name from information_schema.columns where table_name = 'transaction'
       and column_name in ('order_id', 'md5', 'client_id', 'receipt_url')`,
    );
    expect(cols).toEqual([]);
  });

  it("a merchant's order id and link client id stay unique in their areas (the areas' own indexes); an md5 need not", async () => {
    const again = (id: string, area: string, ref: string) =>
      sql(
        `insert into "transaction" (id, area, merchant_ref, api_key_ref, status, amount, currency, upstream_ref,
           expires_at, created_at, updated_at) values (?, ?, 'm1', 'k1', 'PENDING', 1, 'USD', ?, now(), now(), now())`,
        [id, area, ref],
      );
    await expect(again("t_gw_2", "gateway", "ORDER-1")).rejects.toMatchObject({ code: "23505" });
    await expect(again("t_gl_2", "gateway_link", "cl_1")).rejects.toMatchObject({ code: "23505" });
    // One identifier in two areas is two payments (the uniqueness is each area's own).
    await expect(again("t_gl_3", "gateway_link", "ORDER-1")).resolves.toBeDefined();
    await expect(again("t_qr_2", "qr", "0123456789abcdef0123456789abcdef")).resolves.toBeDefined();
    const indexes = await sql<{ indexname: string }>(
      `select indexname from pg_indexes where tablename = 'transaction' and indexdef like '%upstream_ref%' order by 1`,
    );
    expect(indexes.map((i) => i.indexname)).toEqual([
      "transaction_gateway_ref_uq",
      "transaction_link_ref_uq",
      "transaction_upstream_ref_idx",
    ]);
  });
});
