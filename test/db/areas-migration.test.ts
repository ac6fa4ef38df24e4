import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createTestDatabase } from "../support/db.js";
import { ENTITIES, MODULE_MIGRATIONS } from "../../src/app.js";
import { createOrm, migrate, type Orm } from "../../src/db/orm.js";

/**
 * m0007 (areas are registrations) on a database with keys of the earlier layout: each key's configuration moves from
 * its area's own column into target_ref, nothing is lost, and the areas' own migrations check it again.
 */
describe("m0007: the per-area key columns move into target_ref", () => {
  let orm: Orm;
  let drop: () => Promise<void>;
  const sql = <T = Record<string, unknown>>(q: string, params: unknown[] = []) =>
    orm.em.fork().getConnection().execute<T[]>(q, params);

  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    orm = await createOrm(db.url, 2, ENTITIES, MODULE_MIGRATIONS);
    await orm.migrator.up({ to: "m0006-link-protocol" });
    const now = new Date();
    await sql(
      `insert into merchant (id, name, account_type, bakong_account_id, merchant_name, merchant_city,
       default_currency, created_at, updated_at) values ('m1', 'M', 'merchant', 'm@devb', 'M', 'PP', 840, ?, ?)`,
      [now, now],
    );
    await sql(
      `insert into gateway_config (id, merchant_ref, name, upstream_merchant_id, api_secret_enc, created_at, updated_at)
       values ('gc1', 'm1', 'g', 'up', 'x', ?, ?)`,
      [now, now],
    );
    await sql(
      `insert into link_config (id, merchant_ref, name, url, currency, created_at, updated_at)
       values ('lc1', 'm1', 'l', 'https://link.example/p', 116, ?, ?)`,
      [now, now],
    );
    for (const [id, kind, gw, link] of [
      ["k_qr", "qr", null, null],
      ["k_gw", "gateway", "gc1", null],
      ["k_gl", "gateway_link", null, "lc1"],
    ])
      await sql(
        `insert into api_key (id, merchant_ref, kind, prefix, hash, gateway_config_ref, link_config_ref, created_at)
         values (?, 'm1', ?, 'p', ?, ?, ?, ?)`,
        [id, kind, `h_${id}`, gw, link, now],
      );
    await migrate(orm);
  });
  afterAll(async () => {
    await orm?.close();
    await drop?.();
  });

  it("keeps every key's target, in target_ref", async () => {
    expect(await sql(`select id, kind, target_ref from api_key order by id`)).toEqual([
      { id: "k_gl", kind: "gateway_link", target_ref: "lc1" },
      { id: "k_gw", kind: "gateway", target_ref: "gc1" },
      { id: "k_qr", kind: "qr", target_ref: null },
    ]);
    const cols = await sql<{ column_name: string }>(
      `select column_name from information_schema.columns where table_name = 'api_key' and column_name like '%config_ref'`,
    );
    expect(cols).toEqual([]);
  });

  it("accepts a kind no central list names; the areas' own migrations still refuse their keys unbound", async () => {
    const now = new Date();
    await sql(
      `insert into api_key (id, merchant_ref, kind, prefix, hash, created_at) values ('k_tm', 'm1', 'terminal', 'p', 'h_tm', ?)`,
      [now],
    );
    await expect(
      sql(
        `insert into api_key (id, merchant_ref, kind, prefix, hash, created_at) values ('k_gw2', 'm1', 'gateway', 'p', 'h_gw2', ?)`,
        [now],
      ),
    ).rejects.toThrow(/api_key_gateway_target/);
    await expect(
      sql(
        `insert into api_key (id, merchant_ref, kind, prefix, hash, created_at) values ('k_gl2', 'm1', 'gateway_link', 'p', 'h_gl2', ?)`,
        [now],
      ),
    ).rejects.toThrow(/api_key_link_target/);
    expect(await orm.migrator.getPending()).toEqual([]);
  });
});
