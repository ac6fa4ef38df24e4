import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../support/cluster.js";
import { keepOutput, withOutput } from "../support/child-output.js";
import { statusOf } from "../support/http.js";
import { waitFor } from "../support/wait.js";
import { startTestApp } from "../support/app.js";
import { createTestDatabase } from "../support/db.js";
import { takeDataDirLock } from "../../src/db/data-dir-lock.js";
import type { DemoFile } from "../../src/demo/seed.js";

/**
 * `npm start` twice on one DATA_DIR, as a newcomer does it: the second is refused before it opens anything, and
 * the first keeps its database and demo.json. A DATA_DIR reached through a symbolic link is repaired where it is.
 */

const ENV = { HOST: "127.0.0.1", LOG_LEVEL: "warn" };

interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
}

/** `node dist/src/main.js serve` (the demo default: embedded database) on `dataDir`, until /readyz says 200. */
async function serve(dataDir: string): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, ["dist/src/main.js", "serve"], {
    env: { ...process.env, NODE_OPTIONS: "", ...ENV, PORT: String(port), DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = keepOutput(child);
  await withOutput(output, () =>
    waitFor(async () => (await statusOf(`http://127.0.0.1:${port}/readyz`).catch(() => 0)) === 200, 90_000, 250),
  );
  return { child, port, output };
}

/** A start that should end by itself: its exit code and its output lines (killed after 45 s). */
async function runToExit(dataDir: string): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, ["dist/src/main.js", "serve"], {
    env: { ...process.env, NODE_OPTIONS: "", ...ENV, PORT: String(await freePort()), DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = keepOutput(child);
  const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  clearTimeout(timer);
  return {
    code,
    lines: output()
      .split("\n")
      .filter((l) => l.trim() !== ""),
  };
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((r) => child.once("exit", r));
}

/** Every entry under `dir` (followed from `dir` itself) whose mode lets anyone but the owner in. */
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

describe("one service per data directory", () => {
  const parent = mkdtempSync(join(tmpdir(), "pqr-datadir-"));
  /** Where the data really is, and the symbolic link DATA_DIR names. */
  const real = join(parent, "real");
  const link = join(parent, "data");
  let first: Started;
  let demoBefore: string;

  beforeAll(async () => {
    // As an earlier start (or a copy) may have left it: open to everyone, secrets.json world-readable.
    mkdirSync(real, { mode: 0o755 });
    chmodSync(real, 0o755);
    const secrets = { adminToken: `adm_${"a".repeat(32)}`, secretKey: "s".repeat(43) };
    writeFileSync(join(real, "secrets.json"), JSON.stringify(secrets), { mode: 0o644 });
    chmodSync(join(real, "secrets.json"), 0o644);
    symlinkSync(real, link);
    first = await serve(link);
    demoBefore = readFileSync(join(real, "demo.json"), "utf8");
  }, 120_000);
  afterAll(async () => {
    first?.child.kill("SIGKILL");
    rmSync(parent, { recursive: true, force: true });
  });

  it("repairs a DATA_DIR reached through a symbolic link where it really is (directories 0700, files 0600)", () => {
    expect(lstatSync(real).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(real, "secrets.json")).mode & 0o777).toBe(0o600);
    expect(openToOthers(real)).toEqual([]);
  });

  it("refuses a second serve on the same DATA_DIR: exit 1, one line naming the holder's pid and the way out", async () => {
    // The same directory by its real path: the lock is the directory's, whatever the path to it.
    const second = await runToExit(real);
    expect(second.code).toBe(1);
    expect(second.lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Start-up failed: DATA_DIR ${real} is in use by process ${first.child.pid} \\(since [^)]+\\): ` +
            "stop that process, or set DATA_DIR to another directory, or set DATABASE_URL to run on PostgreSQL$",
        ),
      ),
    ]);
    // The first is untouched: its demo.json still points at it, and it answers.
    expect(readFileSync(join(real, "demo.json"), "utf8")).toBe(demoBefore);
    expect(await statusOf(`http://127.0.0.1:${first.port}/readyz`)).toBe(200);
  }, 60_000);

  it("after the holder is killed (SIGKILL), the next start takes its lock over and serves the same demo tenant", async () => {
    const before = JSON.parse(demoBefore) as DemoFile;
    first.child.kill("SIGKILL");
    await exited(first.child);
    expect(existsSync(join(real, "service.lock"))).toBe(true); // left behind, as after a crash
    const next = await serve(link);
    try {
      const lock = JSON.parse(readFileSync(join(real, "service.lock"), "utf8")) as { pid: number };
      expect(lock.pid).toBe(next.child.pid);
      const demo = JSON.parse(readFileSync(join(real, "demo.json"), "utf8")) as DemoFile;
      expect(demo.keys).toEqual(before.keys);
      expect(demo.baseUrl).toBe(`http://127.0.0.1:${next.port}`);
    } finally {
      // A clean stop releases the lock.
      next.child.kill("SIGTERM");
      await exited(next.child);
    }
    expect(next.child.exitCode).toBe(0);
    expect(existsSync(join(real, "service.lock"))).toBe(false);
  }, 120_000);
});

describe("which processes take the lock", () => {
  it("api and worker processes on DATABASE_URL start beside the holder; a demo serve on DATABASE_URL is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pqr-datadir-"));
    // This test process holds the directory, as a running `npm start` would.
    const held = await takeDataDirLock(dir);
    const db = await createTestDatabase();
    try {
      for (const role of ["api", "worker"] as const) {
        const t = await startTestApp({ DATA_DIR: dir }, { role, dbUrl: db.url });
        await t.stop();
      }
      // demo mode writes demo.json into DATA_DIR: that one is refused (and stopped, should it start).
      const refused = await startTestApp({ DATA_DIR: dir, DEMO: "true" }, { dbUrl: db.url }).then(
        async (t) => void (await t.stop()),
        (err: unknown) => err,
      );
      expect(String(refused)).toContain(`DATA_DIR ${dir} is in use by process ${process.pid}`);
    } finally {
      held.release();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
