// Before the faults suite: PostgreSQL is there, pqr_faults_* databases left by runs that died over an hour
// ago are dropped, and the service is built — the scenarios run `node dist/src/main.js`, so a dist/ older
// than src/ would test yesterday's code.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import pg from "pg";

export default async function globalSetup(): Promise<void> {
  const admin = new pg.Client({
    connectionString: process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
  });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      "select datname from pg_database where datname like 'pqr_faults_%'",
    );
    for (const { datname } of rows) {
      const created = parseInt(datname.split("_")[3] ?? "", 36);
      if (Number.isFinite(created) && Date.now() - created > 3600_000)
        await admin.query(`drop database if exists "${datname}" with (force)`).catch(() => undefined);
    }
  } finally {
    await admin.end();
  }
  // This run's migrated template for the scenarios that start a service in-process (test/support/template-db.ts).
  process.env.PQR_TEST_TEMPLATE = `pqr_test_${process.pid}_${Date.now().toString(36)}_tpl`;
  execFileSync(
    process.execPath,
    [join(process.cwd(), "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
    { stdio: "inherit" },
  );
}
