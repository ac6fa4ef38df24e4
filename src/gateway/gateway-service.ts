import QRCode from "qrcode";
import type { Clock } from "../clock.js";
import { AppError, type FieldError } from "../errors.js";
import { newId } from "../ids.js";
import type { KeyPrincipal } from "../auth/principal.js";
import type { Authenticator } from "../auth/keys.js";
import type { GatewayConfigs } from "./gateway-configs.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { TxRecord } from "../transactions/record.js";
import { checkMeta, decimalFromNumber, storableText, twoDecimals, UNSTORABLE } from "../transactions/money.js";
import type { GatewayClient } from "./upstream-client.js";

export const LIFETIME_MIN = 3;
export const LIFETIME_MAX = 172_800;
export const LIFETIME_DEFAULT = 6;

interface Item {
  name: string;
  quantity: number;
  price: number;
}
export interface GatewayGenerateInput {
  qrData: {
    orderId: unknown;
    amount: unknown;
    currency: unknown;
    firstName?: unknown;
    lastName?: unknown;
    email?: unknown;
    phone?: unknown;
    items?: unknown;
    lifetime?: unknown;
    qrImageTemplate?: unknown;
  };
  metaData?: unknown;
}

function optText(errors: FieldError[], field: string, v: unknown, max: number, pattern?: RegExp): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") return void errors.push({ field, message: "must be a string" });
  if (v.length > max) return void errors.push({ field, message: `must be at most ${max} characters` });
  if (!storableText(v)) return void errors.push({ field, message: UNSTORABLE });
  if (pattern && !pattern.test(v)) return void errors.push({ field, message: "has an invalid format" });
  return v;
}

/** Hosted gateway area: a dynamic QR from the gateway's signed QR API, stored and followed to the end. */
export class GatewayService {
  constructor(
    private readonly store: TransactionStore,
    private readonly configs: Pick<GatewayConfigs, "credentialsForUse">,
    private readonly auth: Pick<Authenticator, "issueClientToken">,
    private readonly client: GatewayClient,
    private readonly clock: Clock,
  ) {}

