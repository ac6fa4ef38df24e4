import { checkedReturnUrl, issueCheckout } from "../auth/checkout-link.js";
import QRCode from "qrcode";
import type { Clock } from "../clock.js";
import { AppError } from "../errors.js";
import { newId } from "../ids.js";
import type { KeyPrincipal } from "../auth/principal.js";
import type { Authenticator } from "../auth/keys.js";
import type { GatewayConfigs, GatewayCredentials } from "./gateway-configs.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { TxRecord } from "../transactions/record.js";
import { twoDecimals } from "../money/money.js";
import { decimalInput } from "../validation/check.js";
import { checkArgument, refuse } from "../validation/checker.js";
import { IDENTIFIER } from "../validation/rules.js";
import { gatewayItems, LIFETIME_DEFAULT, type GenerateGatewayQrInput } from "./gateway.types.js";
import type { GatewayClient } from "./upstream-client.js";
import { GATEWAY_KEY } from "./area.js";

/** Hosted gateway area: a dynamic QR from the gateway's signed QR API, stored and followed to the end. */
export class GatewayService {
  constructor(
    private readonly store: TransactionStore,
    private readonly configs: Pick<GatewayConfigs, "credentialsForUse">,
    private readonly auth: Pick<Authenticator, "issueClientToken">,
    private readonly client: GatewayClient,
    private readonly clock: Clock,
    /** Where the hosted checkout page is (checkoutUrl). */
    private readonly baseUrl = "",
    /** The configuration's pushback URL, sent as callback_url (null: none). */
    private readonly pushbackUrl: (configId: string) => string | null = () => null,
  ) {}

  /** `input` is checked already (its class's rules, src/validation); here it becomes the upstream request. */
  private read(input: GenerateGatewayQrInput) {
    const d = input.qrData;
    const currency = d.currency.toUpperCase() as "USD" | "KHR";
    return {
      orderId: d.orderId,
      currency,
      amount: decimalInput(d.amount, "qrData.amount", currency === "KHR" ? 0 : 2),
      firstName: d.firstName ?? undefined,
      lastName: d.lastName ?? undefined,
      email: d.email ?? undefined,
      phone: d.phone ?? undefined,
      items: d.items ? gatewayItems(d.items) : undefined,
      lifetime: d.lifetime ?? LIFETIME_DEFAULT,
      qrImageTemplate: d.qrImageTemplate ?? undefined,
      meta: input.metaData ?? {},
    };
  }

  async generate(key: KeyPrincipal, input: GenerateGatewayQrInput) {
    const v = this.read(input);
    const returnUrl = checkedReturnUrl(input.returnUrl, this.baseUrl);
    const creds = key.targetRef ? await this.configs.credentialsForUse(key.targetRef) : null;
    if (creds === null)
      throw refuse(
        "x-api-key",
        "is not linked to a gateway configuration",
        "This key has no merchant gateway configuration",
      );
    // Merchant-wide, so it covers this key's own orders too (the unique index backs it at insert).
    if (await this.orderIdTaken(key.merchantRef, v.orderId)) throw duplicate();
    const now = this.clock.now();
    // The QR API requires a template: the request's, else the configuration's.
    v.qrImageTemplate ??= creds.qrImageTemplate;
    const up = await this.askGateway(key, creds, v);
    const qrImage =
      up.qrImage ?? (await QRCode.toDataURL(up.qrString, { errorCorrectionLevel: "M", margin: 1, width: 256 }));
    const expiresAt = new Date(now.getTime() + v.lifetime * 60_000);
    let tx: TxRecord;
    try {
      ({ tx } = await this.store.create({
        id: newId("txn"),
        area: "gateway",
        merchantRef: key.merchantRef,
        apiKeyRef: key.keyId,
        status: "CHECKOUT",
        amount: v.amount,
        currency: v.currency,
        upstreamRef: v.orderId,
        qr: up.qrString,
        meta: v.meta,
        request: {
          lifetime: v.lifetime,
          firstName: v.firstName,
          lastName: v.lastName,
          email: v.email,
          phone: v.phone,
          items: v.items,
          qrImageTemplate: v.qrImageTemplate,
          ...(returnUrl === undefined ? {} : { returnUrl }),
        },
        upstream: { gatewayStatus: up.status, deeplink: up.deeplink, appStore: up.appStore, playStore: up.playStore },
        expiresAt,
        nextCheckAt: now,
      }));
    } catch (err) {
      if ((err as { code?: string }).code === "23505") throw duplicate();
      throw err;
    }
    return {
      transactionId: tx.id,
      orderId: v.orderId,
      qrString: up.qrString,
      qrImage,
      deeplink: up.deeplink,
      appStore: up.appStore,
      playStore: up.playStore,
      amount: Number(v.amount),
      currency: v.currency,
      status: "CHECKOUT",
      gatewayStatus: up.status,
      expiresAt: expiresAt.toISOString(),
      ...issueCheckout(this.auth, this.baseUrl, tx.id, expiresAt, tx.apiKeyRef),
    };
  }

