// The PayWay twin's API origin (pwapp.ababank.com's part): list-payment-options issues the QR, the status
// poll reports the action, and both refuse what the real one refuses — a caller without the page's Origin,
// Referer and __cf_bm cookie (Cloudflare's 403 page), aba_data still escaped or a wrong hash (403 "Invalid
// Data"), a poll without the client's token. The facts and their confidence: docs/link-simulator.md.

import { randomBytes } from "node:crypto";
import express, { type Request, type Response, type RequestHandler } from "express";
import {
  isRecord,
  listOptionsHash,
  PAYWAY_APPROVED,
  PAYWAY_OK,
  PAYWAY_PATHS,
  paywayRequestTime,
  statusHash,
} from "../../upstreams/payway.js";
import { sleep } from "../http.js";
import { cloudflareBlockPage, renderTwinNotice } from "./twin-page.js";
import type { TwinClient, TwinStore } from "./twin-store.js";
import { callerAddress, type TwinCall, type TwinState } from "./twin-fault.js";
import { payableTo, sendOversize } from "./twin-hostile.js";
import { outageAnswer } from "./twin-outage.js";

const AMOUNT_RE = /^\d{1,12}(?:\.\d{1,2})?$/;

export interface TwinApiOptions {
  store: TwinStore;
  state: TwinState;
  clock: () => number;
  makeQr: (amount: string, currency: 116 | 840) => string;
}

export function twinApiRouter(opts: TwinApiOptions): express.Router {
  const { store, state } = opts;
  const router = express.Router();
  const json = express.json({ limit: "16kb" });
  router.use(cors(store));
  router.use((req, res, next) => {
    if (blocked(state, req)) return void res.status(403).type("html").send(cloudflareBlockPage());
    if (outageAnswer(state, opts.clock, req, res)) return;
    if (state.fault.mode !== "slow" || req.method === "OPTIONS") return next();
    void sleep(state.fault.slowMs).then(() => next());
  });
  const oversize = (call: TwinCall) => state.fault.mode === "oversize" && state.fault.call === call;
  router.post(PAYWAY_PATHS.listPaymentOptions, json, (req, res) => {
    if (!fromThePage(store, req)) return void res.status(403).type("html").send(cloudflareBlockPage());
    if (oversize("list-payment-options")) return sendOversize(res, state.fault.bytes);
    listPaymentOptions(opts, req, res);
  });
  router.post(PAYWAY_PATHS.checkPaymentStatus, json, (req, res) => {
    if (!fromThePage(store, req)) return void res.status(403).type("html").send(cloudflareBlockPage());
    // Bot management that tells a browser's fetch (it sends Sec-Fetch-Site; Node's fetch does not) from a script's.
    const botCheck = state.fault.mode === "bot-check" || state.fault.mode === "hostile";
    if (botCheck && req.get("sec-fetch-site") === undefined)
      return void res.status(403).type("html").send(cloudflareBlockPage());
    if (oversize("check-payment-status")) return sendOversize(res, state.fault.bytes);
    checkPaymentStatus(opts, req, res);
  });
  router.get(PAYWAY_PATHS.downloadReceipt, (req, res) => {
    const client = store.clientByReceipt(String(req.query.file ?? ""));
    if (!client || client.action !== PAYWAY_APPROVED) {
      res.status(404).type("html").send(renderTwinNotice("Not found", "No such receipt"));
      return;
    }
    const when = new Date(client.approvedAt ?? 0).toISOString();
    res
      .type("html")
      .send(
        renderTwinNotice(
          "Receipt",
          `${client.link.merchant}: ${client.amount} ${client.link.currency} paid ${when} (${client.clientId})`,
        ),
      );
  });
  router.use((err: unknown, _req: Request, res: Response, next: (e?: unknown) => void) => {
    if (res.headersSent) return next(err);
    refuse(res, 400, "400", "Bad Request");
  });
  return router;
}

function listPaymentOptions(opts: TwinApiOptions, req: Request, res: Response): void {
  const { store, state } = opts;
  const body = isRecord(req.body) ? req.body : {};
  const abaData = typeof body.aba_data === "string" ? body.aba_data : "";
  const requestTime = typeof body.request_time === "string" ? body.request_time : "";
  const additional = typeof body.additional_fields === "string" ? body.additional_fields : "";
  const hash = typeof body.hash === "string" ? body.hash : "";
  // aba_data read from the page's HTML without unescaping still carries \u002F: the real API refuses it.
  const visit = store.visitOf(abaData);
  if (
    visit === undefined ||
    requestTime !== visit.requestTime ||
    hash !== listOptionsHash(requestTime, abaData, additional)
  )
    return refuse(res, 403, "403", "Invalid Data");
  if (state.fault.mode === "status")
    return void res.json({ status: tranStatus(state.fault.code, state.fault.message) });
  const amount = amountOf(additional);
  if (amount === null) return void res.json({ status: tranStatus("01", "Invalid amount") });
  const { minAmount, maxAmount, currency } = visit.link;
  if (Number(amount) < Number(minAmount) || Number(amount) > Number(maxAmount))
    return void res.json({ status: tranStatus("02", `Amount must be between ${minAmount} and ${maxAmount}`) });
  const issued = opts.makeQr(amount, currency === "USD" ? 840 : 116);
  const qr = state.fault.mode === "payee" ? payableTo(issued, state.fault.payee) : issued;
  const client = store.createClient(visit, amount, qr);
  res.json({
    step: "abapay_khqr_request_qr",
    token: client.token,
    client_id: client.clientId,
    expire_in_sec: "180",
    qr_string: qr,
    download_qr: `${originOf(req)}/api/pw-app/v1/payment/qr/${client.clientId}.png`,
    aba_data: randomBytes(96).toString("base64"),
    status: tranStatus(PAYWAY_OK, "Success"),
  });
}

