// Runs once before all suites: proves the real PostgreSQL is there, drops databases left behind by earlier runs
// (older than an hour, so concurrent runs on one machine never drop each other's) and names this run's migrated
// template for every worker (test/support/template-db.ts makes it on first use; global-teardown.ts drops it), and
// starts the run's database dropper (test/support/dropper.cjs), which drops the databases tests let go of.
// (Self-contained: jest loads a global setup without its module mapping, so it cannot import test/support/*.js.)
import { spawn } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export default async function globalSetup(_global: unknown, project: { rootDir: string }): Promise<void> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      "select datname from pg_database where datname like 'pqr_test_%'",
    );
    for (const { datname } of rows) {
      const created = parseInt(datname.split("_")[3] ?? "", 36);
      if (Number.isFinite(created) && Date.now() - created > 3600_000) {
        await admin.query(`drop database if exists "${datname}" with (force)`).catch(() => undefined);
      }
    }
  } finally {
    await admin.end();
  }
  // Demo data directories (test/support/demo-template.ts) of runs that ended without removing theirs (the fault
  // suite has no global teardown), older than an hour as above.
  for (const entry of readdirSync(tmpdir())) {
    const created = parseInt(/^pqr_test_\d+_([0-9a-z]+)_tpl-demo$/.exec(entry)?.[1] ?? "", 36);
    if (Number.isFinite(created) && Date.now() - created > 3600_000)
      rmSync(join(tmpdir(), entry), { recursive: true, force: true });
  }
  // The workers start after this and inherit it; the same name as template-db.ts would give a process of its own.
  process.env.PQR_TEST_TEMPLATE = `pqr_test_${process.pid}_${Date.now().toString(36)}_tpl`;
  // The dropper runs beside jest (not in it: a file run in jest's own process would count its socket and timers as
  // the file's). unref: it never holds jest open; global-teardown.ts stops it and waits for its last sweep.
  const dropper = spawn(process.execPath, [join(project.rootDir, "test", "support", "dropper.cjs"), adminUrl], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  dropper.unref();
  (globalThis as { pqrDropper?: typeof dropper }).pqrDropper = dropper;
  // Workers inherit it: test/support/db.ts then marks a database it is done with instead of dropping it.
  process.env.PQR_TEST_DROPPER = "1";
}
