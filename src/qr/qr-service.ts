import { checkedReturnUrl, issueCheckout } from "../auth/checkout-link.js";
import type { Clock } from "../clock.js";
import { AppError } from "../errors.js";
import { newId } from "../ids.js";
import type { KeyPrincipal } from "../auth/principal.js";
import type { AdminService } from "../admin/admin-service.js";
import type { Authenticator } from "../auth/keys.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { TxRecord } from "../transactions/record.js";
import { NUMERIC_TO_CODE } from "../money/money.js";
import { decimalInput } from "../validation/check.js";
import { checkArgument } from "../validation/checker.js";
import { matches } from "../validation/rules.js";
import { MD5, type GenerateQrInput } from "./qr.types.js";
import { encodeKhqr, decodeKhqr, verifyKhqr, type KhqrDecodeResult } from "../khqr/index.js";
import type { Merchant } from "../admin/merchant.entity.js";

export interface QrView {
  transactionId: string;
  expiredAt: string;
  status: string;
  requestData: { amount: number; currency: number; expiredAfter: number; meta: Record<string, unknown> };
  data: { qr: string; md5: string };
  clientToken?: string;
  checkoutUrl?: string;
  /** generate only, for a merchant with deeplink settings: the network's short link, or null when it failed. */
  deeplink?: string | null;
}

/** What `check` takes (a string: the casts after it rely on that). */

/** The generate waits at most this long for the deeplink (then answers without it). */
const DEEPLINK_WAIT_MS = 3000;

/** The network's generate_deeplink_by_qr for a merchant's settings; null on any failure (best effort). */
export type DeeplinkMaker = (
  qr: string,
  source: { appName: string; appIconUrl: string; appDeepLinkCallback: string },
) => Promise<string | null>;

/** The generic QR area: issue a KHQR for the key's merchant, read it back by md5, verify and decode strings. */
export class QrService {
  constructor(
    private readonly store: TransactionStore,
    private readonly admin: Pick<AdminService, "merchantForIssue">,
    private readonly auth: Pick<Authenticator, "issueClientToken">,
    private readonly clock: Clock,
    /** Where the hosted checkout page is (checkoutUrl). */
    private readonly baseUrl = "",
    private readonly deeplinks: DeeplinkMaker | null = null,
  ) {}

  /** `input` is checked already (its class's rules, src/validation); here it becomes a transaction. */
  async generate(key: KeyPrincipal, input: GenerateQrInput): Promise<QrView> {
    const { currency, expiredAfter } = input;
    const amount = decimalInput(input.amount, "amount", currency === 116 ? 0 : 2);
    const meta = input.meta ?? {};
    const returnUrl = checkedReturnUrl(input.returnUrl, this.baseUrl);
    const merchant = await this.admin.merchantForIssue(key.merchantRef);
    if (merchant === null) throw new AppError("INTERNAL", "The key's merchant is missing");
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + expiredAfter);
    const id = newId("txn");
    const { qr, md5 } = encodeKhqr({
      ...khqrAccount(merchant),
      currency,
      amount,
      billNumber: id.slice(4, 29),
      creationTimestamp: now.getTime(),
      expirationTimestamp: expiresAt.getTime(),
    });
    const { tx } = await this.store.create({
      id,
      area: "qr",
      merchantRef: key.merchantRef,
      apiKeyRef: key.keyId,
      status: "PENDING",
      amount,
      currency: NUMERIC_TO_CODE[currency],
      upstreamRef: md5,
      qr,
      meta,
      request: { amount: input.amount, currency, expiredAfter, ...(returnUrl === undefined ? {} : { returnUrl }) },
      expiresAt,
      nextCheckAt: now,
    });
    const view = { ...this.view(tx), ...issueCheckout(this.auth, this.baseUrl, tx.id, tx.expiresAt, tx.apiKeyRef) };
    const { deeplinkAppName: appName, deeplinkAppIconUrl: appIconUrl, deeplinkCallback } = merchant;
    if (this.deeplinks === null || !appName || !appIconUrl || !deeplinkCallback) return view;
    // Best effort: a failure leaves it null and never fails the generate (the transaction exists already).
    const asked = this.deeplinks(qr, { appName, appIconUrl, appDeepLinkCallback: deeplinkCallback });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), DEEPLINK_WAIT_MS)));
    const deeplink = await Promise.race([asked.catch(() => null), late]).finally(() => clearTimeout(timer));
    return { ...view, deeplink };
  }

  /** The generate answer rebuilt from its transaction (an Idempotency-Key retry after a crash). */
  async replay(key: KeyPrincipal, transactionId: string): Promise<QrView> {
    const tx = await this.store.findForKey(key.keyId, { id: transactionId, area: "qr" });
    if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    return { ...this.view(tx), ...issueCheckout(this.auth, this.baseUrl, tx.id, tx.expiresAt, tx.apiKeyRef) };
  }

  async check(key: KeyPrincipal, md5: unknown): Promise<QrView> {
    checkArgument("md5", md5, MD5, "md5 must be 32 hex characters");
    const tx = await this.store.findForKey(key.keyId, { upstreamRef: (md5 as string).toLowerCase(), area: "qr" });
    if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    return this.view(tx);
  }

  verify(qrData: unknown): boolean {
    return typeof qrData === "string" && verifyKhqr(qrData, this.clock.now().getTime());
  }

  decode(qrData: unknown): KhqrDecodeResult {
    checkArgument("qrData", qrData, matches("must be a string"), "qrData must be a string");
    return decodeKhqr(qrData as string);
  }

  view(tx: TxRecord): QrView {
    const req = tx.request as { amount: number; currency: number; expiredAfter: number };
    return {
      transactionId: tx.id,
      expiredAt: tx.expiresAt.toISOString(),
      status: tx.status,
      requestData: { amount: req.amount, currency: req.currency, expiredAfter: req.expiredAfter, meta: tx.meta },
      data: { qr: tx.qr ?? "", md5: tx.upstreamRef ?? "" },
    };
  }
}

export function khqrAccount(m: Merchant) {
  return {
    accountType: m.accountType,
    bakongAccountId: m.bakongAccountId,
    merchantName: m.merchantName,
    merchantCity: m.merchantCity,
    merchantId: m.merchantId ?? undefined,
    acquiringBank: m.acquiringBank ?? undefined,
    merchantCategoryCode: m.merchantCategoryCode,
  };
}
