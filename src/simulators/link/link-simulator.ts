// The payment-link page simulator: a hosted page (`router`) and the test/demo controls
// (`controls`). Both are mounted at the application root; every path lives under /sim/link/.
// The protocol is documented in docs/link-simulator.md.

import { randomBytes } from "node:crypto";
import express, { type NextFunction, type Request, type Response } from "express";
import { LinkClientStore, type ControlResult, type LinkClient, type LinkCurrency } from "./client-store.js";
import { renderErrorPage, renderLinkPage, renderReceiptPage } from "./pages.js";
import { faultControl, sleep, type FaultState } from "../http.js";

export interface LinkSimulatorOptions {
  /** Builds the KHQR string for a requested amount (the app wires the real encoder). */
  makeQr: (amount: string, currency: LinkCurrency) => string;
  clock?: () => number;
  /** Generates client identifiers; random by default. */
  newClientId?: () => string;
  /** How often the page polls its status API. Default 1000 ms. */
  pollIntervalMs?: number;
  /** Clients are forgotten after this long (default 1 h) or beyond `maxClients` (default 10 000). */
  retentionMs?: number;
  maxClients?: number;
}

export type LinkFaultMode = "ok" | "down" | "garbage" | "slow";
export const LINK_FAULT_MODES: readonly LinkFaultMode[] = ["ok", "down", "garbage", "slow"];

export interface LinkSimulator {
  router: express.Router;
  controls: express.Router;
  /**
   * The injected fault (`POST /sim/link/fault`); it hits the page and its API, never controls or receipts.
   * `embeds` (`POST /sim/link/embeds`): other sites every page pulls in from now on (see pages.ts).
   */
  /** `faultAnswers`: requests for the page or its status API answered by an injected fault, all time. */
  state: { fault: FaultState<LinkFaultMode>; embeds: string[]; faultAnswers: number };
}

const BASE = "/sim/link";
const AMOUNT_RE = /^(?:0|[1-9]\d{0,11})(?:\.\d{1,2})?$/;
const REQUEST_ID_RE = /^[A-Za-z0-9_-]{8,64}$/;
const CURRENCIES: Record<string, { code: LinkCurrency; iso: "KHR" | "USD" }> = {
  KHR: { code: 116, iso: "KHR" },
  "116": { code: 116, iso: "KHR" },
  USD: { code: 840, iso: "USD" },
  "840": { code: 840, iso: "USD" },
};

/** What the page's routes and the controls share. */
interface SimContext {
  options: LinkSimulatorOptions;
  store: LinkClientStore;
  state: LinkSimulator["state"];
  json: express.RequestHandler;
  newClientId: () => string;
  pollMs: number;
}

export function createLinkSimulator(options: LinkSimulatorOptions): LinkSimulator {
  const clock = options.clock ?? Date.now;
  const ctx: SimContext = {
    options,
    store: new LinkClientStore(clock, options.retentionMs ?? 3_600_000, options.maxClients ?? 10_000),
    state: { fault: { mode: "ok", slowMs: 1000, variant: "text" }, embeds: [], faultAnswers: 0 },
    json: express.json({ limit: "16kb" }),
    newClientId: options.newClientId ?? (() => `cl_${randomBytes(10).toString("hex")}`),
    pollMs: options.pollIntervalMs ?? 1000,
  };
  return { router: pageRouter(ctx), controls: controlRouter(ctx), state: ctx.state };
}

