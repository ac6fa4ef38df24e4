// The lifecycle bench's load generator, in a process of its own. Open loop: R payments a second are
// generated over REST whatever the answers' latency (a slow service gets more requests in flight, as in
// life). For each payment, as a checkout page would: a client-token subscriber on transactionUpdated is
// opened, and the simulated payer pays after a random 0–5 s (the time the pay call was sent is noted).
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Agent, request } from "undici";
import { serveRequests, type Request } from "../support/ipc.js";
import { sleep, wallNow } from "../support/timing.js";
import { Subscribers, type SocketTry } from "./subscriber.js";

export type Kind = "qr" | "gateway" | "link";

export interface DriverSetup {
  /** The service instances answering REST and websockets (round robin). */
  apis: string[];
  sim: string;
  keys: Record<Kind, string>;
  /** Shares of the mix, summing to 1. */
  mix: Record<Kind, number>;
  payMaxMs: number;
}

/** One payment: what was asked and when things happened (wall clock ms); null = did not happen. */
export interface Payment {
  kind: Kind;
  transactionId: string | null;
  generateMs: number;
  /** The generate's failure (status and body head), or the pay call's, or the subscriber's. */
  error: string | null;
  payAt: number | null;
  /** When the client-token subscriber saw SUCCESS. */
  seenAt: number | null;
  /** Terminal status the subscriber saw other than SUCCESS. */
  seenOther: string | null;
  /** The subscriber's sockets, in order (more than one when a socket dropped and was opened again). */
  sockets: SocketTry[];
}

const HEADERS: Record<Kind, (key: string) => Record<string, string>> = {
  qr: (key) => ({ "x-api-key": key, "x-auth-type": "api-key" }),
  gateway: (key) => ({ "x-api-key": key, "x-auth-type": "api-gateway" }),
  link: (key) => ({ "x-api-key": key, "x-auth-type": "api-gateway-link" }),
};
const PATH: Record<Kind, string> = {
  qr: "/qr/generate",
  gateway: "/gateway/generate-qr",
  link: "/gateway-link/generate-qr",
};

let setup: DriverSetup;
const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
let payments: Payment[] = [];
let seq = 0;
const subscribers = new Subscribers();

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown; text: string }> {
  // undici's `request`, not `fetch`: a quarter of the CPU per call, so the load generator leaves the machine's CPU
  // to the service.
  const res = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    dispatcher,
  });
  const text = await res.body.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.statusCode, json, text };
}

function bodyFor(kind: Kind, n: number): unknown {
  if (kind === "qr")
    return { amount: (100 + (n % 500)) / 100, currency: 840, expiredAfter: 120_000, meta: { order: `lc-${n}` } };
  if (kind === "gateway")
    return { qrData: { orderId: `lc${process.pid % 1000}x${n}`, amount: 2.5, currency: "USD", lifetime: 10 } };
  return { amount: 5000, currency: 116, meta: { order: `lc-${n}` } };
}

function pick(r: number): Kind {
  if (r < setup.mix.qr) return "qr";
  if (r < setup.mix.qr + setup.mix.gateway) return "gateway";
  return "link";
}

async function pay(p: Payment, answer: Record<string, unknown>): Promise<void> {
  const data = (answer.data ?? {}) as Record<string, unknown>;
  const [path, body] =
    p.kind === "qr"
      ? [
          "/sim/network/pay",
          // The payer's app reads the payee, amount and currency off the QR; the simulator in its own process
          // cannot describe the service's QRs, so they come with the pay call.
          {
            md5: data.md5,
            toAccountId: "bench_shop@devb",
            amount: String((answer.requestData as { amount: unknown }).amount),
            currency: "USD",
          },
        ]
      : p.kind === "gateway"
        ? ["/sim/gateway/pay", { tranId: answer.orderId, outcome: "APPROVED" }]
        : ["/sim/link/approve", { clientId: data.clientId }];
  const at = wallNow();
  const res = await post(`${setup.sim}${path}`, body).catch((err: Error) => ({
    status: 0,
    text: err.message,
    json: null,
  }));
  if (res.status === 200) p.payAt = at;
  else p.error ??= `pay ${res.status}: ${res.text.slice(0, 200)}`;
}

async function one(n: number): Promise<void> {
  const kind = pick(Math.random());
  const api = setup.apis[n % setup.apis.length];
  const p: Payment = {
    kind,
    transactionId: null,
    generateMs: 0,
    error: null,
    payAt: null,
    seenAt: null,
    seenOther: null,
    sockets: [],
  };
  payments.push(p);
  const t0 = performance.now();
  const res = await post(`${api}${PATH[kind]}`, bodyFor(kind, n), HEADERS[kind](setup.keys[kind])).catch(
    (err: Error) => ({ status: 0, text: err.message, json: null }),
  );
  p.generateMs = performance.now() - t0;
  const answer = res.json as Record<string, unknown> | null;
  if (res.status !== 200 || answer === null || typeof answer.transactionId !== "string") {
    p.error = `generate ${res.status}: ${res.text.slice(0, 200)}`;
    return;
  }
  p.transactionId = answer.transactionId;
  subscribers.follow(api, p, String(answer.clientToken));
  await sleep(Math.random() * setup.payMaxMs);
  await pay(p, answer);
}

serveRequests(
  {
    init(req: Request) {
      setup = req.setup as DriverSetup;
      return true;
    },
    /** Runs R payments/s for `seconds`; resolves when every payment has been generated and paid (or failed). */
    async run(req: Request) {
      const rate = req.rate as number;
      const seconds = req.seconds as number;
      payments = [];
      loopDelay.reset();
      loopDelay.enable();
      const total = Math.round(rate * seconds);
      const started = performance.now();
      const all: Promise<void>[] = [];
      let issued = 0;
      while (issued < total) {
        const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
        for (; issued < due; issued++) all.push(one(seq++));
        await sleep(5);
      }
      const sentS = (performance.now() - started) / 1000;
      await Promise.all(all);
      loopDelay.disable();
      return { sentS, loopP99Ms: loopDelay.percentile(99) / 1e6 };
    },
    /** The payments of the last run (after the run, and again after the drain), and subscribers still open. */
    collect() {
      return { payments, openSubscribers: subscribers.open };
    },
    /** Ends the subscribers still following (a step is over: its payments are not watched any more). */
    stopSubscribers() {
      subscribers.stopAll();
      return true;
    },
    /** Paid payments whose subscriber has not seen SUCCESS yet: what the drain polls (small, unlike `collect`). */
    unseen() {
      return payments
        .filter((p) => p.payAt !== null && p.transactionId !== null && p.seenAt === null)
        .map((p) => p.transactionId);
    },
  },
  async () => {
    subscribers.stopAll();
    await dispatcher.close();
  },
);
