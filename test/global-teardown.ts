// Runs once after all suites: stops the run's database dropper once it has dropped every database the tests let go
// of (test/support/dropper.cjs), drops this run's migrated template (test/support/template-db.ts), if a test made it,
// and removes its demo data directory (test/support/demo-template.ts; the same path as demoTemplateRoot gives).
// (Self-contained, as global-setup.ts.)
import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** How long the dropper's last sweep may take: a database a second, on a slow machine, and some to spare. */
const LAST_SWEEP_MS = 120_000;

async function stopDropper(dropper: ChildProcess | undefined): Promise<void> {
  if (dropper === undefined || dropper.exitCode !== null || dropper.signalCode !== null) return;
  dropper.ref();
  const exited = new Promise<void>((resolve) => dropper.once("exit", () => resolve()));
  dropper.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, LAST_SWEEP_MS)));
  await Promise.race([exited, late]);
  clearTimeout(timer);
  if (dropper.exitCode === null) dropper.kill("SIGKILL");
}

export default async function globalTeardown(): Promise<void> {
  await stopDropper((globalThis as { pqrDropper?: ChildProcess }).pqrDropper);
  const name = process.env.PQR_TEST_TEMPLATE;
  if (name === undefined) return;
  rmSync(join(tmpdir(), `${name}-demo`), { recursive: true, force: true });
  const admin = new pg.Client({
    connectionString: process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
  });
  await admin.connect();
  try {
    // What the dropper did not get to (it could not connect, or was stopped late), then the template.
    const { rows } = await admin.query<{ datname: string }>(
      "select datname from pg_database where datname like 'pqr\\_test\\_%' and not datallowconn",
    );
    const left = rows.map((r) => r.datname);
    for (const db of [...left, name, `${name}_building`])
      await admin.query(`drop database if exists "${db}" with (force)`);
  } finally {
    await admin.end();
  }
}
