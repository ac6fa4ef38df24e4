import { describe, it, expect, afterEach } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { LOCK_FILE, takeDataDirLock, type Holder } from "../../src/db/data-dir-lock.js";
import { StartupError } from "../../src/errors.js";

/**
 * DATA_DIR's lock (src/db/data-dir-lock.ts) as starters meet it: a live holder refuses them, a dead one's lock
 * is taken over, and of several starters racing for a stale lock exactly one wins.
 */

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), "pqr-lock-"));
  dirs.push(d);
  return d;
}

/** A lock file as another process would have left it. */
function writeLock(dir: string, h: Partial<Holder>): void {
  const record: Holder = {
    pid: 1,
    host: hostname(),
    bootId: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
    startTime: null,
    nonce: Math.random().toString(16).slice(2),
    since: "2026-01-01T00:00:00.000Z",
    ...h,
  };
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify(record), { mode: 0o600 });
}

const startTimeOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] as string;
};

/** A live process that is not this one (a stand-in for another service). */
function otherProcess(): ChildProcess {
  const c = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  children.push(c);
  return c;
}

const holderOf = (dir: string) => JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8")) as Holder;

describe("DATA_DIR's lock", () => {
  it("refuses a starter while its holder runs, naming the holder's pid, and is free again once released", async () => {
    const dir = freshDir();
    const other = otherProcess();
    writeLock(dir, { pid: other.pid, startTime: startTimeOf(other.pid as number) });
    const refused = await takeDataDirLock(dir).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StartupError);
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^DATA_DIR ${dir} is in use by process ${other.pid} \\(since .*\\): stop that process, or set DATA_DIR`,
      ),
    );
    // The same process asking twice is refused too: two services in one process would open the database twice.
    rmSync(join(dir, LOCK_FILE));
    const lock = await takeDataDirLock(dir);
    await expect(takeDataDirLock(dir)).rejects.toThrow(`in use by process ${process.pid}`);
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
    (await takeDataDirLock(dir)).release();
  });

  it.each([
    ["its pid is gone", async () => ({ pid: await deadPid() })],
    [
      "its pid now belongs to another process (another start time)",
      () => ({ pid: otherProcess().pid, startTime: "1" }),
    ],
    ["it was taken before the machine last booted", () => ({ pid: process.pid, bootId: "an-earlier-boot" })],
  ])("takes over a lock whose holder is gone: %s", async (_why, holder) => {
    const dir = freshDir();
    writeLock(dir, await holder());
    const lock = await takeDataDirLock(dir);
    expect(holderOf(dir)).toEqual(lock.holder);
    expect(lock.holder.pid).toBe(process.pid);
    lock.release();
  });

  it("takes over an unreadable lock file left long ago, but waits on one seconds old (it may be being written)", async () => {
    const dir = freshDir();
    writeFileSync(join(dir, LOCK_FILE), "");
    const started = Date.now();
    const lock = await takeDataDirLock(dir);
    // The file was new: the starter waited for it to become old enough to judge (5 s).
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_000);
    lock.release();
    writeFileSync(join(dir, LOCK_FILE), "{not json");
    utimesSync(join(dir, LOCK_FILE), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    (await takeDataDirLock(dir)).release();
  });

  it("refuses a lock held on another host, which it cannot check, and says how to clear it", async () => {
    const dir = freshDir();
    writeLock(dir, { pid: 4242, host: "another-host" });
    await expect(takeDataDirLock(dir)).rejects.toThrow(
      `in use by process 4242 on host another-host (since 2026-01-01T00:00:00.000Z), which this host cannot check: ` +
        `stop that process (if it is gone, delete ${join(dir, LOCK_FILE)}), or set DATA_DIR`,
    );
  });

  it("of several starters racing for a stale lock, exactly one wins, round after round", async () => {
    const dir = freshDir();
    // Round 0: a holder killed with SIGKILL leaves its lock behind.
    const first = await starters(dir, 1, 0);
    expect(first.map((r) => r.outcome)).toEqual(["won"]);
    for (let round = 1; round <= 3; round++) {
      const results = await starters(dir, 5, round);
      const winners = results.filter((r) => r.outcome === "won");
      expect({ round, winners: winners.length }).toEqual({ round, winners: 1 });
      for (const r of results.filter((x) => x.outcome !== "won"))
        expect(r.outcome).toContain(`is in use by process ${winners[0]?.pid}`);
      // Every winner was killed (SIGKILL): its lock stays, stale, for the next round.
      expect(holderOf(dir).pid).toBe(winners[0]?.pid);
    }
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
  }, 60_000);
});

/** A pid no process has now. */
async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((r) => c.once("exit", r));
  return c.pid as number;
}

/**
 * `n` processes that each load the lock module, wait for the same instant, and take the lock; a winner holds
 * it until killed with SIGKILL (no release), once every starter has answered.
 */
async function starters(dir: string, n: number, round: number): Promise<{ pid: number; outcome: string }[]> {
  const at = Date.now() + 1_500;
  const script =
    `const { takeDataDirLock } = await import(${JSON.stringify(join(process.cwd(), "dist/src/db/data-dir-lock.js"))});` +
    `await new Promise((r) => setTimeout(r, ${at} - Date.now()));` +
    `try { await takeDataDirLock(${JSON.stringify(dir)}); console.log("won"); setInterval(() => {}, 1000); }` +
    `catch (e) { console.log(e.message); }`;
  const procs = Array.from({ length: n }, () => {
    const c = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(c);
    return c;
  });
  const results = await Promise.all(
    procs.map(
      (c) =>
        new Promise<{ pid: number; outcome: string }>((resolve) => {
          let out = "";
          c.stdout?.on("data", (d: Buffer) => {
            out += d.toString();
            if (out.includes("\n")) resolve({ pid: c.pid as number, outcome: out.trim() });
          });
        }),
    ),
  );
  for (const c of procs) c.kill("SIGKILL");
  await Promise.all(
    procs.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once("exit", r)))),
  );
  expect({ round, answered: results.length }).toEqual({ round, answered: n });
  return results;
}
