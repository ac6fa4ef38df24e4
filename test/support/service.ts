// The real service as its own process (`node dist/src/main.js serve`, a ServiceProcess) on a fresh PostgreSQL database
// (a copy of the run's migrated template, test/support/template-db.ts),
// for the bad-input and isolation suites. A separate process rather than createApp in the jest
// process, because these suites assert that the *process* survives: Node's default for an unhandled
// rejection or an uncaught exception is to exit, and a child that exits is seen at once. It also puts
// the fuzz client and the service on different cores of a 2-core machine.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { createTestDatabase } from "./db.js";
import { migratedTemplate } from "./template-db.js";
import { ADMIN_TOKEN, createTenant, type Tenant } from "./app.js";
import { ARTIFACTS, freePort, ServiceProcess } from "./cluster.js";

export { ADMIN_TOKEN };
export const SECRET_KEY = "test-secret-key-0123456789-0123456789";
const ROOT = process.cwd();

function newestMtime(dir: string): number {
  let max = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) max = Math.max(max, newestMtime(p));
    else if (e.name.endsWith(".ts")) max = Math.max(max, statSync(p).mtimeMs);
  }
  return max;
}

/** The child runs the built service: rebuild when any src file is newer than dist (test:faults does not build). */
export function ensureBuilt(): void {
  const main = join(ROOT, "dist/src/main.js");
  if (existsSync(main) && statSync(main).mtimeMs >= newestMtime(join(ROOT, "src"))) return;
  execFileSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
    cwd: ROOT,
    stdio: "inherit",
  });
}

/** A service process on its own fresh database, with what the bad-input suites ask of it. */
export interface FuzzService {
  url: string;
  dbUrl: string;
  process: ServiceProcess;
  /** Every line the process wrote (pino JSON at LOG_LEVEL, plus anything on stderr). */
  readonly output: string[];
  /** Set when the process exits; null while it runs. */
  readonly exit: ServiceProcess["exit"];
  admin<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T>;
  /** A direct connection to the service's database (row counts; never writes). */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  createTenant(opts?: Parameters<typeof createTenant>[1]): Promise<Tenant>;
  /** Log lines at error level or above, and anything that looks like a crash. */
  errorLines(): string[];
  stop(): Promise<void>;
}

/** `node dist/src/main.js serve` (a ServiceProcess, as every suite that runs the service as a process). */
export async function startService(env: Record<string, string> = {}): Promise<FuzzService> {
  ensureBuilt();
  // A copy of the run's migrated template: the process starts on what its own migrations would have made.
  const db = await createTestDatabase({ template: await migratedTemplate() });
  const logDir = join(ARTIFACTS, `input-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  mkdirSync(logDir, { recursive: true });
  const serviceEnv = {
    NODE_ENV: "test",
    HOST: "127.0.0.1",
    DATABASE_URL: db.url,
    LOG_LEVEL: process.env.FUZZ_LOG_LEVEL ?? "warn",
    ADMIN_TOKEN,
    SECRET_KEY,
    SIMULATORS: "true",
    DEMO: "false",
    DB_POOL_SIZE: "8",
    RATE_LIMIT_PER_MINUTE: "0",
    BEARER_FAILURES_PER_MINUTE: "100000",
    // Monitors poll slowly: the fuzz suites create thousands of transactions and measure request handling, not monitoring.
    QR_MONITOR_INTERVAL_MS: "60000",
    GATEWAY_MONITOR_INTERVAL_MS: "60000",
    // The link page runs in Chromium on a machine shared with other test runs: give it time (a slow
    // healthy page is not what these suites test; the 502 for a page that never answers is tested elsewhere).
    LINK_OPEN_TIMEOUT_MS: "60000",
    // One tenant sends every valid generate of these suites, which test input, not the browser pool's fair shares
    // (test/faults/pool-shares.test.ts does): its shares are the worker's whole pool.
    LINK_HELD_PAGES_PER_MERCHANT: "1000",
    LINK_OPENS_PER_MERCHANT: "1000",
    ...env,
  };
  const proc = new ServiceProcess("service", "serve", await freePort(), () => serviceEnv, logDir);
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  try {
    await proc.start();
  } catch (err) {
    await proc.dispose();
    await pool.end();
    await db.drop();
    throw err;
  }
  const url = proc.url;
  const svc: FuzzService = {
    url,
    dbUrl: db.url,
    process: proc,
    output: proc.output,
    get exit() {
      return proc.exit;
    },
    async admin<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
      const res = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ query, variables }),
      });
      const json = (await res.json()) as { data?: T; errors?: { message: string }[] };
      if (json.errors?.length) throw new Error(`admin GraphQL error: ${json.errors.map((e) => e.message).join("; ")}`);
      return json.data as T;
    },
    async sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
      return (await pool.query(text, params)).rows as T[];
    },
    createTenant: (opts) => createTenant(svc, opts),
    // pino JSON at error/fatal level, or anything not from pino that looks like a crash (stderr of Node itself).
    // One known exception: graphql-ws console.errors every socket error, including ws refusing a frame over the
    // 64 KiB cap (closed 1009, as intended); that block ("… Max payload size exceeded" … "}") is expected noise.
    errorLines: () => {
      const out: string[] = [];
      let skipping = false;
      for (const l of proc.output) {
        if (/Internal error emitted on a WebSocket socket.*Max payload size exceeded/.test(l)) skipping = true;
        else if (skipping) skipping = l !== "}";
        else if (l.startsWith("{") ? /"level":(5\d|6\d)/.test(l) : /unhandled|uncaught|FATAL|Error/i.test(l))
          out.push(l);
      }
      return out;
    },
    async stop() {
      await proc.dispose();
      await pool.end();
      await db.drop();
    },
  };
  return svc;
}

/** Registers a tenant's hosted-gateway merchant with the in-process gateway simulator, so valid generates succeed. */
export async function registerGatewayMerchant(svc: FuzzService, merchantId: string, apiKey: string): Promise<void> {
  const res = await fetch(`${svc.url}/sim/gateway/merchants`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ merchantId, apiKey }),
  });
  if (res.status >= 300) throw new Error(`gateway simulator refused the merchant: ${res.status}`);
}

/** The process is alive and its health endpoints answer. */
export async function healthy(svc: FuzzService): Promise<boolean> {
  if (svc.exit !== null) return false;
  const h = await fetch(`${svc.url}/healthz`).then(
    (r) => r.status === 200,
    () => false,
  );
  const r = await fetch(`${svc.url}/readyz`).then(
    (x) => x.status === 200,
    () => false,
  );
  return h && r;
}
