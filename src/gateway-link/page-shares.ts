// Fair shares of the browser pool. Two uses of a page: opening (a generate drives its payment page to the QR: a
// second or two) and holding (a page kept for a payment: one a PayWay payment is polled through after its own polls
// were refused, for its 180 s and then its late watch). One tenant's payments could otherwise
// take every page of the worker, and every other tenant's generate failed. So each merchant, and each of its
// payment-link configurations, may hold and open only so many pages at once, and held pages in all never take the
// pages kept for opening. Pure accounting: BrowserPool consults it before it takes a slot (browser.ts).

/** Whose page: the merchant and the payment-link configuration of the payment. */
export interface PageOwner {
  merchant: string;
  config: string;
}

export interface ShareCaps {
  /** Pages held at once on this worker, all owners together (LINK_MAX_MONITORS); the rest of the pool opens. */
  held: number;
  heldPerMerchant: number;
  heldPerConfig: number;
  opensPerMerchant: number;
  opensPerConfig: number;
}

export type ShareScope = "configuration" | "merchant" | "worker";

/** Why a page was refused to its owner: which share is used up, and when to try again. */
export interface ShareRefusal {
  kind: "open" | "hold";
  scope: ShareScope;
  cap: number;
  /** An open: a second (opens last about that). A hold: until the first of that share's held pages may be taken. */
  retryAfterMs: number;
}

/** A page, held or needed, of an owner's payment that is kept from others until `until`. */
export interface Claim {
  owner: PageOwner;
  until: number;
}

/** One page counted against its owner's shares. */
export class ShareTicket {
  /** Set by the pool once the page is in use: closes it, for a payment that needs it more. */
  evict: (() => void) | null = null;
  released = false;

  constructor(
    readonly owner: PageOwner,
    public kind: "open" | "hold",
    /** A held page is kept for its payment until then (ms, the service's clock); after it, it may be taken. */
    public until: number,
  ) {}
}

const OPEN_RETRY_MS = 1000;

export class PageShares {
  private readonly tickets = new Set<ShareTicket>();

  constructor(
    private readonly caps: ShareCaps,
    private readonly now: () => number,
  ) {}

  /** Counts a page for `owner`: an open, or a hold kept until `until`. Returns the refusal instead when over a share. */
  take(owner: PageOwner, until: number | null): ShareTicket | ShareRefusal {
    if (until === null) {
      const refusal = this.openRefusal(owner);
      if (refusal) return refusal;
      const ticket = new ShareTicket(owner, "open", 0);
      this.tickets.add(ticket);
      return ticket;
    }
    const refusal = this.makeRoom(owner, until);
    if (refusal) return refusal;
    const ticket = new ShareTicket(owner, "hold", until);
    this.tickets.add(ticket);
    return ticket;
  }

  release(ticket: ShareTicket): void {
    ticket.released = true;
    ticket.evict = null;
    this.tickets.delete(ticket);
  }

  /**
   * Whether a new payment of `owner` could have a page held for it now, by its own shares (a generate asks before it
   * opens: a payment it could not follow is refused, not issued). Pages kept past their payment's expiry do not count;
   * `waiting` are payments still within their time that need a page and have none yet: they count as held;
   * pages opening do not (each is closed once its QR is read).
   */
  holdRefusal(owner: PageOwner, waiting: readonly Claim[] = []): ShareRefusal | null {
    const now = this.now();
    for (const scope of ["merchant", "configuration"] as const) {
      const cap = this.capOf("hold", scope);
      const claims = [...this.held(owner, scope), ...waiting.filter((w) => within(w.owner, owner, scope))];
      const protectedClaims = claims.filter((t) => t.until > now);
      if (protectedClaims.length >= cap) return this.holdsFull(scope, cap, protectedClaims);
    }
    return null;
  }

  counts(): { held: number; opening: number } {
    let held = 0;
    for (const t of this.tickets) if (t.kind === "hold") held++;
    return { held, opening: this.tickets.size - held };
  }

  private openRefusal(owner: PageOwner): ShareRefusal | null {
    for (const scope of ["merchant", "configuration"] as const) {
      const cap = this.capOf("open", scope);
      if (this.count("open", owner, scope) >= cap) return { kind: "open", scope, cap, retryAfterMs: OPEN_RETRY_MS };
    }
    return null;
  }

  /**
   * Room for one more held page of `owner`. Over a share, a payment
   * still within its time may take the page of one that is past it (a late watch), the oldest first, in the narrowest
   * share that is full; a page kept past its time takes nobody's.
   */
  private makeRoom(owner: PageOwner, until: number): ShareRefusal | null {
    const now = this.now();
    for (;;) {
      const full = (["configuration", "merchant", "worker"] as const).filter(
        (scope) => this.held(owner, scope).length >= this.capOf("hold", scope),
      );
      if (full.length === 0) return null;
      // A page of the narrowest full share frees every full share (a configuration's pages are its merchant's).
      const victim =
        until > now
          ? this.held(owner, full[0])
              .filter((t) => t.until <= now && t.evict !== null)
              .sort((a, b) => a.until - b.until)[0]
          : undefined;
      if (victim === undefined) {
        // Named by the widest of the owner's own full shares (the merchant's, when a configuration has as much).
        const scope = full.includes("merchant") ? "merchant" : full[0];
        const protectedHolds = this.held(owner, scope).filter((t) => t.until > now);
        return this.holdsFull(scope, this.capOf("hold", scope), protectedHolds);
      }
      const evict = victim.evict as () => void;
      this.release(victim);
      evict();
    }
  }

  private holdsFull(scope: ShareScope, cap: number, protectedHolds: readonly Claim[]): ShareRefusal {
    const first = Math.min(...protectedHolds.map((t) => t.until));
    const wait = Number.isFinite(first) ? first - this.now() : OPEN_RETRY_MS;
    return { kind: "hold", scope, cap, retryAfterMs: Math.max(OPEN_RETRY_MS, wait) };
  }

  private held(owner: PageOwner, scope: ShareScope): ShareTicket[] {
    return [...this.tickets].filter((t) => t.kind === "hold" && within(t.owner, owner, scope));
  }

  private count(kind: "open" | "hold", owner: PageOwner, scope: ShareScope): number {
    let n = 0;
    for (const t of this.tickets) if (t.kind === kind && within(t.owner, owner, scope)) n++;
    return n;
  }

  private capOf(kind: "open" | "hold", scope: ShareScope): number {
    const c = this.caps;
    if (scope === "worker") return kind === "hold" ? c.held : Number.POSITIVE_INFINITY;
    if (kind === "hold") return scope === "merchant" ? c.heldPerMerchant : c.heldPerConfig;
    return scope === "merchant" ? c.opensPerMerchant : c.opensPerConfig;
  }
}

function within(a: PageOwner, b: PageOwner, scope: ShareScope): boolean {
  if (scope === "worker") return true;
  if (scope === "merchant") return a.merchant === b.merchant;
  return a.merchant === b.merchant && a.config === b.config;
}

/**
 * The owner of a stored payment's page: its merchant and its configuration (on a payment stored before the
 * configuration was named on it, its link's URL).
 */
export function ownerOf(tx: { merchantRef: string; upstream: Record<string, unknown> }): PageOwner {
  const config = tx.upstream.linkConfigId ?? tx.upstream.linkUrl;
  return { merchant: tx.merchantRef, config: typeof config === "string" ? config : "" };
}
