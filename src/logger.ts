import { pino, type DestinationStream, type Logger } from "pino";
import type { Config } from "./config.js";

export type { Logger };

const REDACTED = "[Redacted]";
/** Request headers that carry credentials (API keys, bearer tokens, cookies): never written to a log. */
const SECRET_HEADERS: readonly string[] = ["x-api-key", "authorization", "proxy-authorization", "cookie"];
/** A query parameter's name is logged when it looks like a name; anything else might be a bare token. */
const PLAIN_NAME = /^[A-Za-z0-9_.-]{1,40}$/;

/**
 * `destination`: where the lines go (commands.ts passes the readable one in development; tests read them from a
 * stream); standard output as JSON by default.
 */
export function createLogger(config: Pick<Config, "logLevel">, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    base: { service: "payment-qr" },
    // A second line of defence for any log call that passes a raw request or response.
    redact: [...SECRET_HEADERS.map((h) => `req.headers["${h}"]`), 'res.headers["set-cookie"]'],
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/** A URL as logged: the path, and each query parameter with its value replaced (`?token=[Redacted]`). */
export function logSafeUrl(url: string): string {
  const at = url.indexOf("?");
  if (at < 0) return url;
  const params = url
    .slice(at + 1)
    .split("&")
    .filter((p) => p !== "")
    .map((p) => {
      const name = p.split("=", 1)[0];
      return PLAIN_NAME.test(name) ? `${name}=${REDACTED}` : REDACTED;
    });
  return `${url.slice(0, at)}?${params.join("&")}`;
}
