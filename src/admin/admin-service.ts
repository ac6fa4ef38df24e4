import type { EntityManager } from "@mikro-orm/postgresql";
import { AppError } from "../errors.js";
import type { Orm } from "../db/orm.js";
import type { SecretBox } from "../auth/secret-box.js";
import { ApiKey, type KeyKind } from "../auth/api-key.entity.js";
import { generateKey } from "../auth/keys.js";
import type { KeyKinds } from "../auth/key-kinds.js";
import { Merchant } from "./merchant.entity.js";
import { Checker, refuse } from "../validation/checker.js";
import { CURRENCY_NUMBER, oneOf } from "../validation/rules.js";
import { returnUrlProblem } from "../validation/return-url.js";
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
  returnUrl?: string | null;
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
 * registers it (its area definition names the input field, `KeyKindSpec.target`).
 */
export interface KeyTarget {
  kind: KeyKind;
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
    /** The kinds of key the areas declare. */
    private readonly kinds: KeyKinds,
    private readonly invalidations: Invalidations = new Invalidations(),
    now: () => number = Date.now,
    /** Where this service answers (PUBLIC_BASE_URL): what a merchant's return URL may be depends on it. */
    private readonly serviceBaseUrl = "",
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
    c.check("accountType", merged.accountType, oneOf(["individual", "merchant"], "must be individual or merchant"));
    c.check("defaultCurrency", merged.defaultCurrency, CURRENCY_NUMBER);
    for (const e of validateMerchantAccount(merged)) c.fail(e.field, e.message);
    for (const e of deeplinkErrors(merged as unknown as Record<string, unknown>)) c.fail(e.field, e.message);
    if (merged.returnUrl === "") merged.returnUrl = null;
    const returnUrl = returnUrlProblem(merged.returnUrl, this.serviceBaseUrl);
    if (returnUrl !== null) c.fail("returnUrl", returnUrl);
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

  /** The admin input field naming what a key of this kind is bound to (null: keys of the kind bind to nothing). */
  targetField(kind: KeyKind): string | null {
    return this.kinds.get(kind)?.target?.field ?? null;
  }

  /**
   * Creates a key and returns its plaintext once. A kind whose area binds its keys (a gateway key to a gateway
   * configuration, a link key to a payment-link configuration) needs that target, of the same merchant, in the
   * field its area declares; the other areas' fields are refused.
   */
  async createApiKey(
    input: { merchantId: string; kind: KeyKind; label?: string } & Record<string, string | null | undefined>,
  ): Promise<{ key: ApiKey; plain: string }> {
    const em = this.em();
    const c = new Checker();
    const spec = this.kinds.get(input.kind);
    if (spec === undefined) c.fail("kind", `must be ${orList(this.kinds.kinds())}`);
    c.text("label", input.label, { max: 100 });
    for (const other of this.kinds.list) {
      if (other.target === undefined) continue;
      const given = input[other.target.field];
      if (other.kind === input.kind && !given) c.fail(other.target.field, other.target.required);
      if (other.kind !== input.kind && given && spec?.target?.field !== other.target.field)
        c.fail(other.target.field, `only applies to ${other.kind.replace(/_/g, "-")} keys`);
    }
    c.done("Invalid API key request");
    await this.mustHaveMerchant(input.merchantId);
    const field = spec?.target?.field;
    const targetRef = field === undefined ? null : (input[field] ?? null);
    for (const t of this.keyTargets) {
      if (t.kind !== input.kind || field === undefined || !targetRef) continue;
      if (!(await t.belongsTo(targetRef, input.merchantId)))
        throw refuse(field, "not found for this merchant", t.notFound);
    }
    const generated = generateKey((spec as { tag: string }).tag);
    const key = Object.assign(new ApiKey(), {
      merchantRef: input.merchantId,
      kind: input.kind,
      label: input.label ?? "",
      prefix: generated.prefix,
      hash: generated.hash,
      targetRef,
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
      throw refuse("merchantId", "not found", "Merchant not found");
    }
  }
}

/** "a, b or c" */
function orList(items: string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}
