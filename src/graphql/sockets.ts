import type { Principal } from "../auth/principal.js";

/** Close codes this service uses on /graphql websockets (besides graphql-ws's own). */
export const CLOSE = {
  /** The credential is no longer valid (revoked key, expired client token). */
  FORBIDDEN: 4403,
  /** Too many sockets for this credential or address. */
  TOO_MANY: 4429,
  /** The socket reached WS_MAX_LIFETIME_MS (or saw nothing for WS_IDLE_TIMEOUT_MS): reconnect. */
  LIFETIME: 4000,
} as const;

export interface TrackedSocket {
  close(code: number, reason: string): void;
}

interface Entry {
  socket: TrackedSocket;
  principal: Principal;
  bucket: string;
  /** What the server keeps with the socket (credentials, last activity). */
  extra: { lastActive?: number };
  /** Operations running on the socket now. */
  active: () => number;
  timer: NodeJS.Timeout;
  /** Subscribe messages in the current second. */
  window: { at: number; count: number };
}

export interface SocketLimits {
  maxLifetimeMs: number;
  maxSocketsPerPrincipal: number;
  maxSocketsPerIp: number;
  maxSubscriptionsPerSocket: number;
  subscribesPerSecond: number;
}

const principalBucket = (p: Principal): string =>
  p.type === "key" ? `key:${p.keyId}` : p.type === "client" ? `client:${p.transactionId}` : p.type;

/** The key a principal belongs to: its sockets close when the key is revoked. */
const keyOf = (p: Principal): string | null => (p.type === "key" || p.type === "client" ? p.keyId : null);

/**
 * The open websockets of this process with their principals: caps per credential and per address, the
 * lifetime timer (a client token's socket ends when the token does), and re-authorisation when a key is
 * invalidated (revoked: its sockets close with 4403, and with them every stream they carried).
 */
export class SocketRegistry {
  private readonly entries = new Map<TrackedSocket, Entry>();
  private readonly perBucket = new Map<string, number>();
  private readonly perIp = new Map<string, number>();

  constructor(
    private readonly limits: SocketLimits,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** A socket opened from this address: false (not counted) when the address is at its cap. */
  openAddress(ip: string): boolean {
    const n = this.perIp.get(ip) ?? 0;
    if (n >= this.limits.maxSocketsPerIp) return false;
    this.perIp.set(ip, n + 1);
    return true;
  }

  closeAddress(ip: string): void {
    decrement(this.perIp, ip);
  }

  /** Registers an authenticated socket; returns a refusal message when its credential is at its cap. */
  add(socket: TrackedSocket, principal: Principal, extra: Entry["extra"], active: () => number): string | null {
    const bucket = principalBucket(principal);
    if ((this.perBucket.get(bucket) ?? 0) >= this.limits.maxSocketsPerPrincipal)
      return `Too many sockets for this credential (the limit is ${this.limits.maxSocketsPerPrincipal})`;
    const lifetime = this.limits.maxLifetimeMs;
    const tokenLeft = principal.type === "client" ? principal.expiresAt - this.now() : Infinity;
    const timer =
      tokenLeft < lifetime
        ? setTimeout(() => socket.close(CLOSE.FORBIDDEN, "Client token expired"), Math.max(0, tokenLeft))
        : setTimeout(() => socket.close(CLOSE.LIFETIME, "Socket lifetime reached: reconnect"), lifetime);
    timer.unref();
    this.entries.set(socket, { socket, principal, bucket, extra, active, timer, window: { at: 0, count: 0 } });
    this.perBucket.set(bucket, (this.perBucket.get(bucket) ?? 0) + 1);
    return null;
  }

  remove(socket: TrackedSocket): void {
    const e = this.entries.get(socket);
    if (e === undefined) return;
    this.entries.delete(socket);
    clearTimeout(e.timer);
    decrement(this.perBucket, e.bucket);
  }

  extraOf(socket: TrackedSocket): Entry["extra"] | undefined {
    return this.entries.get(socket)?.extra;
  }

  /** Sockets with no operation running and no activity for `ms`. */
  idle(ms: number): TrackedSocket[] {
    const before = this.now() - ms;
    const out: TrackedSocket[] = [];
    for (const e of this.entries.values())
      if (e.active() === 0 && (e.extra.lastActive ?? 0) < before) out.push(e.socket);
    return out;
  }

  /** The principal re-resolved for an operation; a changed one replaces the recorded one. */
  update(socket: TrackedSocket, principal: Principal): void {
    const e = this.entries.get(socket);
    if (e !== undefined) e.principal = principal;
  }

  /**
   * A new operation on this socket (`running` counts it already): a refusal message when the socket is over
   * its subscribe rate or its cap of operations at once.
   */
  startOperation(socket: TrackedSocket, running: number): string | null {
    const e = this.entries.get(socket);
    if (e === undefined) return null;
    const second = Math.floor(this.now() / 1000);
    if (e.window.at !== second) e.window = { at: second, count: 0 };
    if (++e.window.count > this.limits.subscribesPerSecond)
      return `Too many subscribe messages on this socket (the limit is ${this.limits.subscribesPerSecond} a second)`;
    if (running > this.limits.maxSubscriptionsPerSocket)
      return `Too many subscriptions on this socket (the limit is ${this.limits.maxSubscriptionsPerSocket})`;
    return null;
  }

  /** Sockets whose principal belongs to this key (null: every socket). */
  socketsOfKey(keyId: string | null): TrackedSocket[] {
    const out: TrackedSocket[] = [];
    for (const e of this.entries.values()) if (keyId === null || keyOf(e.principal) === keyId) out.push(e.socket);
    return out;
  }

  closeAll(code: number, reason: string): void {
    for (const e of [...this.entries.values()]) e.socket.close(code, reason);
  }
}

function decrement(m: Map<string, number>, k: string): void {
  const n = (m.get(k) ?? 1) - 1;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}
