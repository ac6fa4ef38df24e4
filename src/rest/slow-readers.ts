import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { HttpLimits } from "../config.js";
import type { Logger } from "../logger.js";
import { addressKey, RefusalLog } from "./connection-caps.js";

/**
 * The sending side of every HTTP connection, once its request is in (docs/decisions/0174-slow-readers-bounded.md):
 * Node's request timers stop when a request is complete, so a client that asks for a large answer and never reads
 * it held its connection, and the system's buffers full of that answer, for as long as it liked.
 *
 * - **Send rate.** While answer bytes wait for the client (Node still holds some), the client must take at least
 *   `minSendRate` bytes a second over each window of `sendTimeoutMs`, or the connection is reset.
 * - **Closing.** A connection the server closes (kept-alive and idle, `connection: close`, a refused request) is
 *   half-closed, and reset once the client has closed too, or after `lingerMs` at the latest. A plain close
 *   would leave an orphaned socket that the system keeps sending for minutes (about 6 measured here), its buffers
 *   counted against the host's TCP memory and against no cap of ours; a reset frees them at once.
 * - **Age.** A connection older than `connectionMaxAgeMs` takes no further request: the answer in progress says
 *   `connection: close`, so kept-alive and pipelined connections are renewed; one between answers is closed.
 *
 * Websockets are left alone from their upgrade on: they have their own rules (src/graphql/sockets.ts).
 */

/** What a TCP socket's libuv handle tells of its writes: bytes handed to it, and those the system has not taken. */
interface WriteCounters {
  bytesWritten?: number;
  writeQueueSize?: number;
}

/** Bytes of this connection the system has taken so far (sent, or in its send buffer). */
function takenBy(socket: Socket): number {
  const handle = (socket as unknown as { _handle?: WriteCounters | null })._handle;
  return (handle?.bytesWritten ?? 0) - (handle?.writeQueueSize ?? 0);
}

/**
 * A websocket's connection is the websocket server's from its upgrade on: Node has let go of it (no parser). Not
 * told by an `upgrade` listener: one more would make Node treat `Upgrade:` requests as upgrades on the operator
 * listener too, which has no websocket server.
 */
const upgraded = (socket: Socket): boolean => (socket as unknown as { parser?: unknown }).parser == null;

/** No answer in progress on this connection (Node's own mark of the answer that has the socket). */
const idle = (socket: Socket): boolean => (socket as unknown as { _httpMessage?: unknown })._httpMessage == null;

interface Watched {
  socket: Socket;
  born: number;
  /** The current window while bytes wait: when it began and what the system had taken then. */
  window: { at: number; taken: number } | null;
  /** When the server half-closed it, or null. */
  closingAt: number | null;
  /** Set just before the watchdog resets it: its destroy goes through unchanged. */
  cut: boolean;
  /** Requests begun on it (counted only with an age cap): an aged connection is closed only after a quiet spell. */
  requests: number;
  /** Past its age, when it was first seen between answers, and how many requests had begun then; or null. */
  quietSince: { at: number; requests: number } | null;
}

/** Resets counted since start, by cause (tests and the fault suite read them). */
export interface SlowReaderCounts {
  /** Reset while answer bytes waited: slower than the minimum send rate. */
  slow: number;
  /** Half-closed by the server and reset after the client closed too. */
  closed: number;
  /** Half-closed by the server and reset because the client had not closed its side in time. */
  lingered: number;
}

/** How often the watchdog looks at the connections: a quarter of the window, at most every second. */
export const checkEveryMs = (limits: HttpLimits): number =>
  Math.min(1000, Math.max(100, Math.floor(Math.min(limits.sendTimeoutMs, limits.lingerMs) / 4)));

/**
 * Applies the rules to one listener (`name` says which in the log). Returns the live counts. Its times are the
 * monotonic clock's, not the app's: they are about the network, and a test's clock may jump.
 */
