import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../config.js";
import { StartupError } from "../errors.js";
import { createWhole } from "./data-dir.js";

/**
 * One process per data directory (docs/decisions/0166-one-process-per-data-directory.md). The lock is a file,
 * DATA_DIR/service.lock, naming its holder (pid, the pid's start time in /proc, boot id, host). It comes into
 * being whole or not at all — written beside, then hard-linked to its name, which fails if the name exists —
 * so exactly one starter takes a free lock. A lock whose holder is gone (no such pid, a pid since reused by
 * another process, an earlier boot) is removed only by the starter that holds the claim on that lock
 * (`service.lock.claim-<digest of its bytes>`, taken the same way), after reading under the claim that the
 * lock is still the dead one; every starter then races for the free name again, and one wins.
 */

export const LOCK_FILE = "service.lock";

/** Who holds (or claims) the lock, as written in the file. */
export interface Holder {
  pid: number;
  host: string;
  /** The kernel's boot id (Linux): a lock from an earlier boot is stale whatever its pid. */
  bootId: string | null;
  /** Field 22 of /proc/<pid>/stat (Linux): tells the holder from a later process given the same pid. */
  startTime: string | null;
  /** Makes every lock's bytes unique, so its digest names this lock and no other. */
  nonce: string;
  since: string;
}

export interface DataDirLock {
  readonly file: string;
  readonly holder: Holder;
  /** Removes the lock if it is still this process's; also run when the process exits. Idempotent. */
  release(): void;
}

/**
 * Whether this process writes DATA_DIR and so must be its only one: the embedded database (serve without
 * DATABASE_URL) or demo mode's demo.json (serve with DEMO on). api and worker processes on DATABASE_URL do
 * not write it (they may read the generated secrets, written atomically), and many of them run side by side.
 */
export function ownsDataDir(config: Pick<Config, "databaseUrl" | "demo">, role: string): boolean {
  return role === "serve" && (config.databaseUrl === null || config.demo);
}

/** Takes DATA_DIR's lock when this process owns the directory (`ownsDataDir`); a one-line StartupError if held. */
export async function lockDataDir(
  config: Pick<Config, "databaseUrl" | "demo" | "dataDir">,
  role: string,
): Promise<DataDirLock | null> {
  if (!ownsDataDir(config, role)) return null;
  const way =
    config.databaseUrl === null
      ? "set DATA_DIR to another directory, or set DATABASE_URL to run on PostgreSQL"
      : "set DATA_DIR to another directory (demo mode writes its demo.json there)";
  return takeDataDirLock(config.dataDir, way);
}

/** How long a starter waits for another that is removing a stale lock, before it gives up. */
const BUSY_WAIT_MS = 10_000;

export async function takeDataDirLock(
  dataDir: string,
  way = "set DATA_DIR to another directory",
): Promise<DataDirLock> {
  const where = resolve(dataDir);
  const file = join(where, LOCK_FILE);
  const me = selfHolder();
  const until = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    if (place(file, me)) return held(where, file, me);
    const seen = look(file);
    if (seen === null) continue; // released meanwhile: race for it again
    const verdict = judge(seen);
    if (verdict === "alive" || verdict === "elsewhere") throw inUse(where, file, seen.holder as Holder, verdict, way);
    if (verdict === "dead" && (await removeStale(file, seen, me, 0))) continue;
    if (Date.now() > until)
      throw new StartupError(
        `DATA_DIR ${where}: another process has been replacing its stale lock (${file}) for ${BUSY_WAIT_MS / 1000} s: ` +
          `start again, or ${way}`,
      );
    await sleep(20);
  }
}

function inUse(where: string, file: string, h: Holder, verdict: "alive" | "elsewhere", way: string): StartupError {
  if (verdict === "elsewhere")
    return new StartupError(
      `DATA_DIR ${where} is in use by process ${h.pid} on host ${h.host} (since ${h.since}), which this host cannot ` +
        `check: stop that process (if it is gone, delete ${file}), or ${way}`,
    );
  return new StartupError(
    `DATA_DIR ${where} is in use by process ${h.pid} (since ${h.since}): stop that process, or ${way}`,
  );
}

