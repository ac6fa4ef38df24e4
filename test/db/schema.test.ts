import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createTestDatabase } from "../support/db.js";
import { ENTITIES, MODULE_MIGRATIONS } from "../../src/app.js";
import { createOrm, migrate, type Orm } from "../../src/db/orm.js";

describe("migrations", () => {
  let orm: Orm;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    orm = await createOrm(db.url, 2, ENTITIES, MODULE_MIGRATIONS);
    await migrate(orm);
  });
  afterAll(async () => {
    await orm?.close();
    await drop?.();
  });

  it("create every column the entities map (the hand-written SQL matches the code)", async () => {
    const rows = await orm.em
      .fork()
      .execute<{ table_name: string; column_name: string }[]>(
        `select table_name, column_name from information_schema.columns where table_schema = 'public'`,
      );
    const have = new Set(rows.map((r) => `${r.table_name}.${r.column_name}`));
    const missing: string[] = [];
    for (const meta of Object.values(orm.getMetadata().getAll())) {
      for (const prop of Object.values(meta.properties) as { fieldNames?: string[] }[])
        for (const f of prop.fieldNames ?? [])
          if (!have.has(`${meta.tableName}.${f}`)) missing.push(`${meta.tableName}.${f}`);
    }
    expect(missing).toEqual([]);
  });

  it("are idempotent: a second run applies nothing", async () => {
    expect(await orm.migrator.getPending()).toEqual([]);
    await migrate(orm);
  });
});
