import { describe, it, expect } from "@jest/globals";
import pg from "pg";
import { ADMIN_URL, createTestDatabase } from "../support/db.js";
import { waitFor } from "../support/wait.js";

/**
 * The run's own databases (docs/decisions/0269-databases-dropped-in-the-background.md): a test lets go of its
 * database at once, and the run's dropper, started by jest's global setup, drops it while the run goes on.
 */
describe("a test's database, once let go of", () => {
  const exists = async (name: string) => {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    try {
      return (await c.query("select 1 from pg_database where datname = $1", [name])).rowCount === 1;
    } finally {
      await c.end();
    }
  };

  it("refuses connections at once, and is dropped by the run's dropper soon after", async () => {
    const db = await createTestDatabase();
    const before = new pg.Client({ connectionString: db.url });
    await before.connect();
    await before.end();
    await db.drop();
    const after = new pg.Client({ connectionString: db.url });
    after.on("error", () => undefined);
    await expect(after.connect()).rejects.toThrow(/is not currently accepting connections|does not exist/);
    await waitFor(async () => !(await exists(db.name)), 30_000, 100, `the dropper to drop ${db.name}`);
  });
});
