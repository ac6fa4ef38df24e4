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
      { query, variables },
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
