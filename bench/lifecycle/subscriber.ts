// The checkout page's subscriber in the lifecycle bench: one graphql-ws client per payment, following
// transactionUpdated with the payment's client token. As the hosted page's watchTransaction does
// (src/checkout/public/checkout.js), a socket that drops, or a stream that ends before a terminal state, is opened
// again after 200 ms × 2^n (at most 5 s), with lastEventId once an event came. Every socket is logged, so a
// payment whose SUCCESS never came shows what each of its sockets did.
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { wallNow } from "../support/timing.js";

const SUBSCRIPTION = `subscription($id: ID!, $last: ID) {
  transactionUpdated(transactionId: $id, lastEventId: $last) { id type transaction { status } }
}`;
const TERMINAL = ["SUCCESS", "FAILED", "EXPIRED"];

/** One socket of a subscriber (wall clock ms; null = did not happen). */
export interface SocketTry {
  startedAt: number;
  /** The socket opened (graphql-ws sends connection_init at once). */
  openedAt: number | null;
  /** The server acknowledged the connection (connection_ack). */
  connectedAt: number | null;
  /** Results received (any status, errors too). */
  results: number;
  completedAt: number | null;
  closedAt: number | null;
  /** Close code and reason, e.g. "4408 Connection initialisation timeout". */
  close: string | null;
  /** Why this socket was given up: the socket closed under the subscription, or an error answer. */
  error: string | null;
}

/** What a subscriber writes on its payment. */
export interface Followed {
  transactionId: string | null;
  /** When the subscriber saw SUCCESS. */
  seenAt: number | null;
  /** Terminal status the subscriber saw other than SUCCESS. */
  seenOther: string | null;
  /** An error answer of the service (not a dropped socket: that is reopened). */
  error: string | null;
  sockets: SocketTry[];
}

type Update = { transactionUpdated: { id: string; transaction: { status: string } } };

/** A subscriber's error: an Error, a CloseEvent (code and reason) or GraphQL errors. */
export function describe(e: unknown): string {
  if (e instanceof Error) return e.message;
  const close = e as { code?: unknown; reason?: unknown } | null;
  if (typeof close?.code === "number") return `socket closed ${close.code} ${String(close.reason ?? "")}`.trim();
  return JSON.stringify(e).slice(0, 200);
}

/** The subscribers of the load generator; `stopAll` ends those still following (at the end of a step). */
export class Subscribers {
  private readonly running = new Set<() => void>();

  get open(): number {
    return this.running.size;
  }

  stopAll(): void {
    for (const stop of [...this.running]) stop();
  }

  follow(api: string, p: Followed, clientToken: string): void {
    let client: Client | null = null;
    let timer: NodeJS.Timeout | null = null;
    let failures = 0;
    let lastEventId: string | undefined;
    const stop = () => {
      this.running.delete(stop);
      if (timer !== null) clearTimeout(timer);
      void client?.dispose();
      client = null;
    };
    const again = () => {
      if (!this.running.has(stop)) return;
      void client?.dispose();
      client = null;
      timer = setTimeout(open, Math.min(5000, 200 * 2 ** failures++));
    };
    const open = () => {
      timer = null;
      const t = newTry();
      p.sockets.push(t);
      client = connect(api, clientToken, t);
      client.subscribe<Update>(
        { query: SUBSCRIPTION, variables: { id: p.transactionId, ...(lastEventId ? { last: lastEventId } : {}) } },
        {
          next: (v) => {
            t.results++;
            const e = v.data?.transactionUpdated;
            if (!e) {
              p.error ??= `subscriber: ${JSON.stringify(v.errors).slice(0, 200)}`;
              t.error ??= p.error;
              lastEventId = undefined;
              return again();
            }
            lastEventId = e.id;
            failures = 0;
            if (e.transaction.status === "SUCCESS") p.seenAt ??= wallNow();
            else if (TERMINAL.includes(e.transaction.status)) p.seenOther = e.transaction.status;
            if (TERMINAL.includes(e.transaction.status)) stop();
          },
          error: (err) => {
            t.error ??= describe(err);
            // GraphQL errors are the service's answer; a CloseEvent is a dropped socket, which a page reopens.
            if (Array.isArray(err)) p.error ??= `subscriber: ${t.error}`;
            again();
          },
          complete: () => {
            t.completedAt ??= wallNow();
            if (p.seenAt === null && p.seenOther === null) again();
            else stop();
          },
        },
      );
    };
    this.running.add(stop);
    open();
  }
}

function newTry(): SocketTry {
  return {
    startedAt: wallNow(),
    openedAt: null,
    connectedAt: null,
    results: 0,
    completedAt: null,
    closedAt: null,
    close: null,
    error: null,
  };
}

function connect(api: string, clientToken: string, t: SocketTry): Client {
  return createClient({
    url: `${api.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { clientToken },
    retryAttempts: 0,
    lazy: true,
    on: {
      opened: () => (t.openedAt ??= wallNow()),
      connected: () => (t.connectedAt ??= wallNow()),
      closed: (e) => {
        t.closedAt ??= wallNow();
        const { code, reason } = (e ?? {}) as { code?: number; reason?: string };
        t.close ??= `${code ?? "?"} ${reason ?? ""}`.trim();
      },
    },
  });
}
