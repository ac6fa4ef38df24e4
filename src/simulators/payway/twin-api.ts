// The PayWay twin's API origin (pwapp.ababank.com's part): list-payment-options issues the QR, the status
// poll reports the action, and both refuse what the real one refuses — aba_data still escaped or a wrong hash
// (403 "Invalid Data"), a poll without the client's token or with another request_time. Neither asks for the page's
// cookie, Origin or Referer: a browser never sends link.payway.com.kh's cookies to pwapp.ababank.com, and public
// clients call both with none of them. The API sets its own `__cf_bm`, as Cloudflare does per host, and records
// which cookies each poll carried. The facts and their sources: docs/link-simulator.md.

import { randomBytes } from "node:crypto";
import express, { type Request, type Response, type RequestHandler } from "express";
import {
  isRecord,
  listOptionsHash,
  PAYWAY_APPROVED,
  PAYWAY_OK,
  PAYWAY_PATHS,
  paywayRqTime,
  statusHash,
} from "../../upstreams/payway.js";
import { sleep } from "../http.js";
import { cloudflareBlockPage, renderTwinNotice } from "./twin-page.js";
import type { PollCookies, TwinClient, TwinStore } from "./twin-store.js";
import { callerAddress, takeRefusal, type TwinCall, type TwinState } from "./twin-fault.js";
import { payableTo, sendOversize } from "./twin-hostile.js";
import { headlessRequest, sendChallenge, type TwinEdge } from "./twin-edge.js";
import { outageAnswer } from "./twin-outage.js";

const AMOUNT_RE = /^\d{1,12}(?:\.\d{1,2})?$/;

export interface TwinApiOptions {
  store: TwinStore;
  state: TwinState;
  clock: () => number;
  /** `merchant`: the link's merchant, the payee a QR of its names (KHQR tag 59). */
  makeQr: (amount: string, currency: 116 | 840, merchant: string) => string;
  /** What the edge saw of callers, and its challenge (twin-edge.ts). */
  edge: TwinEdge;
}