  private validate(input: GatewayGenerateInput) {
    const errors: FieldError[] = [];
    const d = input.qrData ?? ({} as GatewayGenerateInput["qrData"]);
    const orderId = d.orderId;
    if (typeof orderId !== "string" || orderId.length === 0)
      errors.push({ field: "qrData.orderId", message: "is required" });
    else if (orderId.length > 20) errors.push({ field: "qrData.orderId", message: "must be at most 20 characters" });
    else if (!/^[A-Za-z0-9._-]+$/.test(orderId))
      errors.push({ field: "qrData.orderId", message: "may contain only letters, digits, '.', '_' and '-'" });
    const currency = typeof d.currency === "string" ? d.currency.toUpperCase() : null;
    if (currency !== "USD" && currency !== "KHR")
      errors.push({ field: "qrData.currency", message: "must be USD or KHR" });
    const amount = decimalFromNumber(d.amount, "qrData.amount", currency === "KHR" ? 0 : 2, errors);
    if (amount !== null && currency === "USD" && Number(amount) < 0.01)
      errors.push({ field: "qrData.amount", message: "must be at least 0.01 USD" });
    if (amount !== null && currency === "KHR" && Number(amount) < 100)
      errors.push({ field: "qrData.amount", message: "must be at least 100 KHR" });
    const firstName = optText(errors, "qrData.firstName", d.firstName, 20);
    const lastName = optText(errors, "qrData.lastName", d.lastName, 20);
    const email = optText(errors, "qrData.email", d.email, 50, /^[^@\s]+@[^@\s]+\.[^@\s]+$/);
    const phone = optText(errors, "qrData.phone", d.phone, 20, /^\+?[0-9 ()-]{6,20}$/);
    const qrImageTemplate = optText(errors, "qrData.qrImageTemplate", d.qrImageTemplate, 20, /^[A-Za-z0-9_-]+$/);
    let items: Item[] | undefined;
    if (d.items !== undefined && d.items !== null) {
      if (!Array.isArray(d.items)) errors.push({ field: "qrData.items", message: "must be an array" });
      else if (d.items.length > 10) errors.push({ field: "qrData.items", message: "must have at most 10 items" });
      else {
        items = [];
        d.items.forEach((it: unknown, i: number) => {
          const o = (it ?? {}) as Record<string, unknown>;
          if (typeof o.name !== "string" || o.name.length === 0 || o.name.length > 100)
            errors.push({ field: `qrData.items.${i}.name`, message: "must be a string of 1 to 100 characters" });
          else if (!storableText(o.name)) errors.push({ field: `qrData.items.${i}.name`, message: UNSTORABLE });
          if (typeof o.quantity !== "number" || !Number.isInteger(o.quantity) || o.quantity < 1)
            errors.push({ field: `qrData.items.${i}.quantity`, message: "must be a whole number ≥ 1" });
          if (typeof o.price !== "number" || !Number.isFinite(o.price) || o.price < 0)
            errors.push({ field: `qrData.items.${i}.price`, message: "must be a number ≥ 0" });
          items!.push({ name: String(o.name), quantity: Number(o.quantity), price: Number(o.price) });
        });
        if (Buffer.from(JSON.stringify(items)).toString("base64").length > 500)
          errors.push({ field: "qrData.items", message: "are too long for the gateway (500 characters encoded)" });
      }
    }
    const lifetime = d.lifetime ?? LIFETIME_DEFAULT;
    if (
      typeof lifetime !== "number" ||
      !Number.isInteger(lifetime) ||
      lifetime < LIFETIME_MIN ||
      lifetime > LIFETIME_MAX
    ) {
      errors.push({
        field: "qrData.lifetime",
        message: `must be a whole number of minutes from ${LIFETIME_MIN} to ${LIFETIME_MAX}`,
      });
    }
    const meta = checkMeta(input.metaData, "metaData", errors);
    if (errors.length > 0)
      throw new AppError(
        "BAD_USER_INPUT",
        `Invalid request: ${errors.map((e) => `${e.field} ${e.message}`).join("; ")}`,
        errors,
      );
    return {
      orderId: orderId as string,
      currency: currency as "USD" | "KHR",
      amount: amount as string,
      firstName,
      lastName,
      email,
      phone,
      items,
      lifetime: lifetime as number,
      qrImageTemplate,
      meta,
    };
  }

  async generate(key: KeyPrincipal, input: GatewayGenerateInput) {
    const v = this.validate(input);
    const creds = key.gatewayConfigRef ? await this.configs.credentialsForUse(key.gatewayConfigRef) : null;
    if (creds === null)
      throw new AppError("BAD_USER_INPUT", "This key has no merchant gateway configuration", [
        { field: "x-api-key", message: "is not linked to a gateway configuration" },
      ]);
    // Merchant-wide, so it covers this key's own orders too (the unique index backs it at insert).
    if (await this.orderIdTaken(key.merchantRef, v.orderId)) throw duplicate();
    const now = this.clock.now();
    const up = await this.client
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
        qrImageTemplate: v.qrImageTemplate,
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
        orderId: v.orderId,
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
      clientToken: this.auth.issueClientToken(tx.id, expiresAt),
    };
  }

  private async orderIdTaken(merchantRef: string, orderId: string): Promise<boolean> {
    return await this.store.orderIdExists(merchantRef, orderId);
  }

  async status(key: KeyPrincipal, by: { transactionId?: unknown; orderId?: unknown }) {
    const hasId = by.transactionId !== undefined && by.transactionId !== null;
    const hasOrder = by.orderId !== undefined && by.orderId !== null;
    if (hasId === hasOrder)
      throw new AppError("BAD_USER_INPUT", "Send exactly one of transactionId or orderId", [
        { field: hasId ? "orderId" : "transactionId", message: "send exactly one of transactionId or orderId" },
      ]);
    const value = hasId ? by.transactionId : by.orderId;
    if (typeof value !== "string" || value.length === 0 || value.length > 100)
      throw new AppError("BAD_USER_INPUT", "Invalid identifier", [
        { field: hasId ? "transactionId" : "orderId", message: "must be a non-empty string" },
      ]);
    const tx = await this.store.findForKey(
      key.keyId,
      hasId ? { id: value, area: "gateway" } : { orderId: value, area: "gateway" },
    );
    if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    return {
      transactionId: tx.id,
      orderId: tx.orderId as string,
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
