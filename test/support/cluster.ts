// The service as real child processes (`node dist/src/main.js <role>`), the way it is deployed: each
// process can be killed with SIGKILL and started again on the same port, and every line it logs is
// kept (a ring buffer for failure messages, a file under test/artifacts/faults/ for reading later).

import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, type WriteStream } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processTree } from "../../src/gateway-link/process-tree.js";
import { sleep } from "./wait.js";
import { statusOf } from "./http.js";

export const ADMIN_TOKEN = "faults-admin-Ec6bXamUTowVNsxtJoUTnxoX_mS1j5pRN4oAu5jjiF4";
export const SECRET_KEY = "faults-secret-key-0123456789-0123456789";
export const ARTIFACTS = join(process.cwd(), "test", "artifacts", "faults");
const MAIN = join(process.cwd(), "dist", "src", "main.js");
const KEEP_LINES = 300;

export type Role = "api" | "worker" | "serve";

/** A port that was free a moment ago (bound, then released), so a restart can reuse it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One service process: start, wait until /readyz, kill -9, stop, start again on the same port. */
export class ServiceProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<number | null> = Promise.resolve(null);
  private readonly lines: string[] = [];
  private file: WriteStream | null = null;
  /** DATA_DIR of the process (the embedded database and demo.json live there when no DATABASE_URL is set). */
  readonly dataDir: string;
  /** How many times it was started (1 = the first start). */
  starts = 0;
  /** How the last start ended; null while it runs (a suite that must survive its input asserts it stays null). */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  /** Every line the process wrote, from the first (up to 10,000): an index into it marks "from now on". */
  readonly output: string[] = [];
  /** The statuses /readyz answered while the last start waited for it (503s while the service starts). */
  readonly readyStatuses: number[] = [];

  constructor(
    readonly name: string,
    readonly role: Role,
    readonly port: number,
    private readonly env: () => Record<string, string>,
    private readonly logDir: string,
    /** `openFiles`: the process's descriptor limit (soft and hard), set with prlimit as it starts. */
    private readonly limits: { openFiles?: number } = {},
  ) {
    this.dataDir = mkdtempSync(join(tmpdir(), `pqr-faults-${name}-`));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Completed runs of `job` in this process (job_runs_total on its /metrics, every outcome). */
  async jobRuns(job: string): Promise<number> {
    const res = await fetch(`${this.url}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (res.status !== 200) throw new Error(`${this.name} /metrics: HTTP ${res.status}`);
    let n = 0;
    for (const m of (await res.text()).matchAll(/^job_runs_total\{([^}]*)\} (\S+)$/gm))
      if (m[1].includes(`job="${job}"`)) n += Number(m[2]);
    return n;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    this.starts += 1;
    this.file ??= createWriteStream(join(this.logDir, `${this.name}.log`), { flags: "a" });
    this.note(`--- start #${this.starts} (${this.role}, port ${this.port}) ---`);
    // prlimit execs the service in its own process: the pid stays the service's.
    const argv =
      this.limits.openFiles === undefined
        ? [process.execPath, MAIN, this.role]
        : ["prlimit", `--nofile=${this.limits.openFiles}`, "--", process.execPath, MAIN, this.role];
    const child = spawn(argv[0], argv.slice(1), {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        ...this.env(),
        PORT: String(this.port),
        DATA_DIR: this.dataDir,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    this.exit = null;
    this.readyStatuses.length = 0;
    const take = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (!line.trim()) continue;
        if (this.output.length < 10_000) this.output.push(line);
        this.note(line);
      }
    };
    child.stdout?.on("data", take);
    child.stderr?.on("data", take);
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        this.exit = { code, signal };
        this.note(`--- exited (code ${code}, signal ${signal}) ---`);
        resolve(code);
      }),
    );
    await this.waitReady();
  }

  /** Polls /readyz until 200; fails with the log tail if the process exits or it takes too long. */
  async waitReady(timeoutMs = 90_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`${this.name} exited before it was ready\n${this.tail(40)}`);
      const status = await statusOf(`${this.url}/readyz`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
      if (status !== null) this.readyStatuses.push(status);
      if (status === 200) return;
      if (Date.now() > until) throw new Error(`${this.name} not ready within ${timeoutMs} ms\n${this.tail(40)}`);
      await sleep(50);
    }
  }

  /** The process's descendants right now (Chromium and its helpers). */
  descendants(): number[] {
    const pid = this.pid;
    return pid === null
      ? []
      : processTree(pid)
          .map((p) => p.pid)
          .filter((p) => p !== pid);
  }

  /** SIGKILL: no shutdown hook runs, locks and leases stay behind as after a crash. */
  async kill9(): Promise<void> {
    if (!this.running) return;
    const orphans = this.descendants();
    this.note("--- SIGKILL by the test ---");
    this.child?.kill("SIGKILL");
    await this.exited;
    await reap(orphans);
  }

  /** SIGTERM and wait (the service drains); SIGKILL after 40 s. */
  async stop(): Promise<void> {
    if (!this.running) return;
    const orphans = this.descendants();
    this.child?.kill("SIGTERM");
    const timer = setTimeout(() => this.child?.kill("SIGKILL"), 40_000);
    await this.exited;
    clearTimeout(timer);
    await reap(orphans);
  }

  async restart(): Promise<void> {
    await this.kill9();
    await this.start();
  }

  /** The last `n` lines this process logged (all starts). */
  tail(n = 60): string {
    return this.lines
      .slice(-n)
      .map((l) => `[${this.name}] ${l}`)
      .join("\n");
  }

  /** Lines matching `re` (within what is kept). */
  grep(re: RegExp): string[] {
    return this.lines.filter((l) => re.test(l));
  }

  async dispose(): Promise<void> {
    await this.stop();
    await new Promise<void>((r) => (this.file ? this.file.end(() => r()) : r()));
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  private note(line: string): void {
    this.file?.write(`${line}\n`);
    // Per-request access lines (LOG_REQUESTS=1) stay in the file only: the tail is for what the service did.
    if (line.includes('"req":{"id"')) return;
    this.lines.push(line);
    if (this.lines.length > KEEP_LINES * 2) this.lines.splice(0, this.lines.length - KEEP_LINES);
  }
}