/** The hosted page, its API (request_qr, resume, status) and the receipts. */
function pageRouter(ctx: SimContext): express.Router {
  const { store, state, json } = ctx;
  const router = express.Router();
  router.use([`${BASE}/p`, `${BASE}/api`], (req, res, next) => {
    if (state.fault.mode === "down" || state.fault.mode === "garbage") state.faultAnswers += 1;
    void applyFault(state.fault, req, res, next);
  });
  router.get(`${BASE}/p/:slug`, (req, res) => {
    const currency = CURRENCIES[String(req.query.currency ?? "KHR").toUpperCase()];
    const slug = String(req.params.slug);
    if (!currency) {
      res.status(400).type("html").send(renderErrorPage("currency must be KHR or USD"));
      return;
    }
    const clientId = typeof req.query.clientId === "string" ? req.query.clientId : null;
    const amount = typeof req.query.amount === "string" && AMOUNT_RE.test(req.query.amount) ? req.query.amount : "";
    res
      .set("cache-control", "no-store")
      .type("html")
      .send(
        renderLinkPage({
          slug,
          currency: currency.iso,
          apiBase: `${BASE}/api`,
          pollMs: ctx.pollMs,
          amount,
          clientId,
          embeds: state.embeds,
          remember: req.query.remember === "1",
        }),
      );
  });

  router.post(`${BASE}/api/request_qr`, json, (req, res) => requestQr(ctx, req, res));

  router.post(`${BASE}/api/resume`, json, (req, res) => {
    const found = pollTarget(store, req, res);
    if (!found) return;
    res.json({ ...sessionView(found.client), requestId: found.requestId });
  });

  router.post(`${BASE}/api/status`, json, (req, res) => {
    const found = pollTarget(store, req, res);
    if (!found) return;
    const { client, requestId } = found;
    res.json({
      clientId: client.clientId,
      action: client.action,
      requestId,
      ...(client.receiptUrl ? { receiptUrl: client.receiptUrl } : {}),
      ...paidView(client),
    });
  });

  router.get(`${BASE}/receipt/:clientId`, (req, res) => {
    const client = store.get(String(req.params.clientId));
    if (!client || client.approvedAt === undefined || client.receiptUrl === undefined) {
      res.status(404).type("html").send(renderErrorPage("no such receipt"));
      return;
    }
    res.type("html").send(renderReceiptPage(client, new Date(client.approvedAt).toISOString()));
  });
  router.use(BASE, simErrorHandler);
  return router;
}

/** POST request_qr: a new client with its QR for a checked amount, currency, slug and request id. */
function requestQr(ctx: SimContext, req: Request, res: Response): void {
  const body = objectBody(req, res);
  if (!body) return;
  const problems: Detail[] = [];
  const amount = typeof body.amount === "string" ? body.amount : "";
  if (!AMOUNT_RE.test(amount) || Number(amount) <= 0)
    problems.push({ field: "amount", message: "a positive decimal string with at most 2 decimals" });
  const currency = CURRENCIES[String(body.currency ?? "")];
  if (!currency) problems.push({ field: "currency", message: "KHR or USD" });
  if (typeof body.slug !== "string" || body.slug.length === 0 || body.slug.length > 100)
    problems.push({ field: "slug", message: "required" });
  const requestId = checkRequestId(body.requestId, problems);
  if (problems.length > 0 || !currency) return badInput(res, problems);
  const client = ctx.store.create(
    {
      clientId: ctx.newClientId(),
      slug: String(body.slug),
      amount,
      currency: currency.code,
      qr: ctx.options.makeQr(amount, currency.code),
      origin: `${req.protocol}://${req.get("host")}`,
    },
    requestId,
  );
  res.json({ ...sessionView(client), requestId });
}

/** Shared by status and resume: validates, counts the poll, refuses replays and broken clients. */
function pollTarget(
  store: LinkClientStore,
  req: Request,
  res: Response,
): { client: LinkClient; requestId: string } | undefined {
  const body = objectBody(req, res);
  if (!body) return undefined;
  const problems: Detail[] = [];
  const clientId = typeof body.clientId === "string" && body.clientId.length > 0 ? body.clientId : "";
  if (!clientId) problems.push({ field: "clientId", message: "required" });
  const requestId = checkRequestId(body.requestId, problems);
  if (problems.length > 0) return void badInput(res, problems);
  const client = store.get(clientId);
  if (!client) return void sendError(res, 404, "NOT_FOUND", `no payment-link client ${clientId}`);
  store.notePoll(client);
  if (!store.noteRequestId(client, requestId)) {
    return void badInput(res, [
      { field: "requestId", message: "already used: every request needs a fresh identifier" },
    ]);
  }
  if (client.broken) return void sendError(res, client.brokenStatus, "BROKEN", "simulated page failure");
  return { client, requestId };
}

