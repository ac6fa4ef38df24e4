import QRCode from "qrcode";
import { returnUrlShapeProblem } from "../validation/return-url.js";
import type { AdminService } from "../admin/admin-service.js";
import type { Authenticator } from "../auth/keys.js";
import type { TransactionQuery } from "../transactions/transaction-query.js";
import { moneyText } from "../money/money.js";
import { AppError } from "../errors.js";
import { TtlCache } from "../cache/ttl-cache.js";

/**
 * What a clientToken shows of its one transaction: the checkout view (docs/api.md "Client tokens") and nothing else —
 * never meta, payer details, internal ids or upstream answers. Besides these, the fields the areas show there
 * (AreaDefinition.data: a receipt, a scan, a deeplink), each after the key its declaration names.
 */
export interface CheckoutView extends Record<string, unknown> {
  transactionId: string;
  status: string;
  amount: string;
  currency: string;
  qr: string | null;
  /** The QR as a PNG data URL, rendered from `qr`. */
  qrImage: string | null;
  expiredAt: string;
  merchantName: string;
  /**
   * When it was paid (SUCCESS only; ISO 8601): the upstream's own time of the payment where its area keeps one (the
   * national network's, for a KHQR: for a late payment found long after, when the money moved), else when the
   * service recorded it (AreaDefinition.data.paidAt).
   */
  paidAt: string | null;
  /**
   * What the payer's bank or the gateway knows the payment by (SUCCESS only; docs/checkout.md), as its area
   * says (AreaDefinition.data.reference: the network's transaction hash, the hosted gateway's order id, the payment
   * link's client id); never meta, the payer's account or our internal ids.
   */
  reference: string | null;
  /**
   * Where the page sends the payer back after the final state: the generate request's `returnUrl`, else the
   * merchant's; null when neither (validation/return-url.ts, checked again here).
   */
  returnUrl: string | null;
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
    private readonly query: Pick<TransactionQuery, "one" | "views">,
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
    const views = this.query.views;
    const core: [string, unknown][] = [
      ["transactionId", tx.id],
      ["status", tx.status],
      ["amount", moneyText(tx.amount, tx.currency)],
      ["currency", tx.currency],
      ["qr", tx.qr],
      ["qrImage", tx.qr === null ? null : await this.image(tx.qr)],
      ["expiredAt", tx.expiresAt.toISOString()],
      ["merchantName", merchant?.merchantName ?? ""],
      ["paidAt", tx.status === "SUCCESS" ? (views.paidAt(tx) ?? tx.completedAt ?? tx.updatedAt).toISOString() : null],
      ["reference", tx.status === "SUCCESS" ? views.reference(tx) : null],
      ["returnUrl", returnUrlOf(tx.request.returnUrl) ?? returnUrlOf(merchant?.returnUrl)],
    ];
    // The areas' fields; a link the payer's page may open only if it is one (an http(s) URL, or an app's scheme).
    return views.checkout(tx, core, (v, kind) => httpUrl(v) ?? (kind === "app" ? appLink(v) : null)) as CheckoutView;
  }

  /**
   * Level H (30 % recoverable), as the national card draws it: the page lays the KHQR currency mark over the
   * centre (about 1.5 % of the symbol's area, see checkout.css), which level M would also survive, but with less
   * to spare for a scratched or glaring phone screen.
   */
  private async image(qr: string): Promise<string | null> {
    return this.images.get(qr, () => QRCode.toDataURL(qr, { errorCorrectionLevel: "H", margin: 1, width: 320 }));
  }
}

/** A banking app's own scheme (e.g. `abamobilebank://…`) is a deeplink too; script and data URLs are not. */
function appLink(v: unknown): string | null {
  if (typeof v !== "string") return null;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(v)?.[1]?.toLowerCase();
  return scheme && !["javascript", "data", "vbscript", "file", "blob"].includes(scheme) ? v : null;
}

/** A stored return URL that still has a return URL's shape (an https or loopback http URL), else null. */
function returnUrlOf(v: unknown): string | null {
  return typeof v === "string" && returnUrlShapeProblem(v) === null ? v : null;
}
