import PinoPretty from "pino-pretty";
import type { DestinationStream } from "pino";

/** Keys a human line never shows: pino's own, and what the message already says (`activity`, a request's parts). */
const UNSAID = new Set([
  "level",
  "time",
  "pid",
  "hostname",
  "service",
  "msg",
  "err",
  "activity",
  "req",
  "res",
  "responseTime",
]);
const ERROR_LEVEL = 50;

const short = (v: unknown): string => {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 160 ? `${s.slice(0, 157)}…` : s;
};

/**
 * One log record as a person reads it: the message, then the other fields as `key=value`, then an error's
 * message. A stack only at error level and above: a warning is an expected condition, a bug should look like one.
 */
export function humanLine(log: Record<string, unknown>, messageKey = "msg"): string {
  let line = String(log[messageKey] ?? "");
  for (const [k, v] of Object.entries(log)) if (!UNSAID.has(k) && v !== undefined) line += ` ${k}=${short(v)}`;
  const err = log.err as { message?: unknown; stack?: unknown } | undefined;
  if (err !== undefined && err !== null) {
    line += ` — ${String(err.message ?? short(err))}`;
    if (Number(log.level) >= ERROR_LEVEL && typeof err.stack === "string") line += `\n${err.stack}`;
  }
  return line;
}

/**
 * Readable lines for development and the demo (`LOG_FORMAT=pretty`): time, level, one line per record. Written
 * synchronously, so a line logged just before a start-up failure is printed before its one-line message.
 */
export function prettyDestination(colorize: boolean): DestinationStream {
  return PinoPretty({
    sync: true,
    colorize,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname,service",
    // Every field is in the line humanLine builds; `err` too (not pino-pretty's multi-line error block).
    hideObject: true,
    errorLikeObjectKeys: [],
    messageFormat: (log, messageKey) => humanLine(log, messageKey),
  });
}
