import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";

export interface Sub<T> {
  events: T[];
  done: Promise<void>;
  error: unknown;
  close(): void;
}

/** A graphql-ws client subscription collecting every event. */
export function subscribe<T = { transactionUpdated: { id: string; type: string; transaction: { status: string } } }>(
  baseUrl: string,
  connectionParams: Record<string, string>,
  query: string,
  variables: Record<string, unknown> = {},
  /** Which operation of a document of several (graphql-ws sends it as the subscribe message's operationName). */
  operationName?: string,
): { client: Client; sub: Sub<T> } {
  const client = createClient({
    url: `${baseUrl.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: true,
  });
  const sub: Sub<T> = { events: [], done: Promise.resolve(), error: null, close: () => void client.dispose() };
  sub.done = new Promise<void>((resolve) => {
    client.subscribe<T>(
      { query, variables, operationName },
      {
        next: (v) => void (v.data ? sub.events.push(v.data) : (sub.error = v.errors)),
        error: (e) => {
          sub.error = e;
          resolve();
        },
        complete: () => resolve(),
      },
    );
  });
  return { client, sub };
}

export interface RawSocket {
  /** Every message the server sent, parsed. */
  messages: { id?: string; type: string; payload?: unknown }[];
  /** The close code and reason, once closed. */
  closed: Promise<{ code: number; reason: string }>;
  isOpen(): boolean;
  subscribe(id: string, query: string, variables?: Record<string, unknown>): void;
  /** Resolves with the first message (from now on or already received) that matches. */
  next(
    match: (m: RawSocket["messages"][number]) => boolean,
    timeoutMs?: number,
  ): Promise<RawSocket["messages"][number]>;
  close(): void;
}

/**
 * A graphql-transport-ws socket driven by hand: connection_init with `params`, resolved once acknowledged
 * (or closed: then `closed` says how). For tests about the socket itself (close codes, caps, revocation).
 * `localAddress` (e.g. 127.0.0.2) makes the service see another client address over loopback; `headers` go with
 * the upgrade request (X-Forwarded-For, as a proxy in front would send it).
 */
export async function openSocket(
  baseUrl: string,
  params: Record<string, string>,
  opts: { localAddress?: string; headers?: Record<string, string> } = {},
): Promise<RawSocket> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws", opts);
  const messages: RawSocket["messages"] = [];
  const waiters: { match: (m: RawSocket["messages"][number]) => boolean; resolve: (m: never) => void }[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on("error", () => undefined);
  ws.on("message", (data: Buffer) => {
    const m = JSON.parse(data.toString("utf8")) as RawSocket["messages"][number];
    messages.push(m);
    for (const w of [...waiters])
      if (w.match(m)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m as never);
      }
  });
  const sock: RawSocket = {
    messages,
    closed,
    isOpen: () => ws.readyState === WebSocket.OPEN,
    subscribe: (id, query, variables = {}) =>
      ws.send(JSON.stringify({ id, type: "subscribe", payload: { query, variables } })),
    next: (match, timeoutMs = 10_000) => {
      const seen = messages.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const w = { match, resolve: resolve as (m: never) => void };
        waiters.push(w);
        setTimeout(() => reject(new Error(`no matching message within ${timeoutMs} ms`)), timeoutMs).unref();
      });
    },
    close: () => ws.close(1000),
  };
  await new Promise<void>((resolve) => {
    ws.on("open", () => ws.send(JSON.stringify({ type: "connection_init", payload: params })));
    void closed.then(() => resolve());
    void sock
      .next((m) => m.type === "connection_ack")
      .then(
        () => resolve(),
        () => resolve(),
      );
  });
  return sock;
}
