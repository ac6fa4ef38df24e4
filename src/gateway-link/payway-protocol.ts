// The adapter of a real ABA PayWay payment link (https://link.payway.com.kh/ABAPAY…), built from what public
// code shows of it (docs/gateway-link.md, "Pointing at a real PayWay link": each fact and its confidence). The DOM is only
// where the amount is typed and Continue pressed; everything else is read from the page's API answers on their
// own origin (PAYWAY_API_ORIGIN): the QR, its token and client id, then, without the page, the payment's status.

import { decodeKhqr } from "../khqr/index.js";
import {
  isRecord,
  PAYWAY_APPROVED,
  PAYWAY_OK,
  PAYWAY_PATHS,
  paywayDeeplink,
  unwrapAnswer,
} from "../upstreams/payway.js";
import type { PageRequest } from "./chromium.js";
import type {
  LinkAction,
  LinkPageProtocol,
  LinkRefusal,
  LinkSessionInfo,
  LinkStatus,
  VisitorForm,
} from "./link-protocol.js";
import { PAYWAY_FIELD_HINTS, PAYWAY_PAGE_CHECK } from "./payway-page-state.js";

/**
 * How the page's form is filled (page-form.ts): the amount field by kind (type=number, inputmode decimal or numeric,
 * then a label saying amount), as the working Go chromedp scraper chooses it; Continue in English or Khmer.
 */
const PAYWAY_FORM: VisitorForm = {
  amountWords: ["amount", "ចំនួនទឹកប្រាក់", "ចំនួន"],
  continueWords: ["continue", "បន្ត"],
  fields: PAYWAY_FIELD_HINTS,
};

/** Actions that mean the payer refused or the bank declined: none was ever seen live (low confidence). */
const DECLINED = new Set(["declined", "decline", "cancelled", "canceled", "rejected", "failed"]);
/** Seen live (request_qr, approved) or in the page's bundle (scanned, rqpay, processing-payment). */
const KNOWN = new Set(["request_qr", "rqpay", "scanned", "processing-payment", PAYWAY_APPROVED]);

export function paywayLinkProtocol(apiOrigin: string): LinkPageProtocol {
  return {
    name: "payway",
    form: PAYWAY_FORM,
    apiOrigin,
    classify(url) {
      if (url.pathname === PAYWAY_PATHS.listPaymentOptions) return "request_qr";
      if (url.pathname === PAYWAY_PATHS.checkPaymentStatus) return "status";
      return null;
    },
    parseSession: readQrAnswer,
    parseStatus(body) {
      const s = readPaywayStatus(body);
      if (s === null || s.declined) return null;
      // An action public code does not show is the page still waiting, as the worker's own polls read it.
      if (!KNOWN.has(s.action)) return { pending: s.action };
      const action: LinkAction =
        s.action === PAYWAY_APPROVED
          ? "approved"
          : s.action === "request_qr" || s.action === "rqpay"
            ? "request_qr"
            : "scanned";
      const status: LinkStatus = { action };
      if (s.receiptUrl !== null) status.receiptUrl = s.receiptUrl;
      return status;
    },
    pageCheck: PAYWAY_PAGE_CHECK,
  };
}

function text(v: unknown): string | null {
  if (typeof v === "string" && v.length > 0) return v;
  return typeof v === "number" ? String(v) : null;
}

/**
 * The answer of list-payment-options (flat or wrapped in `data`), with the request the page sent. One that carries
 * `qr_string`, `token` and `client_id` is the QR whatever its `status` says: absent (Eavheang/payway-merchant's
 * sample answer has none), "0", empty or "00" (somvannda/chmabapay accepts all four). Without them, a status code
 * other than "00" is the page's refusal, named with its message; anything else is unreadable.
 */
function readQrAnswer(body: unknown, request: PageRequest): LinkSessionInfo | LinkRefusal | null {
  const answer = unwrapAnswer(body, "qr_string") ?? unwrapAnswer(body, "status");
  const qr = text(answer?.qr_string);
  const token = text(answer?.token);
  const clientId = text(answer?.client_id);
  if (qr === null || token === null || clientId === null) {
    const status =
      isRecord(body) && isRecord(body.status) ? body.status : isRecord(answer?.status) ? answer.status : null;
    const code = text(status?.code);
    if (code === null || code === PAYWAY_OK) return null;
    const message = text(status?.message);
    return { refusal: `PayWay answered status ${code}${message === null ? "" : ` "${message}"`}` };
  }
  const sent = parseJson(request.postData);
  const requestTime = isRecord(sent) ? text(sent.request_time) : null;
  if (requestTime === null) return null;
  const info: LinkSessionInfo = {
    qr,
    clientId,
    deeplink: paywayDeeplink(qr),
    poll: { token, clientId, requestTime, expireInSec: text(answer?.expire_in_sec) },
  };
  // What the payer will pay is what the QR says: its amount and currency are checked against the request.
  const decoded = decodeKhqr(qr);
  if (decoded.status.code === 0) {
    const currency = decoded.data.transactionCurrency;
    if (currency === "116" || currency === "840") info.currency = Number(currency) as 116 | 840;
    if (decoded.data.transactionAmount !== null) info.amount = decoded.data.transactionAmount;
  } else {
    const fields =
      isRecord(sent) && typeof sent.additional_fields === "string" ? parseJson(sent.additional_fields) : null;
    const amount = isRecord(fields) ? text(fields.amount) : null;
    if (amount !== null) info.amount = amount;
  }
  return info;
}

function parseJson(raw: string | null): unknown {
  if (raw === null) return null;
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}

export interface PaywayStatus {
  /** data.action as the API wrote it. */
  action: string;
  declined: boolean;
  /** Known to public code (else it is logged: the page may have changed). */
  known: boolean;
  receiptUrl: string | null;
  /** status.code of the call, and data.message when it says something. */
  code: string | null;
  message: string | null;
}

/** The answer of check-payment-status: {status{code,message,tran_id}, data{"rq-time", action, message{…}, …}}. */
export function readPaywayStatus(body: unknown): PaywayStatus | null {
  if (!isRecord(body)) return null;
  const data = isRecord(body.data) ? body.data : "action" in body ? body : null;
  const action = text(data?.action);
  if (data === null || action === null) return null;
  const status = isRecord(body.status) ? body.status : null;
  const message = isRecord(data.message) ? text(data.message.message) : text(data.message);
  return {
    action,
    declined: DECLINED.has(action.toLowerCase()),
    known: KNOWN.has(action),
    receiptUrl: text(data.download_receipt),
    code: text(status?.code),
    message,
  };
}
