import { CloseCode } from "graphql-ws";
import type { WebSocket } from "ws";

/** How long an opened websocket may go without connection_init (graphql-ws's own default). */
export const INIT_WAIT_MS = 3_000;

/**
 * The wait for connection_init on /graphql, in place of graphql-ws's. Its timer closed a socket (4408
 * "Connection initialisation timeout") whenever it ran before the socket was read, and a process starved of CPU
 * runs the expired timers of an event-loop turn before it reads its sockets: a client that had sent its
 * connection_init at once was told it was too slow, and reconnected, adding load where there was too much
 * already. Here, once the wait is over, the verdict is given in the check phase of that turn, after its socket
 * reads: a connection_init that had arrived is counted.
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