/**
 * Chromium started by a killed worker exits by itself (its pipe closes), but not instantly: wait for the
 * processes that were descendants of our own child, and SIGKILL any that are still there after 10 s.
 */
async function reap(pids: number[]): Promise<void> {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const until = Date.now() + 10_000;
  while (pids.some(alive) && Date.now() < until) await sleep(100);
  for (const pid of pids.filter(alive)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

export interface ClusterOptions {
  /** Scenario name: the log folder under test/artifacts/faults/. */
  name: string;
  databaseUrl: string;
  /** Environment shared by every process (upstream URLs, intervals, …). */
  env: Record<string, string>;
}

/** A set of service processes on one database. */
export class Cluster {
  readonly processes: ServiceProcess[] = [];
  readonly logDir: string;
  databaseUrl: string;

  constructor(private readonly opts: ClusterOptions) {
    this.databaseUrl = opts.databaseUrl;
    this.logDir = join(ARTIFACTS, `${opts.name}-${new Date().toISOString().replace(/[:.]/g, "-")}`);
    mkdirSync(this.logDir, { recursive: true });
  }

  baseEnv(): Record<string, string> {
    return {
      NODE_ENV: "test",
      HOST: "127.0.0.1",
      DATABASE_URL: this.databaseUrl,
      LOG_LEVEL: "info",
      ADMIN_TOKEN,
      SECRET_KEY,
      SIMULATORS: "false",
      DEMO: "false",
      QR_MONITOR_INTERVAL_MS: "500",
      GATEWAY_MONITOR_INTERVAL_MS: "500",
      DB_POOL_SIZE: "5",
      RATE_LIMIT_PER_MINUTE: "0",
      BEARER_FAILURES_PER_MINUTE: "100000",
      WEBHOOK_TIMEOUT_MS: "3000",
      UPSTREAM_TIMEOUT_MS: "8000",
      ...this.opts.env,
    };
  }

  /** Adds (and starts) a process of `role`; `env` overrides the cluster's for this one. */
  async add(name: string, role: Role, env: Record<string, string> = {}): Promise<ServiceProcess> {
    const p = new ServiceProcess(name, role, await freePort(), () => ({ ...this.baseEnv(), ...env }), this.logDir);
    this.processes.push(p);
    await p.start();
    return p;
  }

  get(name: string): ServiceProcess {
    const p = this.processes.find((x) => x.name === name);
    if (!p) throw new Error(`no process ${name}`);
    return p;
  }

  /** Every process's recent log lines, for a failure message. */
  tails(n = 40): string {
    return this.processes.map((p) => p.tail(n)).join("\n");
  }

  async dispose(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.dispose()));
  }
}

/**
 * Runs a scenario body; a failure carries the tail of every process's log and the log folder, so the
 * message says what the service did, not only what the test saw.
 */
export async function withLogs<T>(cluster: Cluster, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    e.message += `\n\nFull logs: ${cluster.logDir}\n--- last log lines of each process ---\n${cluster.tails()}`;
    throw e;
  }
}
