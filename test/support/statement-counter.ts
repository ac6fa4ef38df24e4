// Counts the PostgreSQL statements one HTTP request of an in-process service sends: every request the service's
// HTTP servers receive runs in its own async context, and every statement a `pg` client sends in that context is
// recorded for it. Background work (monitors, the webhook dispatcher, listeners) runs outside any request and is
// not counted.
import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import http from "node:http";
import pg from "pg";

interface RequestRecord {
  marker: string | null;
  statements: string[];
}

const requests = new AsyncLocalStorage<RequestRecord>();
/** The request header naming which record a request's statements go to. */
export const MARKER_HEADER = "x-test-statements";
const records = new Map<string, string[]>();
let installed = false;

/**
 * Installs the hooks (once per test file, before the app starts): `http.Server.prototype.emit` runs each request
 * event inside a context, `pg.Client.prototype.query` records the statement text (BEGIN/COMMIT included), `pg.Pool.prototype.connect` keeps
 * the asking context across the pool's queue.
 */
export function installStatementCounter(): void {
  if (installed) return;
  installed = true;
  const server = http.Server.prototype as unknown as { emit: (event: string | symbol, ...args: unknown[]) => boolean };
  const emit = server.emit;
  server.emit = function (this: unknown, event: string | symbol, ...args: unknown[]): boolean {
    if (event !== "request") return emit.call(this, event, ...args);
    const req = args[0] as http.IncomingMessage;
    const marker = req.headers[MARKER_HEADER];
    const record: RequestRecord = { marker: typeof marker === "string" ? marker : null, statements: [] };
    if (record.marker !== null) records.set(record.marker, record.statements);
    return requests.run(record, () => emit.call(this, event, ...args));
  };
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    const text =
      typeof first === "string" ? first : String((first as { text?: unknown } | null)?.text ?? "(unknown statement)");
    requests.getStore()?.statements.push(text.replace(/\s+/g, " ").trim());
    return query.apply(this, args);
  };
  // A pool with no idle client hands one over later, from whichever client's answer freed it: its callback (the
  // pool's own query runs its statement there) is bound to the context that asked.
  const pool = pg.Pool.prototype as unknown as { connect: (...args: unknown[]) => unknown };
  const connect = pool.connect;
  pool.connect = function (this: unknown, ...args: unknown[]) {
    const cb = args[0];
    return typeof cb === "function"
      ? connect.call(this, AsyncResource.bind(cb as (...a: unknown[]) => unknown))
      : connect.apply(this, args);
  };
}

let n = 0;

/** A fresh marker and the header that carries it; `statementsOf(marker)` reads what that request sent. */
export function marked(): { marker: string; headers: Record<string, string> } {
  const marker = `m${++n}`;
  return { marker, headers: { [MARKER_HEADER]: marker } };
}

export function statementsOf(marker: string): string[] {
  const s = records.get(marker);
  if (s === undefined) throw new Error(`no request carried the marker ${marker}`);
  return s;
}
