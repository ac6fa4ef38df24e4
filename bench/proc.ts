// Child processes and throwaway databases for the load bench: every server and the load generator run in
// their own process, so none shares an event loop with another.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { processTree } from "../src/gateway-link/process-tree.js";

const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/** dist/bench/<name>.js next to this file (the bench runs compiled). */
export function benchScript(name: string): string {
  return fileURLToPath(new URL(`./${name}.js`, import.meta.url));
}

/** The service's entry; BENCH_SERVICE_MAIN points the bench at another build (before/after comparisons). */
export function serviceMain(): string {
  return process.env.BENCH_SERVICE_MAIN ?? fileURLToPath(new URL("../src/main.js", import.meta.url));
}

export interface Child {
  proc: ChildProcess;
  /** stderr (and stdout unless captured) of the child, for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `node <script> ...args` with the same Node binary as this process. */
export function spawnNode(script: string, args: string[], env: Record<string, string>, nodeArgs: string[] = []): Child {
  const proc = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-20_000);
  };
  proc.stderr?.on("data", keep);
  proc.stdout?.on("data", keep);
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  return {
    proc,
    output: () => out,
    async stop(graceMs = 10_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A port free right now on 127.0.0.1 (the child binds it a moment later). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Polls `url` until it answers 2xx; fails early when the child exits. */
export async function waitReady(url: string, child: Child, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.proc.exitCode !== null)
      throw new Error(`process exited (${child.proc.exitCode}) before ${url} answered:\n${child.output()}`);
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > until) throw new Error(`${url} did not answer within ${timeoutMs} ms:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface BenchDb {
  url: string;
  drop(): Promise<void>;
}

/** A fresh pqr_bench_* database on the local PostgreSQL. */
export async function createBenchDb(): Promise<BenchDb> {
  const name = `pqr_bench_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  return {
    url: PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`).catch(() => undefined);
      await c.end();
    },
  };
}

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux; clock ticks of 10 ms). */
/** CPU time (ms) of a process tree: each live process's own time plus what it reaped of exited children. */
export function treeCpuMs(rootPid: number | null): number {
  if (rootPid === null) return 0;
  let ticks = 0;
  for (const p of processTree(rootPid)) {
    try {
      const stat = readFileSync(`/proc/${p.pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      // exited meanwhile: its time is in its parent's reaped-children figure
    }
  }
  return ticks * 10;
}

/** CPU time of the whole machine (every process, every core: user, nice, system, irq, softirq), in ms. */
export function machineCpuMs(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0];
  const [user, nice, system, , , irq, softirq] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq) * 10;
}

export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
