import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { startDemoService, type DemoService } from "../support/demo-service.js";
import { AUTH, post } from "../support/app.js";

/**
 * What `npm start` runs, attacked as another local account would: the embedded database must belong to the
 * service process alone — no port to connect to, a socket nobody else can reach or use, files nobody else
 * can read — and an acknowledged write must be on disk.
 */

/** Socket inodes the process holds open. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const target = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return "";
      }
    })();
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1] as string);
  }
  return inodes;
}

/** TCP ports the process listens on (IPv4 and IPv6). */
function listeningPorts(pid: number): number[] {
  const mine = socketInodes(pid);
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== "0A" || !mine.has(f[9] as string)) continue;
      ports.push(parseInt((f[1] as string).split(":")[1] as string, 16));
    }
  }
  return ports;
}

/** Unix socket paths the process listens on. */
function unixSockets(pid: number): string[] {
  const mine = socketInodes(pid);
  return readFileSync("/proc/net/unix", "utf8")
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 8 && mine.has(f[6] as string) && (f[7] as string).startsWith("/"))
    .map((f) => f[7] as string);
}

/** Every entry under `dir` whose mode lets anyone but the owner in. */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  const walk = (p: string) => {
    const s = lstatSync(p);
    if (s.isSymbolicLink()) return;
    if ((s.mode & 0o077) !== 0) found.push(`${p} ${(s.mode & 0o777).toString(8)}`);
    if (s.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
  };
  walk(dir);
  return found;
}

describe("the embedded database belongs to the service process alone", () => {
  let svc: DemoService;
  beforeAll(async () => {
    svc = await startDemoService("sealed", { fresh: true });
    const g = await post(
      `${svc.url}/qr/generate`,
      { amount: 1.5, currency: 840, expiredAfter: 60_000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    expect(g.status).toBe(200);
  }, 120_000);
  afterAll(async () => svc?.dispose());

  it("serves the database on no TCP port: every port it listens on refuses a PostgreSQL client", async () => {
    const ports = listeningPorts(svc.service.pid as number);
    expect(ports).toContain(Number(new URL(svc.url).port)); // HTTP (and the demo's simulated PayWay API)
    for (const port of ports) {
      const c = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres", password: "x" });
      c.on("error", () => undefined);
      const connected = await c.connect().then(
        () => true,
        () => false,
      );
      if (connected) await c.end();
      expect({ port, connected }).toEqual({ port, connected: false });
    }
  });

  it("serves the database on a Unix socket in an owner-only directory, and refuses a client without the start's secret", async () => {
    const [socket] = unixSockets(svc.service.pid as number).filter((p) => p.includes(".s.PGSQL."));
    expect(socket).toBeDefined();
    const dir = dirname(socket as string);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(socket as string).mode & 0o777).toBe(0o600);
    for (const password of [undefined, "postgres", ""]) {
      const c = new pg.Client({ host: dir, port: 5432, user: "postgres", database: "postgres", password });
      c.on("error", () => undefined);
      await expect(c.connect()).rejects.toMatchObject({ code: "28P01" });
    }
  });

  it("keeps DATA_DIR to its owner (directories 0700, files 0600), and repairs it at the next start", async () => {
    expect(openToOthers(svc.service.dataDir)).toEqual([]);
    await svc.service.stop();
    execFileSync("chmod", ["-R", "go+rX", svc.service.dataDir]);
    expect(openToOthers(svc.service.dataDir).length).toBeGreaterThan(10);
    await svc.service.start();
    expect(openToOthers(svc.service.dataDir)).toEqual([]);
  }, 120_000);
});

describe("durable commits on the embedded database", () => {
  it("syncs the WAL to disk for every acknowledged commit (20 inserts, at least 20 fsyncs)", () => {
    // strace (installed by .ci/run) watches the process's own fsync calls.
    expect(spawnSync("strace", ["-V"]).status).toBe(0);
    const dataDir = mkdtempSync(join(tmpdir(), "pqr-durable-"));
    const trace = join(dataDir, "trace.txt");
    const script = `
      import pg from "pg";
      import { startEmbeddedDb } from "./dist/src/db/embedded.js";
      const e = await startEmbeddedDb(${JSON.stringify(join(dataDir, "data"))});
      const c = new pg.Client({ connectionString: e.url });
      await c.connect();
      await c.query("create table t (x int)");
      console.log("BEGIN-INSERTS");
      for (let i = 0; i < 20; i++) await c.query("insert into t values ($1)", [i]);
      console.log("END-INSERTS");
      await c.end();
      await e.stop();`;
    try {
      const run = spawnSync(
        "strace",
        [
          "-f",
          "-qq",
          "-e",
          "trace=fsync,fdatasync,write",
          "-e",
          "signal=none",
          "-o",
          trace,
          process.execPath,
          "--input-type=module",
        ],
        {
          input: script,
          cwd: process.cwd(),
          env: { ...process.env, NODE_OPTIONS: "" },
          encoding: "utf8",
          timeout: 90_000,
        },
      );
      expect(run.status).toBe(0);
      const lines = readFileSync(trace, "utf8").split("\n");
      const from = lines.findIndex((l) => l.includes("BEGIN-INSERTS"));
      const to = lines.findIndex((l) => l.includes("END-INSERTS"));
      expect(from).toBeGreaterThan(-1);
      const syncs = lines.slice(from, to).filter((l) => /\bf(data)?sync\(/.test(l));
      expect(syncs.length).toBeGreaterThanOrEqual(20);
    } finally {
      chmodSync(dataDir, 0o700);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
