import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Server } from "node:http";
import { StartupError } from "./errors.js";
import { databaseUnavailable } from "./db/unavailable.js";

/**
 * Start-up checks whose failure an operator must read as one line (commands.ts prints StartupError's message
 * and exits 1): what is wrong, where, and the setting that fixes it.
 */

/** DATA_DIR must be a directory this process can write (embedded database, demo secrets, demo.json). */
export function checkDataDir(dataDir: string): void {
  const where = resolve(dataDir);
  try {
    mkdirSync(where, { recursive: true });
    if (!statSync(where).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    accessSync(where, constants.W_OK);
  } catch (err) {
    const code = (err as { code?: string }).code ?? "error";
    throw new StartupError(
      `DATA_DIR ${where} is not a writable directory (${code}): create it, or set DATA_DIR to a directory this user can write`,
      { cause: err },
    );
  }
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "(unparseable URL)";
  }
}

/** A database failure during start-up: unreachable → the DATABASE_URL line; anything else passes unchanged. */
export function databaseStartupError(err: unknown, databaseUrl: string | null): unknown {
  if (err instanceof StartupError || !databaseUnavailable(err)) return err;
  const code =
    (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code ?? "connection failed";
  if (databaseUrl === null)
    return new StartupError(`The embedded database stopped answering during start-up (${code})`, { cause: err });
  return new StartupError(
    `Cannot connect to the database at ${redactUrl(databaseUrl)} (${code}): check DATABASE_URL and that PostgreSQL is running there`,
    { cause: err },
  );
}

/** server.listen as a promise that rejects with a StartupError (EADDRINUSE, EACCES, EADDRNOTAVAIL). */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((ok, fail) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const why =
        err.code === "EADDRINUSE"
          ? "the address is already in use"
          : err.code === "EACCES"
            ? "permission denied"
            : (err.code ?? err.message);
      fail(
        new StartupError(
          `Cannot listen on ${host}:${port}: ${why} (${err.code ?? "error"}): stop the other process or set PORT (and HOST)`,
          { cause: err },
        ),
      );
    };
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      ok();
    });
  });
}