/** The test/demo controls: the payer's actions, a broken client, inspection, faults and embeds. */
function controlRouter(ctx: SimContext): express.Router {
  const { store, state, json } = ctx;
  const controls = express.Router();
  const control = (apply: (clientId: string) => ControlResult) => (req: Request, res: Response) => {
    const body = objectBody(req, res);
    if (!body) return;
    if (typeof body.clientId !== "string" || body.clientId.length === 0)
      return badInput(res, [{ field: "clientId", message: "required" }]);
    sendControlResult(res, apply(body.clientId));
  };
  controls.post(
    `${BASE}/scan`,
    json,
    control((id) => store.scan(id)),
  );
  controls.post(`${BASE}/approve`, json, (req, res) => {
    const body = req.body as
      { receipt?: unknown; receiptUrl?: unknown; amount?: unknown; currency?: unknown } | undefined;
    // The payer paid another amount or currency than the QR's: the approval says so (paidAmount, paidCurrency).
    const problems: Detail[] = [];
    if (body?.amount !== undefined && (typeof body.amount !== "string" || !AMOUNT_RE.test(body.amount)))
      problems.push({ field: "amount", message: "a decimal string with at most 2 decimals" });
    if (
      body?.currency !== undefined &&
      (typeof body.currency !== "string" || !Object.hasOwn(CURRENCIES, body.currency))
    )
      problems.push({ field: "currency", message: "KHR or USD" });
    if (problems.length > 0) return badInput(res, problems);
    const paid = {
      ...(typeof body?.amount === "string" ? { amount: body.amount } : {}),
      ...(typeof body?.currency === "string" ? { currency: CURRENCIES[body.currency].code } : {}),
    };
    control((id) =>
      store.approve(id, {
        receiptLater: body?.receipt === "later",
        ...(typeof body?.receiptUrl === "string" ? { receiptUrl: body.receiptUrl } : {}),
        ...(Object.keys(paid).length > 0 ? { paid } : {}),
      }),
    )(req, res);
  });
  controls.post(
    `${BASE}/receipt`,
    json,
    control((id) => store.issueReceipt(id)),
  );
  // `status` (400–599, default 410): what the client's status and resume calls answer from now on.
  controls.post(`${BASE}/break`, json, (req, res) => {
    const status = (req.body as { status?: unknown } | undefined)?.status;
    if (
      status !== undefined &&
      (typeof status !== "number" || !Number.isInteger(status) || status < 400 || status > 599)
    )
      return badInput(res, [{ field: "status", message: "an HTTP status from 400 to 599" }]);
    control((id) => store.breakClient(id, status))(req, res);
  });
  controls.get(`${BASE}/clients/:clientId`, (req, res) => {
    const client = store.get(String(req.params.clientId));
    if (!client) return sendError(res, 404, "NOT_FOUND", `no payment-link client ${String(req.params.clientId)}`);
    res.json(inspectView(client));
  });
  controls.post(`${BASE}/fault`, json, faultControl(LINK_FAULT_MODES, state));
  // The fault in force, and how many requests an injected fault has answered (a test's proof that the page met
  // the outage, not only that time passed).
  controls.get(`${BASE}/fault`, (_req, res) => void res.json({ ...state.fault, faultAnswers: state.faultAnswers }));
  controls.post(`${BASE}/embeds`, json, (req, res) => {
    const body = objectBody(req, res);
    if (!body) return;
    const urls = body.urls;
    const ok = (u: unknown): u is string => typeof u === "string" && /^https?:\/\/[^\s"'<>]{1,200}$/.test(u);
    if (!Array.isArray(urls) || urls.length > 5 || !urls.every(ok))
      return badInput(res, [{ field: "urls", message: "up to 5 http(s) base URLs" }]);
    state.embeds = urls.map((u) => u.replace(/\/+$/, ""));
    res.json({ embeds: state.embeds });
  });
  controls.use(BASE, simErrorHandler);
  return controls;
}

/** down: the site answers 503; garbage: 200 with a body that is not the page or its API's JSON; slow: late answers. */
async function applyFault(
  fault: FaultState<LinkFaultMode>,
  req: Request,
  res: Response,
  next: NextFunction,
): Promise<void> {
  if (fault.mode === "down") {
    res.status(503).type("html").send("<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>");
    return;
  }
  if (fault.mode === "garbage") {
    const api = req.originalUrl.startsWith(`${BASE}/api`);
    if (api && fault.variant === "json") res.status(200).json({ result: "ok", payload: null });
    else
      res
        .status(200)
        .type(api ? "text/plain" : "html")
        .send(api ? "upstream maintenance: try later" : "<!doctype html><html><body>Maintenance</body></html>");
    return;
  }
  if (fault.mode === "slow") await sleep(fault.slowMs);
  next();
}

interface Detail {
  field: string;
  message: string;
}

/** An approved payment's figures as the page states them (its receipt's): what was paid, by default the QR's. */
function paidView(client: LinkClient): { paidAmount?: string; paidCurrency?: string } {
  if (client.action !== "approved") return {};
  const currency = client.paid?.currency ?? client.currency;
  return { paidAmount: client.paid?.amount ?? client.amount, paidCurrency: currency === 116 ? "KHR" : "USD" };
}

function sessionView(client: LinkClient) {
  return {
    clientId: client.clientId,
    qr: client.qr,
    amount: client.amount,
    currency: client.currency === 116 ? "KHR" : "USD",
    action: client.action,
  };
}

function inspectView(client: LinkClient) {
  return {
    ...sessionView(client),
    slug: client.slug,
    broken: client.broken,
    polls: client.polls,
    requestIds: [...client.requestIds],
    receiptUrl: client.receiptUrl ?? null,
    createdAt: iso(client.createdAt),
    scannedAt: iso(client.scannedAt),
    approvedAt: iso(client.approvedAt),
    lastPollAt: iso(client.lastPollAt),
  };
}

function sendControlResult(res: Response, result: ControlResult): void {
  if (result.ok) {
    res.json({
      clientId: result.client.clientId,
      action: result.client.action,
      broken: result.client.broken,
      ...(result.client.receiptUrl ? { receiptUrl: result.client.receiptUrl } : {}),
    });
  } else if (result.reason === "not_found") {
    sendError(res, 404, "NOT_FOUND", result.message);
  } else {
    sendError(res, 409, "CONFLICT", result.message);
  }
}

function checkRequestId(value: unknown, problems: Detail[]): string {
  if (typeof value === "string" && REQUEST_ID_RE.test(value)) return value;
  problems.push({ field: "requestId", message: "8 to 64 characters of [A-Za-z0-9_-]" });
  return "";
}

function objectBody(req: Request, res: Response): Record<string, unknown> | undefined {
  const body: unknown = req.body;
  if (typeof body === "object" && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  badInput(res, [{ field: "body", message: "a JSON object with content-type application/json" }]);
  return undefined;
}

function badInput(res: Response, details: Detail[]): void {
  sendError(res, 400, "BAD_USER_INPUT", "invalid request", details);
}

function sendError(res: Response, status: number, code: string, message: string, details: Detail[] = []): void {
  res.status(status).json({ error: { code, message, details } });
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

/** Malformed or oversized JSON from body-parser becomes the service's error body, never a stack trace. */
function simErrorHandler(err: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) return next(err);
  const status =
    typeof err === "object" && err !== null && "status" in err && typeof err.status === "number" ? err.status : 500;
  if (status === 413) return sendError(res, 413, "BAD_USER_INPUT", "request body too large");
  if (status >= 400 && status < 500) return sendError(res, 400, "BAD_USER_INPUT", "malformed JSON body");
  sendError(res, 500, "INTERNAL", "internal error");
}
