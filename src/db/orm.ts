import { MikroORM, PostgreSqlDriver } from "@mikro-orm/postgresql";
import { ReflectMetadataProvider } from "@mikro-orm/decorators/legacy";
import { Migrator } from "@mikro-orm/migrations";
import { ENTITIES } from "./entities.js";
import { MIGRATIONS } from "./migrations/index.js";

export type Orm = MikroORM;

/** One ORM per process; every request and job forks its own EntityManager from it. */
export async function createOrm(url: string, poolSize: number): Promise<Orm> {
  return MikroORM.init({
    driver: PostgreSqlDriver,
    clientUrl: url,
    entities: ENTITIES,
    metadataProvider: ReflectMetadataProvider,
    extensions: [Migrator],
    migrations: { migrationsList: MIGRATIONS, silent: true, snapshot: false, transactional: true, allOrNothing: true, tableName: "schema_migration" },
    pool: { min: 0, max: poolSize },
    debug: false,
    allowGlobalContext: false,
    forceUtcTimezone: true,
  });
}

export async function migrate(orm: Orm): Promise<void> {
  await orm.migrator.up();
}

export async function pendingMigrations(orm: Orm): Promise<number> {
  return (await orm.migrator.getPending()).length;
}
