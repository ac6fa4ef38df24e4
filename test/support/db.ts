import pg from "pg";

export const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
let counter = 0;

/**
 * A fresh database `<prefix>_<pid>_<time>_<n>` for one suite (on the machine's PostgreSQL unless `adminUrl`
 * names another server); dropped by `drop()`. Empty, or with `template` a copy of that database (template-db.ts).
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
      await c.query(`drop database if exists "${name}" with (force)`).catch(() => undefined);
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
