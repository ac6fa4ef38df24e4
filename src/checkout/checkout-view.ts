import QRCode from "qrcode";
import type { AdminService } from "../admin/admin-service.js";
import type { Authenticator } from "../auth/keys.js";
import type { TransactionQuery } from "../transactions/transaction-query.js";
import { moneyText } from "../transactions/money.js";
import { AppError } from "../errors.js";
import { TtlCache } from "../cache/ttl-cache.js";

/**
 * What a clientToken shows of its one transaction: the checkout view (README "Client tokens") and nothing else —
 * never meta, payer details, internal ids or upstream answers.
 */
export interface CheckoutView {
  transactionId: string;
  status: string;
  amount: string;
  currency: string;
  qr: string | null;
  /** The QR as a PNG data URL, rendered from `qr`. */
  qrImage: string | null;
  expiredAt: string;
  receiptUrl: string | null;
  scanned: boolean;
  merchantName: string;
  /** The upstream's link into the payer's banking app, where the area's upstream gave one (hosted gateway, PayWay). */
  deeplink: string | null;
}

const httpUrl = (v: unknown): string | null => (typeof v === "string" && /^https?:\/\//i.test(v) ? v : null);

export class CheckoutViews {
  /**
   * The PNG of a QR, by its text: a page reloaded over and over (or a leaked token in a loop) costs one row read
   * per request, not a PNG rendering each time.
   */
  private readonly images = new TtlCache<string>(10 * 60_000, () => Date.now(), 2_000);

  constructor(
    private readonly auth: Pick<Authenticator, "verifyClientToken">,
    private readonly query: Pick<TransactionQuery, "one">,
    private readonly admin: Pick<AdminService, "merchant">,
  ) {}

  /** The view for `transactionId`, if `clientToken` is that transaction's live token; else UNAUTHENTICATED / NOT_FOUND. */
  async view(transactionId: string, clientToken: string | undefined): Promise<CheckoutView> {
    const principal = clientToken === undefined ? null : await this.auth.verifyClientToken(clientToken);
    if (principal === null || principal.type !== "client")
      throw new AppError("UNAUTHENTICATED", "A valid clientToken is required (Authorization: Bearer ct_…)");
    const tx = await this.query.one(principal, transactionId);
    if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    const merchant = await this.admin.merchant(tx.merchantRef);
    // Whatever area gave one (the upstream's link into the payer's banking app); an area that gives none stores none.
    const deeplink = httpUrl(tx.upstream.deeplink) ?? appLink(tx.upstream.deeplink);
    return {
      transactionId: tx.id,
      status: tx.status,
      amount: moneyText(tx.amount, tx.currency),
      currency: tx.currency,
      qr: tx.qr,
      qrImage: tx.qr === null ? null : await this.image(tx.qr),
      expiredAt: tx.expiresAt.toISOString(),
      receiptUrl: httpUrl(tx.receiptUrl),
      scanned: tx.upstream.scannedAt !== undefined,
      merchantName: merchant?.merchantName ?? "",
      deeplink,
    };
  }

  private async image(qr: string): Promise<string | null> {
    return this.images.get(qr, () => QRCode.toDataURL(qr, { errorCorrectionLevel: "M", margin: 1, width: 320 }));
  }
}

/** A banking app's own scheme (e.g. `abamobilebank://…`) is a deeplink too; script and data URLs are not. */
function appLink(v: unknown): string | null {
  if (typeof v !== "string") return null;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(v)?.[1]?.toLowerCase();
  return scheme && !["javascript", "data", "vbscript", "file", "blob"].includes(scheme) ? v : null;
}
