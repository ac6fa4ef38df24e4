import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import pg from "pg";
import { createTestDatabase } from "../support/db.js";
import { ENTITIES } from "../../src/app.js";
import { createOrm, type Orm } from "../../src/db/orm.js";
import { Db } from "../../src/db/sql.js";
import { parseExact, stringifyExact } from "../../src/exact-json.js";

// Integer-like keys, sent out of order, and a number's own text: what a plain JSON.parse would reorder and reshape.
const SENT = '{"2":"b","10":1.50,"1":1e3}';

describe("json columns are read with their exact text by the service's pool only", () => {
  let orm: Orm;
  let url: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await createTestDatabase();
    ({ url, drop } = db);
    orm = await createOrm(db.url, 2, ENTITIES);
  });
  afterAll(async () => {
    await orm?.close();
    await drop?.();
  });

  it("returns json exactly as it was written through the ORM's pool (meta leaves as it arrived)", async () => {
    const rows = await new Db(orm).query<{ j: unknown }>(`select $1::json as j`, [SENT]);
    expect(stringifyExact(rows[0].j)).toBe(SENT);
  });

  it("leaves pg's process-wide parsers alone: another client in the process reads plain JSON", async () => {
    expect(pg.types.getTypeParser(pg.types.builtins.JSON)).not.toBe(parseExact);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ j: unknown }>(`select $1::json as j`, [SENT]);
      expect(stringifyExact(rows[0].j)).toBe('{"1":1000,"2":"b","10":1.5}');
    } finally {
      await client.end();
    }
  });
});
