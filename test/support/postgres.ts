// A private PostgreSQL server for one scenario, so it can be stopped and started under load without
// touching the machine's server on 5432 (other suites use it). initdb refuses to run as root, so the
// server's files belong to the `postgres` system user and its commands run through `runuser`.

import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./cluster.js";

const run = promisify(execFile);

function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin");
  return join(root, versions[0], "bin");
}

async function ids(user: string): Promise<{ uid: number; gid: number }> {
  const [u, g] = await Promise.all([run("id", ["-u", user]), run("id", ["-g", user])]);
  return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

export class PrivatePostgres {
  readonly dir: string;
  readonly data: string;
  port = 0;
  private readonly bin = binDir();
  private asRoot = process.getuid?.() === 0;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "pqr-faults-pg-"));
    this.data = join(this.dir, "data");
  }

  get adminUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private cmd(tool: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
    const exe = join(this.bin, tool);
    return this.asRoot ? run("runuser", ["-u", "postgres", "--", exe, ...args]) : run(exe, args);
  }

  async init(): Promise<void> {
    if (this.asRoot) {
      const { uid, gid } = await ids("postgres");
      chownSync(this.dir, uid, gid);
    }
    this.port = await freePort();
    await this.cmd("initdb", ["-D", this.data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"]);
    await this.start();
  }

  async start(): Promise<void> {
    // Fast and disposable: no fsync; the socket directory is private too.
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
    await this.cmd("pg_ctl", [
      "-D",
      this.data,
      "-l",
      join(this.dir, "server.log"),
      "-o",
      opts,
      "-w",
      "-t",
      "60",
      "start",
    ]);
  }

  /** `fast`: active connections are terminated (FATAL 57P01), as on an operator's restart. */
  async stop(mode: "fast" | "immediate" = "fast"): Promise<void> {
    await this.cmd("pg_ctl", ["-D", this.data, "-m", mode, "-w", "-t", "60", "stop"]);
  }

  async dispose(): Promise<void> {
    await this.stop("immediate").catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
