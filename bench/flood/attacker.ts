// A forked hostile client for the flood section (bench/flood.ts): the floods of issue 15's finding 3 and the
// cost-amplification burst of finding 2, each as fast as this process can drive it, counting what the
// service accepted and what it refused (websocket close codes, graphql-ws `error` messages, HTTP statuses).
import WebSocket from "ws";
import { serveRequests, type Request } from "../support/ipc.js";
import { sleep } from "../support/timing.js";

/** What one flood attempted and how the service answered. */
export interface FloodTally {
  attempts: number;
  accepted: number;
  /** Refusals by how they came: "close 4429", "error RATE_LIMITED: Too many subscribe messages…", "HTTP 400 …". */
  refused: Record<string, number>;
  /** Failures on our side (connect errors, timeouts): not refusals. */
  clientErrors: Record<string, number>;
  /** graphql-ws `next` messages received. */
  messages: number;
}

const tally = (): FloodTally => ({ attempts: 0, accepted: 0, refused: {}, clientErrors: {}, messages: 0 });
const bump = (m: Record<string, number>, k: string) => void (m[k] = (m[k] ?? 0) + 1);

const held: WebSocket[] = [];

/** A refusal message without its numbers, so one kind of refusal is one row ("the limit is 20 a second" → "#"). */
function kind(message: string): string {
  return message.replace(/\d+(\.\d+)?/g, "#").slice(0, 90);
}

type Outcome = { ok: true; ws: WebSocket } | { ok: false; refused?: string; clientError?: string };

/** A graphql-transport-ws socket: connection_init with `params`; resolves on the ack or on the close. */
function connect(url: string, params: Record<string, string>, timeoutMs = 30_000): Promise<Outcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, "graphql-transport-ws");
    let settled = false;
    const done = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const timer = setTimeout(() => {
      done({ ok: false, clientError: "no answer within 30 s" });
      ws.terminate();
    }, timeoutMs);
    ws.on("open", () => ws.send(JSON.stringify({ type: "connection_init", payload: params })));
    ws.on("message", (data) => {
      if (!settled && String(data).includes('"connection_ack"')) done({ ok: true, ws });
    });
    ws.on("close", (code) => done({ ok: false, refused: `close ${code}` }));
    ws.on("error", (err) => done({ ok: false, clientError: (err as NodeJS.ErrnoException).code ?? err.message }));
  });
}

async function openOne(url: string, params: Record<string, string>): Promise<WebSocket> {
  const o = await connect(url, params);
  if (!o.ok) throw new Error(`the attacker's own socket was refused: ${o.refused ?? o.clientError}`);
  held.push(o.ws);
  return o.ws;
}

/** (a) One credential opens sockets as fast as `lanes` connections at a time allow, holding every accepted one. */
async function socketFlood(req: Request): Promise<FloodTally> {
  const t = tally();
  const until = Date.now() + (req.durationMs as number);
  const lane = async () => {
    while (Date.now() < until) {
      t.attempts++;
      const o = await connect(req.url as string, req.params as Record<string, string>);
      if (o.ok) {
        t.accepted++;
        held.push(o.ws);
      } else if (o.refused !== undefined) bump(t.refused, o.refused);
      else bump(t.clientErrors, o.clientError ?? "?");
      // Out of local ports or descriptors: back off a little rather than spin.
      if (!o.ok && o.clientError !== undefined) await sleep(5);
    }
  };
  await Promise.all(Array.from({ length: (req.lanes as number | undefined) ?? 64 }, lane));
  return t;
}

/**
 * Subscribes on `ws` as fast as `perSecond` allows for `durationMs`; each subscribe message takes the next
 * payload from `payloadOf(i)`. `completeAfter`: a subscription that received that many events is completed
 * (so a replay flood can start another one).
 */
