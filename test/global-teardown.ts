// Runs once after all suites: drops this run's migrated template (test/support/template-db.ts), if a test made it,
// and removes its demo data directory (test/support/demo-template.ts; the same path as demoTemplateRoot gives).
// (Self-contained, as global-setup.ts.)
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export default async function globalTeardown(): Promise<void> {
  const name = process.env.PQR_TEST_TEMPLATE;
  if (name === undefined) return;
  rmSync(join(tmpdir(), `${name}-demo`), { recursive: true, force: true });
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
