import pg from "pg";

const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/** Compressed (CI) or full durations: FAULTS_FULL=1 runs outages and waits at their real length. */
export const FULL = process.env.FAULTS_FULL === "1";

/** A fresh database `pqr_faults_*` on a PostgreSQL server (the machine's by default); dropped by `drop()`. */
export async function createFaultsDatabase(adminUrl = ADMIN_URL): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `pqr_faults_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  return {
    url: adminUrl.replace(/\/[^/]*$/, `/${name}`),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      c.on("error", () => undefined);
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`).catch(() => undefined);
      await c.end();
    },
  };
}
