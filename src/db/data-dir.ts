import { chmodSync, linkSync, lstatSync, readdirSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";

/**
 * The data directory's files (docs/decisions/0166-one-process-per-data-directory.md): kept to their owner,
 * and replaced whole.
 */

/**
 * `path` and, for a directory, everything in it: directories 0700, files 0600 (an earlier start, another
 * version or a copy may have left them open). `path` itself is followed when it is a symbolic link — a
 * DATA_DIR reached through one is repaired where it really is; symbolic links inside are left alone (they
 * may point anywhere). `deep: false` repairs `path` alone.
 */
export function ownerOnly(path: string, deep = true): void {
  walk(realpathSync(path), deep);
}

function walk(path: string, deep: boolean): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    if ((stat.mode & 0o777) !== 0o700) chmodSync(path, 0o700);
    if (deep) for (const name of readdirSync(path)) walk(join(path, name), deep);
  } else if ((stat.mode & 0o077) !== 0) chmodSync(path, stat.mode & 0o700);
}

/**
 * Writes `file` (owner-only) through a temporary file beside it and a rename: a reader sees the old content
 * or the new, never half of it (a demo's second terminal reading demo.json while the service rewrites it).
 */
export function writeFileAtomic(file: string, content: string): void {
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    writeFileSync(temp, content, { mode: 0o600, flag: "wx" });
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

/**
 * Creates `file` (owner-only) holding `text`, unless something is there already: true if this call created
 * it. The bytes are written beside and hard-linked to the name, which fails if the name exists, so the file
 * appears whole or not at all and of two callers exactly one creates it. Where the filesystem has no hard
 * links, an exclusive create followed by the write: still one winner, but a reader may see it empty for a
 * moment.
 */
export function createWhole(file: string, text: string): boolean {
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(temp, text, { mode: 0o600, flag: "wx" });
  try {
    linkSync(temp, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw err;
    try {
      writeFileSync(file, text, { mode: 0o600, flag: "wx" });
      return true;
    } catch (inner) {
      if ((inner as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw inner;
    }
  } finally {
    rmSync(temp, { force: true });
  }
}