async function subscribeFlood(
  sockets: WebSocket[],
  t: FloodTally,
  opts: { durationMs: number; perSecond: number; payloadOf: (i: number) => object; completeAfter?: number },
): Promise<void> {
  const seen = new Map<string, number>();
  for (const ws of sockets) {
    ws.on("message", (data) => {
      const s = String(data);
      // Fast path for the bulk: `{"id":"…","type":"next",…}` counted without parsing the payload.
      if (s.startsWith('{"id":"')) {
        const end = s.indexOf('"', 7);
        const id = s.slice(7, end);
        // A stream refused while it opened (e.g. the replay cap) is a `next` with errors: parsed below.
        if (s.startsWith(',"type":"next"', end + 1) && !s.startsWith(',"type":"next","payload":{"errors"', end + 1)) {
          t.messages++;
          if (opts.completeAfter !== undefined) {
            const n = (seen.get(id) ?? 0) + 1;
            seen.set(id, n);
            if (n === opts.completeAfter && ws.readyState === WebSocket.OPEN) {
              seen.delete(id);
              ws.send(JSON.stringify({ id, type: "complete" }));
            }
          }
          return;
        }
      }
      type Err = { message: string; extensions?: { code?: string } };
      const m = JSON.parse(s) as { type: string; payload?: Err[] | { errors?: Err[] } };
      const errors = m.type === "error" ? (m.payload as Err[]) : (m.payload as { errors?: Err[] })?.errors;
      if (errors?.length) {
        const e = errors[0];
        bump(t.refused, `error ${e?.extensions?.code ?? "?"}: ${kind(e?.message ?? "")}`);
        t.accepted--;
      }
    });
    ws.on("close", (code) => bump(t.refused, `socket closed ${code}`));
  }
  const t0 = Date.now();
  let i = 0;
  let sent = 0;
  // Every 50 ms, each socket sends what keeps it at `perSecond` subscribe messages a second.
  while (Date.now() < t0 + opts.durationMs) {
    const due = Math.floor((opts.perSecond * (Date.now() - t0)) / 1000) + 1;
    const now = due - sent;
    sent = due;
    for (const ws of sockets) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      for (let k = 0; k < now; k++) {
        const n = i++;
        t.attempts++;
        t.accepted++; // taken back when an `error` answers it
        ws.send(JSON.stringify({ id: `s${n}`, type: "subscribe", payload: opts.payloadOf(n) }));
      }
    }
    await sleep(50);
  }
  // Late answers to the last messages.
  await sleep(500);
}

/** (b) One socket subscribing transactionUpdates as fast as it can. */
async function subscriptionFlood(req: Request): Promise<FloodTally> {
  const t = tally();
  const ws = await openOne(req.url as string, req.params as Record<string, string>);
  await subscribeFlood([ws], t, {
    durationMs: req.durationMs as number,
    perSecond: req.perSecond as number,
    payloadOf: () => ({
      query: `subscription { transactionUpdates { id type transaction { transactionId status } } }`,
    }),
  });
  return t;
}

/**
 * (c) `sockets` sockets of one key, each subscribing `perSecond` a second with lastEventId: alternately the key's
 * first event (more than WS_MAX_REPLAY after it: refused) and the oldest one the cap allows (a full replay),
 * each completed once its replay has arrived, so the next can start.
 */
async function replayFlood(req: Request): Promise<FloodTally> {
  const t = tally();
  const sockets: WebSocket[] = [];
  for (let s = 0; s < (req.sockets as number); s++)
    sockets.push(await openOne(req.url as string, req.params as Record<string, string>));
  const from = req.lastEventIds as string[];
  await subscribeFlood(sockets, t, {
    durationMs: req.durationMs as number,
    perSecond: req.perSecond as number,
    completeAfter: req.completeAfter as number,
    payloadOf: (i) => ({
      query: `subscription($from: ID) { transactionUpdates(lastEventId: $from) { id type transaction { transactionId status } } }`,
      variables: { from: from[i % from.length] },
    }),
  });
  return t;
}

/** (d) `lanes` POSTs of one GraphQL document at once, back to back, for `durationMs`. */
async function httpBurst(req: Request): Promise<FloodTally> {
  const t = tally();
  const until = Date.now() + (req.durationMs as number);
  const body = JSON.stringify({ query: req.query as string });
  const lane = async () => {
    while (Date.now() < until) {
      t.attempts++;
      try {
        const res = await fetch(req.url as string, {
          method: "POST",
          headers: { "content-type": "application/json", ...(req.headers as Record<string, string>) },
          body,
          signal: AbortSignal.timeout(60_000),
        });
        const text = await res.text();
        if (res.status === 200) t.accepted++;
        else {
          let message = "";
          try {
            const body = JSON.parse(text) as { errors?: { message: string }[]; error?: { message: string } };
            message = body.errors?.[0]?.message ?? body.error?.message ?? "";
          } catch {
            message = text.slice(0, 60);
          }
          bump(t.refused, `HTTP ${res.status}: ${kind(message)}`);
        }
      } catch (err) {
        bump(t.clientErrors, (err as Error).name);
      }
    }
  };
  await Promise.all(Array.from({ length: req.lanes as number }, lane));
  return t;
}

async function closeAll(): Promise<number> {
  const all = held.splice(0);
  await Promise.all(
    all.map(
      (ws) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          ws.once("close", () => resolve());
          ws.close(1000);
          setTimeout(() => (ws.terminate(), resolve()), 5000).unref();
        }),
    ),
  );
  return all.length;
}

serveRequests(
  {
    sockets: socketFlood,
    subscriptions: subscriptionFlood,
    replay: replayFlood,
    http: httpBurst,
    close: closeAll,
  },
  async () => void (await closeAll()),
);
