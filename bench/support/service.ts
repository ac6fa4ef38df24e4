import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { sleep, wallNow } from "./timing.js";

/** The project root (dist/bench/support/ → three levels up), where `npm start` and `dist/` live. */
export const PROJECT_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
// Random enough for production mode's admin-token rule (src/config.ts), as every bench service runs in it.
export const ADMIN_TOKEN = "bench-admin-Qm7TcW2xHq9LrZ4vKp8sYd3NfB6jUe1G";
export const SECRET_KEY = "bench-secret-key-Wf3Kp9Xt6Bq2Mz7Lc4Nv8Rh5J";

/** A port that was free a moment ago (the service is given it explicitly, so /readyz can be polled from spawn). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** Milliseconds from spawn to the first 200 of GET /readyz. */
  readyMs: number;
  /** Milliseconds from spawn to the "service started" log line (after demo seeding), if seen. */
  startedLogMs: number | null;
  /** SIGTERM to the process group; resolves when every process of the group is gone. */
  stop(): Promise<void>;
  output(): string;
}

export interface ServiceSpec {
  /** The command and its arguments, e.g. [process.execPath, "dist/src/main.js", "api"] or ["npm", "start"]. */
  command: string[];
  env: Record<string, string | undefined>;
  port: number;
  readyTimeoutMs?: number;
}

/**
 * Node options for bench children from a variable such as BENCH_SERVICE_NODE_ARGS (the services) or
 * BENCH_HELPER_NODE_ARGS (the helpers), e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"; none when it is unset.
 */
export function nodeArgsFromEnv(name: string): string[] {
  return (process.env[name] ?? "").split(/\s+/).filter(Boolean);
}

/** The environment a bench child starts from: ours, minus what would change the service's mode. */
export function baseEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of [
    "DATABASE_URL",
    "NODE_OPTIONS",
    "PORT",
    "DATA_DIR",
    "DEMO",
    "SIMULATORS",
    "NODE_ENV",
    "LOG_LEVEL",
    "ADMIN_TOKEN",
    "SECRET_KEY",
  ])
    delete env[k];
  return env;
}

/**
 * Spawns the service in its own process group (so `npm start`'s node grandchild is stopped with it) and
 * waits for /readyz to answer 200, polling every 10 ms.
 */
export async function startService(spec: ServiceSpec): Promise<ServiceProcess> {
  const started = wallNow();
  const [cmd, ...args] = spec.command;
  const child = spawn(cmd, args, {
    cwd: PROJECT_ROOT,
    env: { ...spec.env, PORT: String(spec.port) },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let startedLogMs: number | null = null;
  const keep = (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    if (startedLogMs === null && text.includes("service started")) startedLogMs = wallNow() - started;
    out = (out + text).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  // BENCH_SERVICE_LOG=FILE keeps every line the bench's services print (appended), to read an error afterwards.
  const logFile = process.env.BENCH_SERVICE_LOG;
  if (logFile) {
    const sink = createWriteStream(logFile, { flags: "a" });
    child.stdout?.pipe(sink, { end: false });
    child.stderr?.pipe(sink, { end: false });
  }
  const url = `http://127.0.0.1:${spec.port}`;
  const stop = () => stopGroup(child);
  const deadline = started + (spec.readyTimeoutMs ?? 120_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with code ${child.exitCode} before ready:\n${out}`);
    const ok = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (wallNow() > deadline) {
      await stop();
      throw new Error(`service not ready within ${spec.readyTimeoutMs ?? 120_000} ms:\n${out}`);
    }
    await sleep(10);
  }
  const readyMs = wallNow() - started;
  return {
    child,
    url,
    readyMs,
    get startedLogMs() {
      return startedLogMs;
    },
    stop,
    output: () => out,
  };
}

/** Waits (up to `timeoutMs`) for the "service started" log line; demo seeding runs after /readyz is up. */
export async function waitStartedLog(s: ServiceProcess, timeoutMs = 60_000): Promise<number | null> {
  const until = Date.now() + timeoutMs;
  while (s.startedLogMs === null && Date.now() < until && s.child.exitCode === null) await sleep(10);
  return s.startedLogMs;
}

async function stopGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pid, "SIGTERM");
  const until = Date.now() + 40_000;
  while (alive() && Date.now() < until) await sleep(25);
  if (alive()) process.kill(-pid, "SIGKILL");
  while (alive()) await sleep(25);
}