export function twinApiRouter(opts: TwinApiOptions): express.Router {
  const { store, state } = opts;
  const router = express.Router();
  const json = express.json({ limit: "16kb" });
  router.use(cors(store));
  router.use((req, res, next) => {
    if (blocked(state, req)) return void res.status(403).type("html").send(cloudflareBlockPage());
    ownCookie(store, req, res);
    if (outageAnswer(state, opts.clock, req, res)) return;
    if (state.fault.mode !== "slow" || req.method === "OPTIONS") return next();
    void sleep(state.fault.slowMs).then(() => next());
  });
  const oversize = (call: TwinCall) => state.fault.mode === "oversize" && state.fault.call === call;
  router.post(PAYWAY_PATHS.listPaymentOptions, json, (req, res) => {
    if (edgeChallenges(opts, req, "list-payment-options")) return sendChallenge(res);
    if (oversize("list-payment-options")) return sendOversize(res, state.fault.bytes);
    // The page's state went stale once (source: payluy's escaped aba_data; Clinic_systems reloads and retries).
    if (takeRefusal(state, "invalid-data-once")) return refuse(res, 403, "403", "Invalid Data");
    listPaymentOptions(opts, req, res);
  });
  router.post(PAYWAY_PATHS.checkPaymentStatus, json, (req, res) => {
    if (edgeChallenges(opts, req, "check-payment-status")) return sendChallenge(res);
    if (takeRefusal(state, "invalid-token")) return refuse(res, 403, "403", "Invalid Token");
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
  const fields = additionalFieldsOf(additional);
  const amount = fields?.amount ?? null;
  if (fields === null || amount === null || !AMOUNT_RE.test(amount) || !(Number(amount) > 0))
    return void res.json({ status: tranStatus("01", "Invalid amount") });
  const { minAmount, maxAmount, currency, fixedAmount, requiredFields } = visit.link;
  if (fixedAmount !== null && Number(amount) !== Number(fixedAmount))
    return void res.json({ status: tranStatus("02", `Amount must be ${fixedAmount}`) });
  if (fixedAmount === null && (Number(amount) < Number(minAmount) || Number(amount) > Number(maxAmount)))
    return void res.json({ status: tranStatus("02", `Amount must be between ${minAmount} and ${maxAmount}`) });
  // Our own shape for this refusal (no public capture shows one): the link's required fields must all arrive.
  const missing = requiredFields.filter((f) => (fields[f] ?? "").trim() === "");
  if (missing.length > 0)
    return void res.json({ status: tranStatus("03", `Required field missing: ${missing.join(", ")}`) });
  const issued = opts.makeQr(amount, currency === "USD" ? 840 : 116, visit.link.merchant);
  const qr = state.fault.mode === "payee" ? payableTo(issued, state.fault.payee) : issued;
  const client = store.createClient(visit, amount, qr, fields);
  const answer: Record<string, unknown> = {
    step: "abapay_khqr_request_qr",
    token: client.token,
    client_id: client.clientId,
    expire_in_sec: "180",
    qr_string: qr,
    download_qr: `${originOf(req)}/api/pw-app/v1/payment/qr/${client.clientId}.png`,
    aba_data: randomBytes(96).toString("base64"),
    status: tranStatus(PAYWAY_OK, "Success!"),
  };
  // qr-status: the QR with no status at all (Eavheang's sample answer), or with code "0" (accepted by chmabapay).
  if (state.fault.mode === "qr-status") {
    if (state.fault.qrStatus === "absent") delete answer.status;
    else answer.status = tranStatus("0", "Success!");
  }
  res.json(answer);
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
  store.notePoll(client, deviceId, pollCookies(store, req));
  if (state.fault.mode === "approve-late") store.approveLate(client, state.fault.afterMs);
  if (client.broken) return refuse(res, client.brokenStatus, String(client.brokenStatus), "Broken");
  const receiptOrigin = state.fault.mode === "foreign-receipt" ? state.fault.receiptOrigin : originOf(req);
  res.json({ status: tranStatus(PAYWAY_OK, "Success!"), data: pollData(client, store, receiptOrigin, clock()) });
}

function pollData(client: TwinClient, store: TwinStore, origin: string, now: number) {
  const action = store.actionForPoll(client);
  const declined = action === "declined";
  // As captured (Eavheang/payway-merchant §7.3–7.4): "rq-time" whole Unix seconds and "cache" 1, both numbers.
  return {
    "rq-time": paywayRqTime(now),
    action,
    message: tranStatus(declined ? "05" : PAYWAY_OK, declined ? "Transaction declined" : "Success!"),
    cache: 1,
    ...(action === PAYWAY_APPROVED
      ? { download_receipt: `${origin}${PAYWAY_PATHS.downloadReceipt}?file=${client.receiptFile ?? ""}` }
      : {}),
  };
}

/** additional_fields is a JSON string {"amount":"2.00", "remark": …}: its string fields, or null when it is not one. */
function additionalFieldsOf(additional: string): Record<string, string> | null {
  try {
    const parsed: unknown = JSON.parse(additional);
    if (!isRecord(parsed)) return null;
    const strings = Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === "string");
    return Object.fromEntries(strings.slice(0, 20).map(([k, v]) => [k, v.slice(0, 300)]));
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

/**
 * The edge's view of an API call, recorded; in `challenge` mode a headless user agent or client hint is challenged,
 * and so is a QR request from a page whose detections found automation (or never ran).
 */
function edgeChallenges(opts: TwinApiOptions, req: Request, call: TwinCall): boolean {
  let challenged = false;
  if (opts.state.fault.mode === "challenge") {
    const abaData = isRecord(req.body) && typeof req.body.aba_data === "string" ? req.body.aba_data : "";
    challenged = headlessRequest(req) || (call === "list-payment-options" && !opts.edge.passed(abaData));
  }
  opts.edge.noteCall(req, call, challenged);
  return challenged;
}

function blocked(state: TwinState, req: Request): boolean {
  const f = state.fault;
  return f.mode === "forbidden" && (f.address === null || f.address === callerAddress(req));
}

/** The cookies a request carried, by name (the first of each name, as servers read a Cookie header). */
function cookies(req: Request): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of (req.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    const name = eq > 0 ? part.slice(0, eq).trim() : "";
    if (name !== "" && !found.has(name)) found.set(name, part.slice(eq + 1).trim());
  }
  return found;
}

/** What a poll's Cookie header carried: names, and whose `__cf_bm` (the page's never reaches the real API). */
function pollCookies(store: TwinStore, req: Request): PollCookies {
  const carried = cookies(req);
  return { names: [...carried.keys()], cfBm: store.cookieIssuer(carried.get("__cf_bm")) };
}

/**
 * The API's own `__cf_bm` (Cloudflare sets one per host), on an answer to a caller without a live one of the API's.
 * SameSite=None and Secure, as Cloudflare sets it: the page that calls the API is another site's.
 */
function ownCookie(store: TwinStore, req: Request, res: Response): void {
  if (req.method === "OPTIONS" || store.cookieIssuer(cookies(req).get("__cf_bm")) === "api") return;
  res.cookie("__cf_bm", store.issueCookie("api"), {
    path: "/",
    httpOnly: true,
    secure: true,
    sameSite: "none",
    maxAge: 30 * 60_000,
  });
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
