import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serviceMain } from "../proc.js";
import { Helper } from "../support/ipc.js";
import { createBenchDb, type BenchDb } from "../support/pg.js";
import { ADMIN_TOKEN, SECRET_KEY, baseEnv, freePort, startService, type ServiceProcess } from "../support/service.js";

export const helperPath = (name: string) => fileURLToPath(new URL(`./${name}.js`, import.meta.url));

/**
 * Processes of the events bench on one fresh PostgreSQL database: service instances (each its own child
 * process, deployed as in production: NODE_ENV=production, no simulators), and forked helpers.
 */
export class Rig {
  readonly services: ServiceProcess[] = [];
  readonly helpers: Helper[] = [];
  private readonly dirs: string[] = [];

  private constructor(readonly db: BenchDb) {}

  static async create(label: string): Promise<Rig> {
    return new Rig(await createBenchDb(label));
  }

  /** `node dist/src/main.js <role>` on the rig's database. */
  async service(
    role: "api" | "worker" | "serve",
    env: Record<string, string> = {},
    main = serviceMain(),
  ): Promise<ServiceProcess> {
    const dataDir = mkdtempSync(join(tmpdir(), "pqr-evbench-"));
    this.dirs.push(dataDir);
    const s = await startService({
      command: [process.execPath, main, role],
      port: await freePort(),
      env: {
        ...baseEnv(),
        NODE_ENV: "production",
        DATABASE_URL: this.db.url,
        DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
        ADMIN_TOKEN,
        SECRET_KEY,
        SIMULATORS: "false",
        DEMO: "false",
        NETWORK_API_URL: "http://127.0.0.1:9",
        GATEWAY_API_URL: "http://127.0.0.1:9",
        RATE_LIMIT_PER_MINUTE: "0",
        ...(process.env.BENCH_DB_POOL_SIZE ? { DB_POOL_SIZE: process.env.BENCH_DB_POOL_SIZE } : {}),
        ...env,
      },
    });
    this.services.push(s);
    return s;
  }

  helper(name: string): Helper {
    const h = Helper.start(helperPath(name), name);
    this.helpers.push(h);
    return h;
  }

  async close(): Promise<void> {
    await Promise.all(this.helpers.map((h) => h.stop()));
    await Promise.all(this.services.map((s) => s.stop()));
    await this.db.drop();
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
  }
}
