// In-memory state of the payment-link simulator: one "client" per QR the page requested.
// The page identifies itself on every poll with a fresh request identifier; the store remembers
// the ones it has seen so tests can prove they change, and refuses a replayed one.

export type LinkAction = "request_qr" | "scanned" | "approved";
export type LinkCurrency = 116 | 840;

export interface LinkClient {
  readonly clientId: string;
  readonly slug: string;
  readonly amount: string;
  readonly currency: LinkCurrency;
  readonly qr: string;
  /** Origin of the page that asked for the QR; the receipt URL is built on it. */
  readonly origin: string;
  readonly createdAt: number;
  action: LinkAction;
  broken: boolean;
  /**
   * What a broken client's status and resume calls answer: 410 unless the break named another status. A definite
   * refusal of this payment by default (a 5xx is an outage the service waits out, and never fails a payment for).
   */
  brokenStatus: number;
  scannedAt?: number;
  approvedAt?: number;
  receiptUrl?: string;
  /** What the payer paid (its receipt's figures), when a test made it differ from the QR's amount and currency. */
  paid?: { amount?: string; currency?: LinkCurrency };
  /** Status polls answered or refused for this client, all time. */
  polls: number;
  lastPollAt?: number;
  /** The most recent request identifiers, oldest first (bounded). */
  readonly requestIds: string[];
}

export type ControlResult =
  { ok: true; client: LinkClient } | { ok: false; reason: "not_found" | "conflict"; message: string };

const REQUEST_IDS_KEPT = 200;
const SEEN_IDS_KEPT = 2000;

export class LinkClientStore {
  private readonly clients = new Map<string, LinkClient>();
  private readonly seen = new Map<string, Set<string>>();

  constructor(
    private readonly clock: () => number,
    private readonly retentionMs: number,
    private readonly maxClients: number,
  ) {}

  create(
    input: Omit<LinkClient, "action" | "broken" | "brokenStatus" | "polls" | "requestIds" | "createdAt">,
    requestId: string,
  ): LinkClient {
    this.evict();
    const client: LinkClient = {
      ...input,
      createdAt: this.clock(),
      action: "request_qr",
      broken: false,
      brokenStatus: 410,
      polls: 0,
      requestIds: [],
    };
    this.clients.set(client.clientId, client);
    this.seen.set(client.clientId, new Set());
    this.noteRequestId(client, requestId);
    return client;
  }

  get(clientId: string): LinkClient | undefined {
    return this.clients.get(clientId);
  }

  /** Records a request identifier; false when this client has already used it (a replay). */
  noteRequestId(client: LinkClient, requestId: string): boolean {
    const seen = this.seen.get(client.clientId) ?? new Set<string>();
    if (seen.has(requestId)) return false;
    seen.add(requestId);
    if (seen.size > SEEN_IDS_KEPT) {
      const oldest = seen.values().next().value;
      if (oldest !== undefined) seen.delete(oldest);
    }
    client.requestIds.push(requestId);
    if (client.requestIds.length > REQUEST_IDS_KEPT) client.requestIds.shift();
    return true;
  }

  notePoll(client: LinkClient): void {
    client.polls += 1;
    client.lastPollAt = this.clock();
  }

  scan(clientId: string): ControlResult {
    const client = this.clients.get(clientId);
    if (!client) return notFound(clientId);
    if (client.action === "approved")
      return { ok: false, reason: "conflict", message: `client ${clientId} is already approved` };
    if (client.action === "request_qr") {
      client.action = "scanned";
      client.scannedAt = this.clock();
    }
    return { ok: true, client };
  }

  /**
   * With `receiptLater`, the page reports approved without a receipt until `issueReceipt` (a gateway that
   * makes receipts asynchronously).
   */
  approve(
    clientId: string,
    opts: { receiptLater?: boolean; receiptUrl?: string; paid?: LinkClient["paid"] } = {},
  ): ControlResult {
    const client = this.clients.get(clientId);
    if (!client) return notFound(clientId);
    if (client.action !== "approved") {
      client.action = "approved";
      client.approvedAt = this.clock();
      if (opts.paid !== undefined) client.paid = opts.paid;
      // A page may report any receipt URL (tests drive a hostile one); the service decides what it keeps.
      if (opts.receiptUrl !== undefined) client.receiptUrl = opts.receiptUrl;
      if (!opts.receiptLater) this.setReceipt(client);
    }
    return { ok: true, client };
  }

  /** The receipt of an approved payment that was approved without one (idempotent). */
  issueReceipt(clientId: string): ControlResult {
    const client = this.clients.get(clientId);
    if (!client) return notFound(clientId);
    if (client.action !== "approved")
      return { ok: false, reason: "conflict", message: `client ${clientId} is not approved` };
    this.setReceipt(client);
    return { ok: true, client };
  }

  private setReceipt(client: LinkClient): void {
    client.receiptUrl ??= `${client.origin}/sim/link/receipt/${encodeURIComponent(client.clientId)}`;
  }

  breakClient(clientId: string, status = 410): ControlResult {
    const client = this.clients.get(clientId);
    if (!client) return notFound(clientId);
    client.broken = true;
    client.brokenStatus = status;
    return { ok: true, client };
  }

  /** Forgets clients older than the retention, and the oldest ones beyond the cap, so a long demo stays bounded. */
  private evict(): void {
    const cutoff = this.clock() - this.retentionMs;
    for (const [id, client] of this.clients) {
      if (client.createdAt >= cutoff && this.clients.size < this.maxClients) break;
      this.clients.delete(id);
      this.seen.delete(id);
    }
  }
}

function notFound(clientId: string): ControlResult {
  return { ok: false, reason: "not_found", message: `no payment-link client ${clientId}` };
}
