import { createTestDatabase } from "../../support/db.js";

/** Compressed (CI) or full durations: FAULTS_FULL=1 runs outages and waits at their real length. */
export const FULL = process.env.FAULTS_FULL === "1";

/** A fresh database `pqr_faults_*` on a PostgreSQL server (the machine's by default); dropped by `drop()`. */
export async function createFaultsDatabase(adminUrl?: string): Promise<{ url: string; drop(): Promise<void> }> {
  return createTestDatabase({ prefix: "pqr_faults", adminUrl });
}
