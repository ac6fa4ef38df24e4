// The real service as its own process (`node dist/src/main.js serve`) on a fresh PostgreSQL database,
// for the bad-input and isolation suites. A separate process rather than createApp in the jest
// process, because these suites assert that the *process* survives: Node's default for an unhandled
// rejection or an uncaught exception is to exit, and a child that exits is seen at once. It also puts
// the fuzz client and the service on different cores of a 2-core machine.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createTestDatabase } from "../../../support/db.js";
import { ADMIN_TOKEN, createTenant, type TestApp, type Tenant } from "../../../support/app.js";

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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export interface ServiceProcess {
  url: string;
  dbUrl: string;
  child: ChildProcess;
  /** Every line the process wrote (pino JSON at LOG_LEVEL, plus anything on stderr). */
  output: string[];
  /** Set when the process exits; null while it runs. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  admin<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T>;
  /** A direct connection to the service's database (row counts; never writes). */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  createTenant(opts?: Parameters<typeof createTenant>[1]): Promise<Tenant>;
  /** Log lines at error level or above, and anything that looks like a crash. */
  errorLines(): string[];
  stop(): Promise<void>;
}

export async function startService(env: Record<string, string> = {}): Promise<ServiceProcess> {
  ensureBuilt();
  const db = await createTestDatabase();
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-fuzz-"));
  const child = spawn(process.execPath, [join(ROOT, "dist/src/main.js"), "serve"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_OPTIONS: "",
      NODE_ENV: "test",
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.FUZZ_LOG_LEVEL ?? "warn",
      ADMIN_TOKEN,
      SECRET_KEY,
      SIMULATORS: "true",
      DEMO: "false",
      DB_POOL_SIZE: "8",
      RATE_LIMIT_PER_MINUTE: "0",
      // Monitors poll slowly: the fuzz suites create thousands of transactions and measure request handling, not monitoring.
      QR_MONITOR_INTERVAL_MS: "60000",
      GATEWAY_MONITOR_INTERVAL_MS: "60000",
      // The link page runs in Chromium on a machine shared with other test runs: give it time (a slow
      // healthy page is not what these suites test; the 502 for a page that never answers is tested elsewhere).
      LINK_OPEN_TIMEOUT_MS: "60000",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const collect = (buf: Buffer) => {
    for (const line of buf.toString("utf8").split("\n"))
      if (line.trim() !== "" && output.length < 10_000) output.push(line);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const url = `http://127.0.0.1:${port}`;
  const svc: ServiceProcess = {
    url,
    dbUrl: db.url,
    child,
    output,
    exit: null,
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
    createTenant: (opts) => createTenant(svc as unknown as TestApp, opts), // createTenant only uses url and admin()
    // pino JSON at error/fatal level, or anything not from pino that looks like a crash (stderr of Node itself).
    // One known exception: graphql-ws console.errors every socket error, including ws refusing a frame over the
    // 64 KiB cap (closed 1009, as intended); that block ("… Max payload size exceeded" … "}") is expected noise.
    errorLines: () => {
      const out: string[] = [];
      let skipping = false;
      for (const l of output) {
        if (/Internal error emitted on a WebSocket socket.*Max payload size exceeded/.test(l)) skipping = true;
        else if (skipping) skipping = l !== "}";
        else if (l.startsWith("{") ? /"level":(5\d|6\d)/.test(l) : /unhandled|uncaught|FATAL|Error/i.test(l))
          out.push(l);
      }
      return out;
    },
    async stop() {
      if (svc.exit === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
        await exited;
        clearTimeout(timer);
      }
      await pool.end();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  child.once("exit", (code, signal) => {
    svc.exit = { code, signal };
  });
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (svc.exit !== null)
      throw new Error(`service exited during start (${JSON.stringify(svc.exit)}):\n${output.join("\n")}`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await svc.stop();
      throw new Error(`service not ready within 60 s:\n${output.join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return svc;
}

/** Registers a tenant's hosted-gateway merchant with the in-process gateway simulator, so valid generates succeed. */
export async function registerGatewayMerchant(svc: ServiceProcess, merchantId: string, apiKey: string): Promise<void> {
  const res = await fetch(`${svc.url}/sim/gateway/merchants`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ merchantId, apiKey }),
  });
  if (res.status >= 300) throw new Error(`gateway simulator refused the merchant: ${res.status}`);
}

/** The process is alive and its health endpoints answer. */
export async function healthy(svc: ServiceProcess): Promise<boolean> {
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
