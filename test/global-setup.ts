// Runs once before all suites: proves the real PostgreSQL is there, drops databases left behind by earlier runs
// (older than an hour, so concurrent runs on one machine never drop each other's) and names this run's migrated
// template for every worker (test/support/template-db.ts makes it on first use; global-teardown.ts drops it), after
// building the service again if a source is newer than the build the tests run.
// (Self-contained: jest loads a global setup without its module mapping, so it cannot import test/support/*.js.)
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";

/**
 * The tests run the service as `npm run build` compiled it (jest.config.cjs maps src/ to dist/src/). A source newer
 * than the build (an edit since, with a single jest file run by hand) is built first, so it is never tested as it
 * was before the edit. `npm test` has just built: nothing is newer, nothing runs.
 */
function buildIfStale(root: string): void {
  let built = 0;
  try {
    built = statSync(join(root, "dist", ".tsbuildinfo")).mtimeMs;
  } catch {
    // No build yet: build.
  }
  const newer = (dir: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).some((entry) =>
      entry.isDirectory()
        ? newer(join(dir, entry.name))
        : entry.name.endsWith(".ts") && statSync(join(dir, entry.name)).mtimeMs > built,
    );
  if (built > 0 && !newer(join(root, "src"))) return;
  execFileSync(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
    {
      cwd: root,
      stdio: "inherit",
    },
  );
}

export default async function globalSetup(): Promise<void> {
  buildIfStale(process.cwd());
  const admin = new pg.Client({
    connectionString: process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
  });
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
  // The workers start after this and inherit it; the same name as template-db.ts would give a process of its own.
  process.env.PQR_TEST_TEMPLATE = `pqr_test_${process.pid}_${Date.now().toString(36)}_tpl`;
}
