// The run's database dropper: a process of its own, started by test/global-setup.ts and stopped by
// test/global-teardown.ts (SIGTERM), that drops the databases tests have finished with while the run goes on.
//
// Why: `drop database` forces a checkpoint on PostgreSQL 15, and waits for it. Under a full run that took about
// 0.7–2.5 s a database (docs/decisions/0269-databases-dropped-in-the-background.md), time in which the test file's
// worker could start nothing else. A test now only marks its database: `alter database … allow_connections false`
// (test/support/db.ts), a catalog update that returns at once and turns away any later connection as a dropped
// database would. This process drops every marked database of the run's kind (`pqr_test_*`), one at a time.
//
// It stops when told to or when the process that started it is gone, after one last sweep that began after that:
// every database marked before the stop is dropped. A run that dies leaves marked databases to the next run's
// global setup, which drops `pqr_test_*` databases older than an hour.
const pg = require("pg");

const ADMIN_URL = process.argv[2];
const PAUSE_MS = 250;
const MARKED = "select datname from pg_database where datname like 'pqr\\_test\\_%' and not datallowconn";

let stopping = false;
process.on("SIGTERM", () => {
  stopping = true;
});

const parent = process.ppid;
function parentAlive() {
  try {
    process.kill(parent, 0);
    return true;
  } catch {
    return false;
  }
}

async function sweep(client) {
  const { rows } = await client.query(MARKED);
  for (const { datname } of rows)
    await client.query(`drop database if exists "${datname.replace(/"/g, '""')}" with (force)`).catch(() => undefined);
}

async function main() {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  client.on("error", () => undefined);
  await client.connect();
  for (;;) {
    const last = stopping || !parentAlive();
    await sweep(client);
    if (last) break;
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
  await client.end();
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`database dropper: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
