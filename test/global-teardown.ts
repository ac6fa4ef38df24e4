// Runs once after all suites: drops this run's migrated template (test/support/template-db.ts), if a test made it.
// (Self-contained, as global-setup.ts.)
import pg from "pg";

export default async function globalTeardown(): Promise<void> {
  const name = process.env.PQR_TEST_TEMPLATE;
  if (name === undefined) return;
  const admin = new pg.Client({
    connectionString: process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
  });
  await admin.connect();
  try {
    for (const db of [name, `${name}_building`]) await admin.query(`drop database if exists "${db}" with (force)`);
  } finally {
    await admin.end();
  }
}