export function boundSlowReaders(server: Server, limits: HttpLimits, logger: Logger, name: string): SlowReaderCounts {
  const now = () => performance.now();
  const counts: SlowReaderCounts = { slow: 0, closed: 0, lingered: 0 };
  const watched = new Map<Socket, Watched>();
  const log = new RefusalLog(now);
  const minTaken = Math.max(1, Math.floor((limits.minSendRate * limits.sendTimeoutMs) / 1000));

  const reset = (w: Watched, cause: keyof SlowReaderCounts) => {
    counts[cause]++;
    w.cut = true;
    watched.delete(w.socket);
    if (cause === "slow") {
      const key = addressKey(w.socket.remoteAddress ?? "");
      const refused = log.refused(key);
      if (refused !== null)
        logger.warn(
          { listener: name, address: key, minSendRate: limits.minSendRate, windowMs: limits.sendTimeoutMs, refused },
          "a client took an answer slower than the minimum send rate: its connection was reset",
        );
    }
    try {
      w.socket.resetAndDestroy();
    } catch {
      w.socket.destroy();
    }
  };

  // Shutting down: connections are closed plainly, as before, so the listener's close is not held up.
  let stopping = false;
  for (const method of ["closeIdleConnections", "closeAllConnections"] as const) {
    const close = server[method].bind(server);
    server[method] = () => {
      stopping = true;
      close();
    };
  }

  server.on("connection", (socket: Socket) => {
    // Refused by the connection caps already (their listener runs first).
    if (socket.destroyed) return;
    const w: Watched = {
      socket,
      born: now(),
      window: null,
      closingAt: null,
      cut: false,
      requests: 0,
      quietSince: null,
    };
    watched.set(socket, w);
    const plain = socket.destroy.bind(socket);
    // Every way Node's HTTP server closes a connection cleanly ends in destroy() without an error: the keep-alive
    // timer, `connection: close` answers (destroySoon), both sides ended, closeIdleConnections. Here it becomes a
    // half-close that the watchdog finishes with a reset.
    socket.destroy = ((error?: Error) => {
      const resetting = (socket as unknown as { resetAndClosing?: boolean }).resetAndClosing === true;
      if (error != null || w.cut || resetting || socket.destroyed || stopping || upgraded(socket)) {
        watched.delete(socket);
        return plain(error);
      }
      // The client closed its side: after our half-close it has read to the end; before it, a reset is what
      // frees what it did not read.
      if (socket.readableEnded) {
        reset(w, "closed");
        return socket;
      }
      if (w.closingAt === null) {
        w.closingAt = now();
        if (!socket.writableEnded) socket.end();
      }
      return socket;
    }) as Socket["destroy"];
    socket.once("close", () => watched.delete(socket));
  });

  // Before the app's own listener: an answer sent at once must already carry the header.
  if (limits.connectionMaxAgeMs > 0)
    server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
      const w = watched.get(req.socket);
      if (w !== undefined) w.requests++;
      if (w !== undefined && now() - w.born >= limits.connectionMaxAgeMs) res.setHeader("connection", "close");
    });

  const timer = setInterval(() => {
    const t = now();
    for (const w of watched.values()) {
      const { socket } = w;
      if (upgraded(socket)) {
        watched.delete(socket);
        continue;
      }
      if (w.closingAt !== null) {
        if (t - w.closingAt >= limits.lingerMs) reset(w, "lingered");
        continue;
      }
      if (socket.writableLength === 0) {
        w.window = null;
        if (limits.connectionMaxAgeMs > 0) closeIfAgedAndQuiet(w, t, limits);
        continue;
      }
      const taken = takenBy(socket);
      if (w.window === null) w.window = { at: t, taken };
      else if (t - w.window.at >= limits.sendTimeoutMs) {
        if (taken - w.window.taken < minTaken) reset(w, "slow");
        else w.window = { at: t, taken };
      }
    }
  }, checkEveryMs(limits));
  timer.unref();
  server.once("close", () => clearInterval(timer));
  return counts;
}

/**
 * Past its age and between answers: closed once no request has begun on it for the keep-alive timeout, as Node
 * closes an idle connection (a client keeps a socket no longer than the timeout it was told, so it never sends on one
 * being closed: closed at once, a client's next request raced the close and failed). A client that keeps sending
 * blank lines keeps Node's own keep-alive timer from ever running out, and its connection would otherwise never end.
 */
function closeIfAgedAndQuiet(w: Watched, t: number, limits: HttpLimits): void {
  if (t - w.born < limits.connectionMaxAgeMs || !idle(w.socket)) return;
  if (w.quietSince === null || w.quietSince.requests !== w.requests) w.quietSince = { at: t, requests: w.requests };
  else if (t - w.quietSince.at >= limits.keepAliveTimeoutMs) w.socket.destroy();
}
