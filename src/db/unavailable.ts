import { ConnectionException } from "@mikro-orm/core";

/** Socket-level failures the `pg` driver passes on when the server cannot be reached. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
const DRIVER_MESSAGES = new RegExp(
  [
    "Connection terminated",
    "timeout exceeded when trying to connect",
    "Client has encountered a connection error",
    "Client was closed",
    "the database system is (starting up|shutting down|in recovery mode)",
    "terminating connection due to administrator command",
  ].join("|"),
  "i",
);

/**
 * The database could not be reached or dropped the connection (restart, failover, network): the request
 * may succeed if retried, so it is answered 503 SERVICE_UNAVAILABLE rather than 500 INTERNAL. Follows
 * `cause` a few levels (the ORM wraps driver errors); an upstream HTTP client's "fetch failed" is not a
 * database error and is not followed.
 */
export function databaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e !== null && typeof e === "object"; depth++) {
    if (e instanceof ConnectionException) return true;
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (message === "fetch failed") return false;
    if (typeof code === "string" && (NETWORK_CODES.has(code) || code.startsWith("08") || /^57P0[1-3]$/.test(code)))
      return true;
    if (typeof message === "string" && DRIVER_MESSAGES.test(message)) return true;
    e = cause;
  }
  return false;
}