function held(where: string, file: string, me: Holder): DataDirLock {
  const release = (): void => {
    process.off("exit", release);
    // Only this process or the claimant of its lock removes it, and nobody claims a live holder's lock.
    if (look(file)?.holder?.nonce === me.nonce) rmSync(file, { force: true });
  };
  process.on("exit", release);
  sweep(where);
  return { file, holder: me, release };
}

/** What is at a lock (or claim) path: its digest, its holder (null if unreadable) and its age. */
interface Seen {
  key: string;
  holder: Holder | null;
  ageMs: number;
}

function look(path: string): Seen | null {
  let bytes: Buffer;
  let mtimeMs: number;
  try {
    bytes = readFileSync(path);
    mtimeMs = statSync(path).mtimeMs;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  const key = createHash("sha256").update(bytes).digest("hex").slice(0, 24);
  return { key, holder: parseHolder(bytes.toString("utf8")), ageMs: Date.now() - mtimeMs };
}

function parseHolder(text: string): Holder | null {
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    if (!Number.isSafeInteger(h.pid) || (h.pid as number) <= 0 || typeof h.host !== "string") return null;
    if (typeof h.nonce !== "string" || typeof h.since !== "string") return null;
    return { bootId: null, startTime: null, ...h } as Holder;
  } catch {
    return null;
  }
}

type Verdict = "alive" | "dead" | "elsewhere" | "busy";

/**
 * Whether the holder still runs. Another host's pid cannot be checked here ("elsewhere"). An unreadable file
 * is no live holder's (holders' files appear whole), unless it is seconds old: on a filesystem without hard
 * links the file is written in place, and may be read before its bytes are.
 */
function judge(seen: Seen): Verdict {
  const h = seen.holder;
  if (h === null) return seen.ageMs < 5_000 ? "busy" : "dead";
  if (h.host !== hostname()) return "elsewhere";
  const boot = bootId();
  if (h.bootId !== null && boot !== null && h.bootId !== boot) return "dead";
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    // EPERM: the pid exists (another user's process); judged by its start time below.
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return "dead";
  }
  if (h.startTime === null) return "alive";
  const now = procStat(h.pid);
  if (now === null || now.state === "Z" || now.state === "X") return "dead";
  return now.startTime === h.startTime ? "alive" : "dead";
}

/**
 * Removes the stale lock `seen` at `file`, as the one holder of its claim; false when another starter holds
 * that claim now (it is removing the lock). A claim left by a starter that died while holding it is stale
 * in turn, and removed the same way, under a claim of its own.
 */
async function removeStale(file: string, seen: Seen, me: Holder, depth: number): Promise<boolean> {
  const claim = `${file.replace(/\.claim-[0-9a-f]+$/, "")}.claim-${seen.key}`;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (place(claim, me)) {
      try {
        // Under the claim nobody else removes it: if it is still the dead holder's lock, it goes.
        if (look(file)?.key === seen.key) rmSync(file, { force: true });
      } finally {
        rmSync(claim, { force: true });
      }
      return true;
    }
    const other = look(claim);
    if (other === null) continue;
    if (judge(other) !== "dead" || depth >= 3) return false;
    await removeStale(claim, other, me, depth + 1);
  }
  return false;
}

/** Creates `path` holding `h`, whole, if nothing is there: true if this call created it. */
function place(path: string, h: Holder): boolean {
  return createWhole(path, `${JSON.stringify(h)}\n`);
}

/** Leftovers of starters killed mid-step (temporary files, claims), a minute old or more. */
function sweep(where: string): void {
  for (const name of readdirSync(where)) {
    if (!name.startsWith(`${LOCK_FILE}.`)) continue;
    try {
      if (Date.now() - statSync(join(where, name)).mtimeMs > 60_000) rmSync(join(where, name), { force: true });
    } catch {
      // Gone meanwhile, or not a file of ours: nothing to tidy.
    }
  }
}

function selfHolder(): Holder {
  return {
    pid: process.pid,
    host: hostname(),
    bootId: bootId(),
    startTime: procStat(process.pid)?.startTime ?? null,
    nonce: randomBytes(12).toString("hex"),
    since: new Date().toISOString(),
  };
}

function bootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return null;
  }
}

/** State and start time of a process from /proc (Linux); null when there is no such process (or no /proc). */
function procStat(pid: number): { state: string; startTime: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: count the fields after its ")".
    const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: rest[0] ?? "", startTime: rest[19] ?? "" };
  } catch {
    return null;
  }
}
