import type { EntityManager } from "@mikro-orm/postgresql";
import { AppError } from "../errors.js";
import type { Orm } from "../db/orm.js";
import type { SecretBox } from "../auth/secret-box.js";
import { ApiKey, type KeyKind } from "../auth/api-key.entity.js";
import { generateKey } from "../auth/keys.js";
import { Merchant } from "./merchant.entity.js";
import { Checker } from "../validation/checker.js";
import { validateMerchantAccount } from "./merchant-rules.js";
import { TtlCache } from "../cache/ttl-cache.js";
import { Invalidations, withInvalidation } from "../cache/invalidation.js";

/**
 * How long a merchant's account and a gateway configuration's credentials are reused by the generate paths
 * (read on every request otherwise); edits through this service reach every process at once by NOTIFY.
 */
export const HOT_READ_TTL_MS = 5_000;

export interface MerchantInput {
  name?: string;
  accountType?: "individual" | "merchant";
  bakongAccountId?: string;
  merchantName?: string;
  merchantCity?: string;
  merchantId?: string | null;
  acquiringBank?: string | null;
  merchantCategoryCode?: string;
  defaultCurrency?: number;
  deeplinkAppName?: string | null;
  deeplinkAppIconUrl?: string | null;
  deeplinkCallback?: string | null;
}

const DEEPLINK_FIELDS = ["deeplinkAppName", "deeplinkAppIconUrl", "deeplinkCallback"] as const;

/** Deeplink settings: all three or none; an https icon URL; a callback URL (an app scheme or http(s)). */
function deeplinkErrors(m: Record<string, unknown>): { field: string; message: string }[] {
  const set = DEEPLINK_FIELDS.filter((f) => typeof m[f] === "string" && m[f] !== "");
  if (set.length === 0) return [];
  const errors = DEEPLINK_FIELDS.filter((f) => !set.includes(f)).map((field) => ({
    field,
    message: "is required with the other deeplink settings",
  }));
  const name = m.deeplinkAppName;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (typeof name === "string" && (name.length > 100 || /[\u0000-\u001f]/.test(name)))
    errors.push({ field: "deeplinkAppName", message: "must be at most 100 characters, no control characters" });
  for (const f of ["deeplinkAppIconUrl", "deeplinkCallback"] as const) {
    const v = m[f];
    if (typeof v === "string" && v.length > 500) errors.push({ field: f, message: "must be at most 500 characters" });
  }
  const icon = m.deeplinkAppIconUrl;
  if (typeof icon === "string" && icon !== "" && !/^https:\/\/[^\s]+$/.test(icon))
    errors.push({ field: "deeplinkAppIconUrl", message: "must be an https URL" });
  const callback = m.deeplinkCallback;
  if (typeof callback === "string" && callback !== "" && !/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/\S+$/.test(callback))
    errors.push({ field: "deeplinkCallback", message: "must be a URL (an app scheme or https)" });
  return errors;
}

/**
 * What a key of a kind is bound to, checked when the key is created: the area that owns the configuration
 * registers it (gateway: a gateway configuration, gateway-link: a payment-link configuration).
 */
export interface KeyTarget {
  kind: KeyKind;
  field: "gatewayConfigId" | "linkConfigId";
  /** The error message when it does not exist for the key's merchant. */
  notFound: string;
  belongsTo(id: string, merchantId: string): Promise<boolean>;
}

/** The dashboard's back end: merchants and API keys (operator only); areas own their configurations. */
export class AdminService {
  private readonly issuing: TtlCache<Merchant>;

  constructor(
    private readonly orm: Orm,
    private readonly box: SecretBox,
    private readonly invalidations: Invalidations = new Invalidations(),
    now: () => number = Date.now,
  ) {
    this.issuing = new TtlCache(HOT_READ_TTL_MS, now);
    invalidations.register({
      invalidate: (inv) => {
        if (inv.kind === "merchant") this.issuing.delete((id) => id === inv.id);
      },
      clear: () => this.issuing.clear(),
    });
  }

  private readonly keyTargets: KeyTarget[] = [];

  /** Called by an area module at creation: keys of its kind are bound to its configurations. */
  acceptKeyTarget(target: KeyTarget): void {
    this.keyTargets.push(target);
  }

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  async createMerchant(input: MerchantInput): Promise<Merchant> {
    const m = new Merchant();
    this.applyMerchant(m, input, true);
    await this.em().persist(m).flush();
    return m;
  }