function checkPaymentStatus(opts: TwinApiOptions, req: Request, res: Response): void {
  const { store, clock, state } = opts;
  const body = isRecord(req.body) ? req.body : {};
  const text = (k: string) => (typeof body[k] === "string" ? body[k] : "");
  const clientId = text("client_id");
  const client = store.client(clientId);
  if (client === undefined) return refuse(res, 404, "404", "Not Found");
  if (req.get("token") !== client.token) return refuse(res, 403, "403", "Invalid Token");
  const deviceId = text("device_id");
  const requestTime = text("request_time");
  // The poll must carry the original request_time (a fresh one is refused: source 1's fix) and a fresh device id.
  if (
    !/^[A-Za-z0-9]{10}$/.test(deviceId) ||
    requestTime !== client.requestTime ||
    text("hash") !== statusHash(clientId, deviceId, requestTime)
  )
    return refuse(res, 403, "403", "Invalid Data");
  store.notePoll(client, deviceId);
  if (client.broken) return refuse(res, client.brokenStatus, String(client.brokenStatus), "Broken");
  const receiptOrigin = state.fault.mode === "foreign-receipt" ? state.fault.receiptOrigin : originOf(req);
  res.json({ status: tranStatus(PAYWAY_OK, "Success"), data: pollData(client, store, receiptOrigin, clock()) });
}

function pollData(client: TwinClient, store: TwinStore, origin: string, now: number) {
  const action = store.actionForPoll(client);
  const declined = action === "declined";
  return {
    "rq-time": paywayRequestTime(now),
    action,
    message: tranStatus(declined ? "05" : PAYWAY_OK, declined ? "Transaction declined" : "Success"),
    cache: false,
    ...(action === PAYWAY_APPROVED
      ? { download_receipt: `${origin}${PAYWAY_PATHS.downloadReceipt}?file=${client.receiptFile ?? ""}` }
      : {}),
  };
}

/** additional_fields is a JSON string {"amount":"2.00"}. */
function amountOf(additional: string): string | null {
  try {
    const parsed: unknown = JSON.parse(additional);
    const amount = isRecord(parsed) ? parsed.amount : undefined;
    return typeof amount === "string" && AMOUNT_RE.test(amount) && Number(amount) > 0 ? amount : null;
  } catch {
    return null;
  }
}

/** Each answer carries its own transaction id (it changes per call, as the real one's does). */
function tranStatus(code: string, message: string) {
  return { code, message, tran_id: randomBytes(6).toString("hex") };
}

function refuse(res: Response, http: number, code: string, message: string): void {
  res.status(http).json({ message, status: { code, message } });
}

function originOf(req: Request): string {
  return `${req.protocol}://${req.get("host") ?? ""}`;
}

function blocked(state: TwinState, req: Request): boolean {
  const f = state.fault;
  return f.mode === "forbidden" && (f.address === null || f.address === callerAddress(req));
}

/** The page's Origin, a Referer on it, and a live __cf_bm cookie of the page: else Cloudflare's 403. */
function fromThePage(store: TwinStore, req: Request): boolean {
  const origin = req.get("origin") ?? "";
  const referer = req.get("referer") ?? "";
  return store.origins.has(origin) && referer.startsWith(`${origin}/`) && store.cookieValid(cookie(req, "__cf_bm"));
}

function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** CORS for the page's origins only, with credentials (the page's fetch sends its cookies). */
function cors(store: TwinStore): RequestHandler {
  return (req, res, next) => {
    const origin = req.get("origin");
    if (origin !== undefined && store.origins.has(origin)) {
      res.set({ "access-control-allow-origin": origin, "access-control-allow-credentials": "true", vary: "Origin" });
      if (req.method === "OPTIONS") {
        res
          .set({
            "access-control-allow-methods": "POST, GET",
            "access-control-allow-headers": "content-type, language, token",
            "access-control-max-age": "600",
          })
          .status(204)
          .end();
        return;
      }
    }
    next();
  };
}
