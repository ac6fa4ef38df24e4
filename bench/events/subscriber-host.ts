// A forked load generator: holds many graphql-ws subscriptions (one websocket each, as browsers and
// backends would), and notes when each event arrives (wall clock, sub-ms, taken first thing in `next`).
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { serveRequests, type Request } from "../support/ipc.js";
import { wallNow } from "../support/timing.js";

export interface SubSpec {
  /** Global index of this subscriber across all hosts. */
  index: number;
  connectionParams: Record<string, string>;
  query: string;
  variables: Record<string, unknown>;
}

/** One arrival: [subscriber index, event id, receivedAt]. */
export type Receipt = [number, string, number];

interface Held {
  client: Client;
  ended: "error" | "complete" | null;
  error: string | null;
}

const held: Held[] = [];
// A stalled load generator delays receipts too: its own event-loop delay is reported beside the figures.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
let receipts: Receipt[] = [];

function open(url: string, spec: SubSpec): Promise<void> {
  return new Promise((resolve, reject) => {
    const h: Held = { client: null as unknown as Client, ended: null, error: null };
    h.client = createClient({
      url,
      webSocketImpl: WebSocket,
      connectionParams: spec.connectionParams,
      retryAttempts: 0,
      lazy: true,
      on: {
        connected: () => resolve(),
        closed: (e) => (h.ended === null ? reject(new Error(`closed before ack: ${JSON.stringify(e)}`)) : undefined),
      },
    });
    held.push(h);
    h.client.subscribe<{ [field: string]: { id: string } }>(
      { query: spec.query, variables: spec.variables },
      {
        next: (v) => {
          const at = wallNow();
          const payload = v.data ? Object.values(v.data)[0] : undefined;
          if (payload) receipts.push([spec.index, payload.id, at]);
          else h.error = JSON.stringify(v.errors);
        },
        error: (e) => {
          h.ended = "error";
          h.error = e instanceof Error ? e.message : JSON.stringify(e);
        },
        complete: () => void (h.ended ??= "complete"),
      },
    );
  });
}

serveRequests(
  {
    /** Opens every subscription, `concurrency` at a time; resolves once each connection is acknowledged. */
    async open(req: Request) {
      const specs = req.subs as SubSpec[];
      let next = 0;
      const lane = async () => {
        while (next < specs.length) await open(req.url as string, specs[next++]);
      };
      await Promise.all(Array.from({ length: (req.concurrency as number | undefined) ?? 20 }, lane));
      return held.length;
    },
    /** Hands over (and forgets) the arrivals noted since the last drain. */
    drain() {
      const out = receipts;
      receipts = [];
      return out;
    },
    /** Ends every subscription (the server sees the websockets close) and forgets them. */
    async close() {
      await Promise.all(held.splice(0).map((h) => h.client.dispose()));
      receipts = [];
      return true;
    },
    /** Starts a measured phase: forgets the event-loop delay seen so far. */
    resetLoopDelay() {
      loopDelay.reset();
      return true;
    },
    status() {
      const ended = held.filter((h) => h.ended !== null);
      return {
        loopP99Ms: loopDelay.percentile(99) / 1e6,
        loopMaxMs: loopDelay.max / 1e6,
        open: held.length - ended.length,
        ended: ended.length,
        errors: held
          .filter((h) => h.error !== null)
          .slice(0, 5)
          .map((h) => h.error),
      };
    },
  },
  async () => {
    await Promise.all(held.map((h) => h.client.dispose()));
  },
);
