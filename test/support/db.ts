import pg from "pg";

export const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
let counter = 0;

/**
 * A fresh database `<prefix>_<pid>_<time>_<n>` for one suite (on the machine's PostgreSQL unless `adminUrl`
 * names another server); let go of by `drop()`. Empty, or with `template` a copy of that database (template-db.ts).
 *
 * In a run with a database dropper (`npm test`: test/support/dropper.cjs), `drop()` on the machine's server only
 * marks the database: it refuses connections at once, and the dropper drops it in the background, so the test does
 * not wait on the checkpoint a drop forces. Elsewhere (the fault suite, another server) it drops it there and then.
 */
export async function createTestDatabase(
  opts: { prefix?: string; adminUrl?: string; template?: string } = {},
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const adminUrl = opts.adminUrl ?? ADMIN_URL;
  const name = `${opts.prefix ?? "pqr_test"}_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database "${name}"${opts.template === undefined ? "" : ` template "${opts.template}"`}`);
  await admin.end();
  const url = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  return {
    url,
    name,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      c.on("error", () => undefined);
      await c.connect();
      const later = process.env.PQR_TEST_DROPPER === "1" && adminUrl === ADMIN_URL && name.startsWith("pqr_test_");
      const sql = later
        ? `alter database "${name}" allow_connections false`
        : `drop database if exists "${name}" with (force)`;
      await c.query(sql).catch(() => undefined);
      await c.end();
    },
  };
}

/** Compressed (CI) or full durations: FAULTS_FULL=1 runs outages and waits at their real length. */
export const FULL = process.env.FAULTS_FULL === "1";

/** A fresh database `pqr_faults_*` on a PostgreSQL server (the machine's by default); dropped by `drop()`. */
export async function createFaultsDatabase(adminUrl?: string): Promise<{ url: string; drop(): Promise<void> }> {
  return createTestDatabase({ prefix: "pqr_faults", adminUrl });
}