  async updateMerchant(id: string, input: MerchantInput): Promise<Merchant> {
    return withInvalidation(this.em(), this.invalidations, { kind: "merchant", id }, async (em) => {
      const m = await em.findOne(Merchant, { id });
      if (m === null) throw new AppError("NOT_FOUND", "Merchant not found");
      this.applyMerchant(m, input, false);
      return m;
    });
  }

  private applyMerchant(m: Merchant, input: MerchantInput, creating: boolean): void {
    const merged = {
      ...m,
      ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)),
    } as Merchant;
    const c = new Checker();
    if (merged.accountType !== "individual" && merged.accountType !== "merchant")
      c.fail("accountType", "must be individual or merchant");
    if (merged.defaultCurrency !== 116 && merged.defaultCurrency !== 840)
      c.fail("defaultCurrency", "must be 116 (KHR) or 840 (USD)");
    for (const e of validateMerchantAccount(merged)) c.fail(e.field, e.message);
    for (const e of deeplinkErrors(merged as unknown as Record<string, unknown>)) c.fail(e.field, e.message);
    c.done(creating ? "Invalid merchant" : "Invalid merchant update");
    Object.assign(m, merged);
  }

  async merchants(): Promise<Merchant[]> {
    return this.em().find(Merchant, {}, { orderBy: { createdAt: "asc" } });
  }

  async merchant(id: string): Promise<Merchant | null> {
    return this.em().findOne(Merchant, { id });
  }

  /** The merchant's account for issuing a QR: the hot path, so read through a short cache (see above). */
  async merchantForIssue(id: string): Promise<Merchant | null> {
    return this.issuing.get(id, () => this.merchant(id));
  }

  /** Creates a key and returns its plaintext once. A gateway key needs a gateway config, a link key a link config, of the same merchant. */
  async createApiKey(input: {
    merchantId: string;
    kind: KeyKind;
    label?: string;
    gatewayConfigId?: string | null;
    linkConfigId?: string | null;
  }): Promise<{ key: ApiKey; plain: string }> {
    const em = this.em();
    const c = new Checker();
    if (!["qr", "gateway", "gateway_link"].includes(input.kind)) c.fail("kind", "must be qr, gateway or gateway_link");
    c.text("label", input.label, { max: 100 });
    if (input.kind === "gateway" && !input.gatewayConfigId)
      c.fail("gatewayConfigId", "is required for a gateway key (create a gateway configuration first)");
    if (input.kind === "gateway_link" && !input.linkConfigId)
      c.fail("linkConfigId", "is required for a gateway-link key (create a payment-link configuration first)");
    if (input.kind !== "gateway" && input.gatewayConfigId) c.fail("gatewayConfigId", "only applies to gateway keys");
    if (input.kind !== "gateway_link" && input.linkConfigId)
      c.fail("linkConfigId", "only applies to gateway-link keys");
    c.done("Invalid API key request");
    await this.mustHaveMerchant(input.merchantId);
    for (const t of this.keyTargets) {
      const id = input[t.field];
      if (id && !(await t.belongsTo(id, input.merchantId)))
        throw new AppError("BAD_USER_INPUT", t.notFound, [{ field: t.field, message: "not found for this merchant" }]);
    }
    const generated = generateKey(input.kind);
    const key = Object.assign(new ApiKey(), {
      merchantRef: input.merchantId,
      kind: input.kind,
      label: input.label ?? "",
      prefix: generated.prefix,
      hash: generated.hash,
      gatewayConfigRef: input.gatewayConfigId ?? null,
      linkConfigRef: input.linkConfigId ?? null,
    });
    await em.persist(key).flush();
    return { key, plain: generated.plain };
  }

  async revokeApiKey(id: string): Promise<ApiKey> {
    return withInvalidation(this.em(), this.invalidations, { kind: "api_key", id }, async (em) => {
      const key = await em.findOne(ApiKey, { id });
      if (key === null) throw new AppError("NOT_FOUND", "API key not found");
      key.revokedAt ??= new Date();
      return key;
    });
  }

  async apiKeys(merchantId?: string): Promise<ApiKey[]> {
    return this.em().find(ApiKey, merchantId ? { merchantRef: merchantId } : {}, { orderBy: { createdAt: "asc" } });
  }

  async apiKey(id: string): Promise<ApiKey | null> {
    return this.em().findOne(ApiKey, { id });
  }

  /** For whatever is created for a merchant: BAD_USER_INPUT on merchantId when there is no such merchant. */
  async mustHaveMerchant(id: string): Promise<void> {
    if (typeof id !== "string" || (await this.em().findOne(Merchant, { id })) === null) {
      throw new AppError("BAD_USER_INPUT", "Merchant not found", [{ field: "merchantId", message: "not found" }]);
    }
  }
}
