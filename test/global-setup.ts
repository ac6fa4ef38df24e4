// Runs once before all suites: proves the real PostgreSQL is there and drops databases left behind
// by earlier runs, so every suite can create its own throw-away database (test/support/db.ts).
import pg from "pg";

export default async function globalSetup(): Promise<void> {
  const admin = new pg.Client({ connectionString: process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      "select datname from pg_database where datname like 'pqr_test_%' and datname not like $1",
      [`pqr_test_${process.pid}_%`],
    );
    for (const { datname } of rows) {
      await admin.query(`drop database if exists "${datname}" with (force)`).catch(() => undefined);
    }
  } finally {
    await admin.end();
  }
}
