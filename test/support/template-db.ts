// One migrated database per test run, copied for each service a test starts (`create database … template`):
// migrating a fresh database for each of the suite's ~150 services was most of what starting one cost
// (docs/decisions/0235-one-migrated-template-per-run.md). The template is made by this run's own code — the same
// migrations and job table a service makes when it starts on an empty database — so a copy is what that start
// would have left. Tests of the migrations themselves keep creating empty databases (createTestDatabase).
import pg from "pg";
import { createOrm, migrate } from "../../src/db/orm.js";
import { Scheduler } from "../../src/jobs/scheduler.js";
import { createLogger } from "../../src/logger.js";
import { entitiesOf, migrationsOf, MODULES } from "../../src/app.js";
import { ADMIN_URL } from "./db.js";

/** The migrations the template holds: the service's own (MODULES; demo mode adds none). */
const TEMPLATE_MIGRATIONS = migrationsOf(MODULES).map((m) => m.name);
/** Any fixed number: the advisory lock the processes of one run take while one of them makes the template. */
const TEMPLATE_LOCK_KEY = 7_423_017;

/**
 * The run's template name: global-setup.ts names it for every worker of a run (and drops it after the run); a
 * process started without it makes one of its own, which the next run's global setup drops after an hour.
 */
export function templateName(): string {
  return (process.env.PQR_TEST_TEMPLATE ??= `pqr_test_${process.pid}_${Date.now().toString(36)}_tpl`);
}

/**
 * Whether a service with these migrations may start on a copy of the template: the template's are the first of
 * its own (a test's extra area adds its migrations after them, and they run on the copy as they would on an
 * empty database). Any other list gets an empty database.
 */
export function templateFits(migrations: readonly { name: string }[]): boolean {
  return TEMPLATE_MIGRATIONS.every((name, i) => migrations[i]?.name === name);
}

let made: Promise<string> | null = null;

/**
 * The run's migrated template, made by the first process of the run that asks (under an advisory lock, so the
 * others wait for it and find it there). It is made under another name and renamed when complete: a process that
 * dies half-way leaves no template that looks finished. No connection to it stays open (a copy needs none).
 */
export function migratedTemplate(adminUrl = ADMIN_URL): Promise<string> {
  return (made ??= makeOnce(adminUrl, templateName()).catch((err: unknown) => {
    made = null;
    throw err;
  }));
}

async function makeOnce(adminUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query("select pg_advisory_lock($1)", [TEMPLATE_LOCK_KEY]);
    const { rowCount } = await admin.query("select 1 from pg_database where datname = $1", [name]);
    if (rowCount === 0) {
      const building = `${name}_building`;
      await admin.query(`drop database if exists "${building}" with (force)`);
      await admin.query(`create database "${building}"`);
      await migrateEmpty(adminUrl.replace(/\/[^/]*$/, `/${building}`));
      await admin.query(`alter database "${building}" rename to "${name}"`);
    }
    return name;
  } finally {
    await admin.end();
  }
}

/** What a service's start does to an empty database (src/db/storage.ts): the migrations, then the job table. */
async function migrateEmpty(url: string): Promise<void> {
  const orm = await createOrm(url, 1, entitiesOf(MODULES), migrationsOf(MODULES));
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
  const jobs = new Scheduler(url, {
    logger: createLogger({ logLevel: "silent" }),
    metrics: { jobLag: { set: () => undefined }, jobRuns: { inc: () => undefined } },
    poolSize: 1,
  });
  try {
    await jobs.ready();
  } finally {
    await jobs.stop();
  }
}
