import type { Server, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import ipaddr from "ipaddr.js";
import type { HttpLimits } from "../config.js";
import type { Logger } from "../logger.js";
import { isTrustedProxy } from "../auth/client-address.js";

/**
 * Caps on open TCP connections per listener and per client address, applied as a connection arrives and
 * before a byte of it is parsed, plus short request timers, so half-sent requests cannot hold every file
 * descriptor of the process (docs/decisions/0142-connection-caps-and-request-timers.md).
 */

/** A refusal is logged once per address (or once for the listener's total) in this much time. */
export const REFUSAL_LOG_QUIET_MS = 60_000;
/** Addresses whose last refusal line is remembered; beyond it the oldest are forgotten. */
const REMEMBERED_ADDRESSES = 10_000;

/** Node's request timers for createServer. The check runs often enough to close a request soon after its deadline. */
export function httpServerOptions(limits: HttpLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

/**
 * What one client is counted as: an IPv4 address (also when it arrives IPv4-mapped on a dual-stack socket), or
 * an IPv6 /64, because one subscriber usually holds a whole /64 and could otherwise open the cap per address.
 */
export function addressKey(remote: string): string {
  if (!ipaddr.isValid(remote)) return remote;
  const parsed = ipaddr.parse(remote);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${new ipaddr.IPv6([...v6.parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}

/**
 * Says whether a refusal of `key` deserves a log line: the first one does, then one per quiet period at most,
 * carrying how many were refused since the previous line.
 */
export class RefusalLog {
  private readonly last = new Map<string, { at: number; refused: number }>();

  constructor(
    private readonly now: () => number,
    private readonly quietMs = REFUSAL_LOG_QUIET_MS,
  ) {}

  /** The number of refusals the line reports, or null when this refusal is only counted. */
  refused(key: string): number | null {
    const t = this.now();
    const seen = this.last.get(key);
    if (seen !== undefined && t - seen.at < this.quietMs) {
      seen.refused++;
      return null;
    }
    const refused = (seen?.refused ?? 0) + 1;
    this.last.delete(key);
    this.last.set(key, { at: t, refused: 0 });
    if (this.last.size > REMEMBERED_ADDRESSES) this.last.delete(this.last.keys().next().value as string);
    return refused;
  }
}

/**
 * Applies the caps to one listener (`name` says which in the log: public, operator). A trusted proxy
 * (TRUSTED_PROXIES) is not capped per address: it carries every client behind it, and a connection's client is
 * only known from its request headers, after the cap has acted; the listener's total still holds
 * (docs/decisions/0168-trusted-proxies.md).
 */
export function capConnections(
  server: Server,
  limits: HttpLimits,
  logger: Logger,
  name: string,
  now: () => number,
  trustedProxies: readonly string[] = [],
): void {
  const log = new RefusalLog(now);
  // Node resets connections over maxConnections itself, before any JavaScript socket exists, and says so.
  server.maxConnections = limits.maxConnections;
  server.on("drop", () => {
    const refused = log.refused("");
    if (refused !== null)
      logger.warn(
        { listener: name, limit: limits.maxConnections, refused },
        "connection limit of this listener reached: new connections are closed at once",
      );
  });
  if (limits.maxConnectionsPerAddress === 0) return;
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const remote = socket.remoteAddress;
    // No address: the peer is already gone.
    if (remote === undefined) return void socket.destroy();
    if (isTrustedProxy(remote, trustedProxies)) return;
    const key = addressKey(remote);
    const n = open.get(key) ?? 0;
    if (n >= limits.maxConnectionsPerAddress) {
      // A reset frees the descriptor at once and leaves no TIME_WAIT behind on our side.
      socket.resetAndDestroy();
      const refused = log.refused(key);
      if (refused !== null)
        logger.warn(
          { listener: name, address: key, limit: limits.maxConnectionsPerAddress, refused },
          "connection limit per address reached: further connections from this address are closed at once",
        );
      return;
    }
    open.set(key, n + 1);
    socket.once("close", () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
  });
}

/**
 * A warning for the start-up log when the listeners' caps together would let connections use more than four
 * fifths of the open-files limit (the rest is for the database, upstream calls and files), or null.
 */
export function descriptorWarning(limits: HttpLimits, listeners: number): string | null {
  const fd = limits.openFilesLimit;
  if (fd === null || listeners * limits.maxConnections <= 0.8 * fd) return null;
  return (
    `HTTP_MAX_CONNECTIONS=${limits.maxConnections} on ${listeners} listener(s) exceeds 80% of this process's ` +
    `open-files limit (${fd}): the process may run out of descriptors before the cap applies; lower ` +
    `HTTP_MAX_CONNECTIONS or raise the hard limit (ulimit -Hn, LimitNOFILE, docker --ulimit nofile)`
  );
}