  /** generate-qr at the gateway; a tran_id the gateway already knows (its status 403) is our duplicate order. */
  private askGateway(key: KeyPrincipal, creds: GatewayCredentials, v: ReturnType<GatewayService["read"]>) {
    return this.client
      .generateQr(creds, {
        tranId: v.orderId,
        amount: v.amount,
        currency: v.currency,
        firstName: v.firstName,
        lastName: v.lastName,
        email: v.email,
        phone: v.phone,
        items: v.items,
        lifetimeMinutes: v.lifetime,
        qrImageTemplate: v.qrImageTemplate ?? creds.qrImageTemplate,
        callbackUrl: this.pushbackUrl(key.targetRef as string) ?? undefined,
      })
      .catch((err: unknown) => {
        const e = err as AppError;
        if (
          e instanceof AppError &&
          e.code === "UPSTREAM_REJECTED" &&
          (e.extra.gatewayStatus as { code?: string } | undefined)?.code === "403"
        )
          throw duplicate();
        throw err;
      });
  }

  /**
   * The generate answer rebuilt from its transaction (an Idempotency-Key retry after a crash between the
   * create and storing the answer). The QR image is drawn again from the stored QR string.
   */
  async replay(key: KeyPrincipal, transactionId: string) {
    const tx = await this.store.findForKey(key.keyId, { id: transactionId, area: "gateway" });
    if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    const qrString = tx.qr ?? "";
    const up = tx.upstream as {
      gatewayStatus: { code: string; message: string };
      deeplink: string;
      appStore: string;
      playStore: string;
    };
    return {
      transactionId: tx.id,
      orderId: tx.upstreamRef as string,
      qrString,
      qrImage: await QRCode.toDataURL(qrString, { errorCorrectionLevel: "M", margin: 1, width: 256 }),
      deeplink: up.deeplink,
      appStore: up.appStore,
      playStore: up.playStore,
      amount: Number(tx.amount),
      currency: tx.currency as "USD" | "KHR",
      status: tx.status,
      gatewayStatus: up.gatewayStatus,
      expiresAt: tx.expiresAt.toISOString(),
      ...issueCheckout(this.auth, this.baseUrl, tx.id, tx.expiresAt, tx.apiKeyRef),
    };
  }

  private async orderIdTaken(merchantRef: string, orderId: string): Promise<boolean> {
    return await this.store.upstreamRefExists(merchantRef, orderId, GATEWAY_KEY.kind);
  }

  async status(key: KeyPrincipal, by: { transactionId?: unknown; orderId?: unknown }) {
    const hasId = by.transactionId !== undefined && by.transactionId !== null;
    const hasOrder = by.orderId !== undefined && by.orderId !== null;
    if (hasId === hasOrder)
      throw refuse(
        hasId ? "orderId" : "transactionId",
        "send exactly one of transactionId or orderId",
        "Send exactly one of transactionId or orderId",
      );
    const value = hasId ? by.transactionId : by.orderId;
    checkArgument(hasId ? "transactionId" : "orderId", value, IDENTIFIER, "Invalid identifier");
    const ref = value as string; // IDENTIFIER admits only strings
    const tx = await this.store.findForKey(
      key.keyId,
      hasId ? { id: ref, area: "gateway" } : { upstreamRef: ref, area: "gateway" },
    );
    if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    return {
      transactionId: tx.id,
      orderId: tx.upstreamRef as string,
      status: tx.status,
      amount: twoDecimals(tx.amount),
      currency: tx.currency,
      expiredAt: tx.expiresAt.toISOString(),
      createdAt: tx.createdAt.toISOString(),
      gatewayStatus: tx.upstream.gatewayStatus as { code: string; message: string } | undefined,
    };
  }
}

function duplicate(): AppError {
  return new AppError("CONFLICT", "orderId has already been used", [
    { field: "qrData.orderId", message: "has already been used" },
  ]);
}
