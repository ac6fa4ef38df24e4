// What the driver needs to know about a payment-link page: where to type, what to press, and
// how to recognise and read the page's own API traffic. Hosted pages publish no protocol, so each is an
// adapter, named per link configuration: `paywayLinkProtocol` (payway-protocol.ts) reads a real ABA PayWay link's,
// the one adapter there is (docs/decisions/0216-the-old-simulated-link-page-retired.md).

import type { PageRequest } from "./chromium.js";

export type LinkAction = "request_qr" | "scanned" | "approved";

export interface LinkSessionInfo {
  qr: string;
  clientId: string;
  /** When the page reports them, the driver checks they match what it asked for. */
  currency?: 116 | 840;
  amount?: string;
  /** A link that opens the payer's banking app on this QR, when the protocol knows how to make one. */
  deeplink?: string;
  /** What the worker needs to follow the payment without the page (its status poll). */
  poll?: LinkPollSeed;
}

/** The page's own status poll, as the page would send it: the parts its QR answer gave. */
export interface LinkPollSeed {
  token: string;
  clientId: string;
  /** The page's original request_time: every poll repeats it. */
  requestTime: string;
  /** What the page said of the QR's lifetime (the service keeps its own 180 s; a difference is logged). */
  expireInSec: string | null;
}

/**
 * A payment followed without its page: the page's own status call, repeated by the worker with what the page had
 * (its token, client id, original request_time, cookies and the headers its requests carried). The token and the
 * cookies are secrets: stored sealed (poll-store.ts).
 */
export interface LinkPollSession {
  apiOrigin: string;
  token: string;
  clientId: string;
  requestTime: string;
  /** Cookie header as the browser would send it to the API. */
  cookies: string;
  origin: string;
  referer: string;
  userAgent: string | null;
  language: string | null;
  expireInSec: string | null;
}

/** The page's API answered, and refused to issue a QR (its reason, to be shown on the FAILED transaction). */
export interface LinkRefusal {
  refusal: string;
}

export interface LinkStatus {
  action: LinkAction;
  receiptUrl?: string;
}

/** The page reported an action the adapter does not know: the payment is still pending, and nothing changes. */
export interface LinkPending {
  /** The action as the page wrote it (told once per page, then ignored). */
  pending: string;
}

export type LinkCall = "request_qr" | "status";

/**
 * What a payer may tell a page besides the amount: the generate request's optional fields, named as there. A page
 * that asks for one (a PayWay link's required_fields) has it filled in; one it requires and the request lacks is the
 * caller's error (400 naming it).
 */
export interface PayerFields {
  remark?: string;
  payerName?: string;
  payerEmail?: string;
  payerPhone?: string;
}

export type PayerField = keyof PayerFields;

/** What the payment asked of a page, as its check sees it. */
export interface PageWant {
  amount: string;
  currency: 116 | 840;
  payer?: PayerFields;
}

/** What the page's state says of this payment (PageCheck.verify): refuse it, warn, or how to fill the form. */
export interface PageVerdict {
  /** The page cannot take this payment for a reason of its own (its currency): 502, a FAILED transaction. */
  refusal?: string;
  warning?: string;
  /** The request does not fit the link (its fixed amount, its bounds, a field it requires): 400, nothing stored. */
  invalid?: { field: string; message: string }[];
  /** The link fixes the amount (it equals the request's, else `invalid` says so): nothing is typed. */
  fixedAmount?: string;
  /** The extra fields the page asks for that the request gives, to fill in. */
  fill?: { field: PayerField; value: string }[];
}

/** The page's own state, read before typing; what it must say about the payment asked for. */
export interface PageCheck {
  /** Evaluated in the page once its document is parsed; its value goes to verify(). */
  expression: string;
  verify(value: unknown, want: PageWant): PageVerdict;
}

/**
 * How a page's form is filled as a visitor would fill it (page-form.ts), instead of fixed selectors: the amount
 * field chosen by its kind and wording once it is visible and enabled, Continue by its wording once enabled.
 */
export interface VisitorForm {
  /** Words (any case) a label or placeholder of the amount field contains. */
  amountWords: readonly string[];
  /** Words (any case) of the button that submits the form. */
  continueWords: readonly string[];
  /** How each extra field the page may ask for is recognised. */
  fields: Record<PayerField, FieldHints>;
}

export interface FieldHints {
  /** `name` or `id` attributes the field has on this page (exactly, any case). */
  names: readonly string[];
  /** The input type a browser form gives this kind of field (`email`, `tel`), if any. */
  type?: string;
  /** Words (any case) its label or placeholder contains. */
  words: readonly string[];
}

export interface LinkPageProtocol {
  name: LinkProtocolName;
  /** How the form is filled: as a visitor would (fields by kind and wording, once hydrated: page-form.ts). */
  form: VisitorForm;
  /** Where the page's API lives when it is not on the page's own origin (then allowed for the page too). */
  apiOrigin?: string;
  /** Which API call a response belongs to, by its URL (already checked to be the page's or its API's origin). */
  classify(url: URL): LinkCall | null;
  parseSession(body: unknown, request: PageRequest): LinkSessionInfo | LinkRefusal | null;
  /** A status answer: what it says, still pending in words the adapter does not know, or null when unreadable. */
  parseStatus(body: unknown): LinkStatus | LinkPending | null;
  pageCheck?: PageCheck;
}

/**
 * The adapters a link configuration may name. Once its QR is read a page is closed, and the worker polls the page's
 * API itself (LinkSessionInfo.poll, link-watch.ts).
 */
export type LinkProtocolName = "payway";
export const LINK_PROTOCOL_NAMES: readonly LinkProtocolName[] = ["payway"];

export function isRefusal(v: LinkSessionInfo | LinkRefusal): v is LinkRefusal {
  return "refusal" in v;
}
