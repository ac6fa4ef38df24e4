// A merchant's webhook endpoint: a real HTTP server that records every request as it arrived (`received`),
// checks each delivery's signature with its own HMAC (written from the README's recipe, not the service's
// helper) when it knows the endpoint's secret (`deliveries`), answers what the test says (`respond`), and can
// be taken down (connection refused) or made to hold chosen deliveries unanswered.

import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { closeNow, listenLoopback } from "./listen.js";

export interface Delivery {
  /** The endpoint path's key id (`/hook/<keyId>`). */
  keyId: string;
  eventId: string;
  type: string;
  transactionId: string;
  status: string;
  signatureOk: boolean;
  /** The body's id and type agree with the x-event-id / x-event-type headers. */
  headersOk: boolean;
  timestamp: number;
  at: number;
  answered: number | null;
}

/** One request as it arrived: its headers (single-valued ones) and raw body. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** An answer: a status, or a status with headers and a body (an endpoint that says why it failed). */
export type Answer = number | { status: number; headers?: Record<string, string>; body?: string };

/** What to answer the `n`-th request (1-based) with; without it, see WebhookReceiver's answer. */
export type Respond = (n: number, r: Received) => Answer;

function send(res: ServerResponse, answer: Answer): number {
  if (typeof answer === "number") {
    res.statusCode = answer;
    res.end();
    return answer;
  }
  res.writeHead(answer.status, answer.headers ?? {});
  res.end(answer.body ?? "");
  return answer.status;
}

export function sign(secret: string, timestamp: string, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

export class WebhookReceiver {
  /** Every request, in arrival order (also unparseable and unsigned ones). */
  readonly received: Received[] = [];
  /** Every parsed delivery, with its signature checked against the key's secret (`setSecret`). */
  readonly deliveries: Delivery[] = [];
  /** Bodies that could not be read at all (never expected). */
  readonly malformed: string[] = [];
  private readonly secrets = new Map<string, string>();
  private server: Server | null = null;
  private readonly held: ServerResponse[] = [];
  port = 0;
  /** Deliveries for which this returns true are held open, never answered (until `dropHeld` or `down`). */
  hold: ((d: Delivery) => boolean) | null = null;
  /** Every answer waits this long (ms): a slow receiver. */
  answerAfterMs = 0;

  /**
   * Answers: `respond`'s status when given; else 204 for a valid signature, 400 for a wrong one, and 200 for a
   * key whose secret the receiver was not told (the test checks those itself, from `received`).
   */
  constructor(private readonly respond: Respond | null = null) {}

  /** The endpoint URL to register; `keyId` (`/hook/<keyId>`) tells the receiver whose secret signs it. */
  url(keyId?: string): string {
    return `http://127.0.0.1:${this.port}/hook${keyId === undefined ? "" : `/${keyId}`}`;
  }

  setSecret(keyId: string, secret: string): void {
    this.secrets.set(keyId, secret);
  }

  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => this.handle(req, res));
    this.port = await listenLoopback(server, this.port);
    this.server = server;
  }

  /** Connection refused from now on; held requests are cut. */
  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    this.held.splice(0);
    await closeNow(server);
  }

  /** Answers nothing to the held requests: drops their connections. */
  dropHeld(): void {
    for (const res of this.held.splice(0)) res.socket?.destroy();
  }

  /** Distinct event ids received with a valid signature (2xx answered). */
  acknowledged(): Set<string> {
    return new Set(
      this.deliveries.filter((d) => d.signatureOk && d.answered !== null && d.answered < 300).map((d) => d.eventId),
    );
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
      const received: Received = { headers, body: raw, at: Date.now() };
      this.received.push(received);
      const keyId = /^\/hook\/([^/?]+)/.exec(req.url ?? "")?.[1] ?? "";
      const header = (n: string) => (typeof req.headers[n] === "string" ? (req.headers[n] as string) : "");
      let body: { id?: string; type?: string; data?: { transaction?: { transactionId?: string; status?: string } } };
      try {
        body = JSON.parse(raw);
      } catch {
        this.malformed.push(raw);
        send(res, this.respond ? this.respond(this.received.length, received) : 400);
        return;
      }
      const secret = this.secrets.get(keyId);
      const ts = header("x-timestamp");
      const signatureOk =
        secret !== undefined &&
        header("x-signature")
          .split(" ")
          .includes(`v1=${sign(secret, ts, raw)}`);
      const d: Delivery = {
        keyId,
        eventId: body.id ?? "",
        type: body.type ?? "",
        transactionId: body.data?.transaction?.transactionId ?? "",
        status: body.data?.transaction?.status ?? "",
        signatureOk,
        headersOk: header("x-event-id") === body.id && header("x-event-type") === body.type,
        timestamp: Number(ts),
        at: Date.now(),
        answered: null,
      };
      this.deliveries.push(d);
      if (this.hold?.(d)) {
        this.held.push(res);
        return;
      }
      const answer = this.respond
        ? this.respond(this.received.length, received)
        : secret === undefined
          ? 200
          : signatureOk
            ? 204
            : 400;
      if (this.answerAfterMs > 0) setTimeout(() => (d.answered = send(res, answer)), this.answerAfterMs);
      else d.answered = send(res, answer);
    });
  }
}

/** A receiver listening on a loopback port; `respond` decides each answer's status (see WebhookReceiver). */
export async function startReceiver(respond?: Respond): Promise<WebhookReceiver> {
  const r = new WebhookReceiver(respond);
  await r.up();
  return r;
}
