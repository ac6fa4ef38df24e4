import { CloseCode } from "graphql-ws";
import type { WebSocket } from "ws";

/** How long an opened websocket may go without connection_init (graphql-ws's own default). */
export const INIT_WAIT_MS = 3_000;

/**
 * The wait for connection_init on /graphql, in place of graphql-ws's. Its timer closed a socket (4408
 * "Connection initialisation timeout") whenever it ran before the socket was read, and a process starved of CPU
 * runs every expired timer of an event-loop turn before it reads a single socket: on a busy machine clients that
 * had sent their connection_init at once were told they were too slow, by the thousand (the lifecycle bench, one
 * `serve` at 400/s beside other work), and reconnected, which added to the load. Here, once the wait is over,
 * the verdict is given in the check phase of that turn, after its socket reads: a connection_init that had
 * arrived is counted.
 */
export class InitWait {
  private readonly initialised = new WeakSet<object>();

  constructor(private readonly waitMs = INIT_WAIT_MS) {}

  /** A socket has just opened: it has `waitMs` to send connection_init. */
  watch(socket: WebSocket): void {
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (this.initialised.has(socket) || socket.readyState !== socket.OPEN) return;
          socket.close(CloseCode.ConnectionInitialisationTimeout, "Connection initialisation timeout");
        }),
      this.waitMs,
    );
    socket.once("close", () => clearTimeout(timer));
  }

  /** connection_init arrived on this socket (before its credentials are checked). */
  received(socket: object): void {
    this.initialised.add(socket);
  }
}
