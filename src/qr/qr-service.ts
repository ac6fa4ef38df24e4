import type { Clock } from "../clock.js";
import { AppError, type FieldError } from "../errors.js";
import { newId } from "../ids.js";
import type { KeyPrincipal } from "../auth/principal.js";
import type { AdminService } from "../admin/admin-service.js";
import type { Authenticator } from "../auth/keys.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { TxRecord } from "../transactions/record.js";
import { checkMeta, decimalFromNumber, NUMERIC_TO_CODE } from "../transactions/money.js";
import { encodeKhqr, decodeKhqr, formatKhqrAmount, verifyKhqr, type KhqrDecodeResult } from "../khqr/index.js";
import type { Merchant } from "../admin/merchant.entity.js";

export const EXPIRED_AFTER_MIN = 10_000;
export const EXPIRED_AFTER_MAX = 86_400_000;

export interface QrView {
  transactionId: string;
  expiredAt: string;
  status: string;
  requestData: { amount: number; currency: number; expiredAfter: number; meta: Record<string, unknown> };
  data: { qr: string; md5: string };
  clientToken?: string;
}

/** What a QR pays, for the network simulator's answers. */
export interface IssuedFacts {
  toAccountId: string;
  amount: string;
  currency: string;
}

/** The generic QR area: issue a KHQR for the key's merchant, read it back by md5, verify and decode strings. */
export class QrService {
  constructor(
    private readonly store: TransactionStore,
    private readonly admin: Pick<AdminService, "merchantForIssue">,
    private readonly auth: Pick<Authenticator, "issueClientToken">,
    private readonly clock: Clock,
    /** Demo/tests: tells the network simulator what a QR pays (the payee side of the transfer). */
    private readonly onIssued: ((md5: string, facts: IssuedFacts) => void) | null = null,
  ) {}

  async generate(
    key: KeyPrincipal,
    input: { amount: unknown; currency: unknown; expiredAfter: unknown; meta?: unknown },
  ): Promise<QrView> {
    const errors: FieldError[] = [];
    const currency = input.currency === 840 || input.currency === 116 ? input.currency : null;
    if (currency === null) errors.push({ field: "currency", message: "must be 840 (USD) or 116 (KHR)" });
    const amount = decimalFromNumber(input.amount, "amount", currency === 116 ? 0 : 2, errors);
    // The QR's amount field holds at most 13 characters (KHR 9 999 999 999 999, USD 9 999 999 999.99).
    if (amount !== null && currency !== null && formatKhqrAmount(amount, currency) === null)
      errors.push({ field: "amount", message: "is too large for a KHQR (at most 13 characters)" });
    const expiredAfter = input.expiredAfter;
    if (
      typeof expiredAfter !== "number" ||
      !Number.isInteger(expiredAfter) ||
      expiredAfter < EXPIRED_AFTER_MIN ||
      expiredAfter > EXPIRED_AFTER_MAX
    ) {
      errors.push({
        field: "expiredAfter",
        message: `must be a whole number of milliseconds from ${EXPIRED_AFTER_MIN} to ${EXPIRED_AFTER_MAX}`,
      });
    }
    const meta = checkMeta(input.meta, "meta", errors);
    if (errors.length > 0 || amount === null || currency === null)
      throw new AppError(
        "BAD_USER_INPUT",
        `Invalid request: ${errors.map((e) => `${e.field} ${e.message}`).join("; ")}`,
        errors,
      );

    const merchant = await this.admin.merchantForIssue(key.merchantRef);
    if (merchant === null) throw new AppError("INTERNAL", "The key's merchant is missing");
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + (expiredAfter as number));
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
      md5,
      qr,
      meta,
      request: { amount: input.amount, currency, expiredAfter },
      expiresAt,
      nextCheckAt: now,
    });
    this.onIssued?.(md5, {
      toAccountId: merchant.bakongAccountId,
      amount: Number(amount).toFixed(currency === 116 ? 0 : 2),
      currency: NUMERIC_TO_CODE[currency],
    });
    return { ...this.view(tx), clientToken: this.auth.issueClientToken(tx.id, tx.expiresAt) };
  }

  async check(key: KeyPrincipal, md5: unknown): Promise<QrView> {
    if (typeof md5 !== "string" || !/^[0-9a-f]{32}$/i.test(md5))
      throw new AppError("BAD_USER_INPUT", "md5 must be 32 hex characters", [
        { field: "md5", message: "must be 32 hex characters" },
      ]);
    const tx = await this.store.findForKey(key.keyId, { md5: md5.toLowerCase(), area: "qr" });
    if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    return this.view(tx);
  }

  verify(qrData: unknown): boolean {
    return typeof qrData === "string" && verifyKhqr(qrData, this.clock.now().getTime());
  }

  decode(qrData: unknown): KhqrDecodeResult {
    if (typeof qrData !== "string")
      throw new AppError("BAD_USER_INPUT", "qrData must be a string", [
        { field: "qrData", message: "must be a string" },
      ]);
    return decodeKhqr(qrData);
  }

  view(tx: TxRecord): QrView {
    const req = tx.request as { amount: number; currency: number; expiredAfter: number };
    return {
      transactionId: tx.id,
      expiredAt: tx.expiresAt.toISOString(),
      status: tx.status,
      requestData: { amount: req.amount, currency: req.currency, expiredAfter: req.expiredAfter, meta: tx.meta },
      data: { qr: tx.qr ?? "", md5: tx.md5 ?? "" },
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
