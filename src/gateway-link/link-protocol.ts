// What the driver needs to know about a payment-link page: where to type, what to press, and
// how to recognise and read the page's own API traffic. The real hosted page publishes no
// protocol, so this is an adapter, chosen by LINK_PAGE_PROTOCOL: `simulatedLinkProtocol` speaks our
// simulator's (docs/link-simulator.md); pointing at the real page means writing one more adapter here.

export type LinkAction = "request_qr" | "scanned" | "approved";

export interface LinkSessionInfo {
  qr: string;
  clientId: string;
  /** When the page reports them, the driver checks they match what it asked for. */
  currency?: 116 | 840;
  amount?: string;
  /** Current action, when a resumed page reports it with the session. */
  action?: LinkAction;
}

export interface LinkStatus {
  action: LinkAction;
  receiptUrl?: string;
}

export type LinkCall = "request_qr" | "resume" | "status";

export interface LinkPageProtocol {
  amountSelector: string;
  payButtonSelector: string;
  /** Which API call a response belongs to, by its URL (already checked to be the page's origin). */
  classify(url: URL): LinkCall | null;
  parseSession(body: unknown): LinkSessionInfo | null;
  parseStatus(body: unknown): LinkStatus | null;
  /** The URL that reopens an existing payment, or null when this page cannot resume. */
  resumeUrl(linkUrl: string, clientId: string): string | null;
}

const ACTIONS: ReadonlySet<string> = new Set<LinkAction>(["request_qr", "scanned", "approved"]);

export const simulatedLinkProtocol: LinkPageProtocol = {
  amountSelector: "#amount",
  payButtonSelector: "#pay-button",
  classify(url) {
    const m = /\/sim\/link\/api\/(request_qr|resume|status)$/.exec(url.pathname);
    return m ? (m[1] as LinkCall) : null;
  },
  parseSession(body) {
    if (!isRecord(body) || !nonEmpty(body.qr) || !nonEmpty(body.clientId)) return null;
    const info: LinkSessionInfo = { qr: body.qr, clientId: body.clientId };
    if (body.currency === "KHR") info.currency = 116;
    if (body.currency === "USD") info.currency = 840;
    if (typeof body.amount === "string") info.amount = body.amount;
    if (typeof body.action === "string" && ACTIONS.has(body.action)) info.action = body.action as LinkAction;
    return info;
  },
  parseStatus(body) {
    if (!isRecord(body) || typeof body.action !== "string" || !ACTIONS.has(body.action)) return null;
    const status: LinkStatus = { action: body.action as LinkAction };
    if (nonEmpty(body.receiptUrl)) status.receiptUrl = body.receiptUrl;
    return status;
  },
  resumeUrl(linkUrl, clientId) {
    const url = new URL(linkUrl);
    url.searchParams.set("clientId", clientId);
    return url.toString();
  },
};

/** The adapters LINK_PAGE_PROTOCOL chooses from (config.ts lists the same names). */
export const LINK_PAGE_PROTOCOLS: Record<"simulated", LinkPageProtocol> = { simulated: simulatedLinkProtocol };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function nonEmpty(value: unknown): value is string {
  return typeof value === "string" && value.length > 0;
}
