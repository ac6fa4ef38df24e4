import { pino, type DestinationStream, type Logger } from "pino";
import type { Config } from "./config.js";

export type { Logger };

/** `destination`: where the lines go (main.ts passes the readable one in development); stdout as JSON by default. */
export function createLogger(config: Pick<Config, "logLevel">, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    base: { service: "payment-qr" },
    redact: ['req.headers["x-api-key"]', "req.headers.authorization"],
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
