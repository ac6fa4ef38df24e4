import type { EntityManager } from "@mikro-orm/postgresql";
import { AppError } from "../errors.js";
import type { Orm } from "../db/orm.js";
import type { SecretBox } from "../auth/secret-box.js";
import { ApiKey, type KeyKind } from "../auth/api-key.entity.js";
import { generateKey } from "../auth/keys.js";
import { Merchant } from "./merchant.entity.js";
import { GatewayConfig } from "./gateway-config.entity.js";
import { LinkConfig } from "./link-config.entity.js";
import { Checker, isHttpUrl } from "./validation.js";
import { validateMerchantAccount } from "./merchant-rules.js";
import { TtlCache } from "../cache/ttl-cache.js";
import { INVALIDATE_CHANNEL, NOTIFY_INVALIDATION_SQL, invalidationPayload, Invalidations, type Invalidation } from "../cache/invalidation.js";

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
}

/** The dashboard's back end: merchants, upstream configurations and API keys (operator only). */
export class AdminService {
  private readonly issuing: TtlCache<Merchant>;
  private readonly credentials: TtlCache<{ merchantId: string; apiKey: string }>;

  constructor(
    private readonly orm: Orm,
    private readonly box: SecretBox,
    private readonly invalidations: Invalidations = new Invalidations(),
    now: () => number = Date.now,
  ) {
    this.issuing = new TtlCache(HOT_READ_TTL_MS, now);
    this.credentials = new TtlCache(HOT_READ_TTL_MS, now);
    invalidations.register({
      invalidate: (inv) => {
        if (inv.kind === "merchant") this.issuing.delete((id) => id === inv.id);
        if (inv.kind === "gateway_config") this.credentials.delete((id) => id === inv.id);
      },
      clear: () => {
        this.issuing.clear();
        this.credentials.clear();
      },
    });
  }

  /**
   * Commits `change` together with a NOTIFY that makes every process drop what it cached, then drops it
   * here too (after commit, so no request re-reads the old row in between and keeps it).
   */
  private async withInvalidation<T>(inv: Invalidation, change: (em: EntityManager) => Promise<T>): Promise<T> {
    const result = await this.em().transactional(async (em) => {
      const out = await change(em);
      await em.flush();
      await em.execute(NOTIFY_INVALIDATION_SQL, [INVALIDATE_CHANNEL, invalidationPayload(inv)]);
      return out;
    });
    this.invalidations.apply(inv);
    return result;
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
    return this.withInvalidation({ kind: "merchant", id }, async (em) => {
      const m = await em.findOne(Merchant, { id });
      if (m === null) throw new AppError("NOT_FOUND", "Merchant not found");
      this.applyMerchant(m, input, false);
      return m;
    });
  }

  private applyMerchant(m: Merchant, input: MerchantInput, creating: boolean): void {
    const merged = { ...m, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) } as Merchant;
    const c = new Checker();
    if (merged.accountType !== "individual" && merged.accountType !== "merchant") c.fail("accountType", "must be individual or merchant");
    if (merged.defaultCurrency !== 116 && merged.defaultCurrency !== 840) c.fail("defaultCurrency", "must be 116 (KHR) or 840 (USD)");
    for (const e of validateMerchantAccount(merged)) c.fail(e.field, e.message);
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

  async createGatewayConfig(input: { merchantId: string; name: string; upstreamMerchantId: string; apiSecret: string }): Promise<GatewayConfig> {
    const c = new Checker();
    c.text("name", input.name, { required: true, max: 100 });
    c.text("upstreamMerchantId", input.upstreamMerchantId, { required: true, max: 30 });
    c.text("apiSecret", input.apiSecret, { required: true, max: 200 });
    c.done("Invalid gateway configuration");
    const em = this.em();
    await this.mustHaveMerchant(em, input.merchantId);
    const g = Object.assign(new GatewayConfig(), {
      merchantRef: input.merchantId,
      name: input.name,
      upstreamMerchantId: input.upstreamMerchantId,
      apiSecretEnc: this.box.encrypt(input.apiSecret),
    });
    await em.persist(g).flush();
    return g;
  }

  async updateGatewayConfig(id: string, input: { name?: string; upstreamMerchantId?: string; apiSecret?: string }): Promise<GatewayConfig> {
    return this.withInvalidation({ kind: "gateway_config", id }, async (em) => {
      const g = await em.findOne(GatewayConfig, { id });
      if (g === null) throw new AppError("NOT_FOUND", "Gateway configuration not found");
      const c = new Checker();
      if (input.name !== undefined) g.name = c.text("name", input.name, { required: true, max: 100 }) ?? g.name;
      if (input.upstreamMerchantId !== undefined) g.upstreamMerchantId = c.text("upstreamMerchantId", input.upstreamMerchantId, { required: true, max: 30 }) ?? g.upstreamMerchantId;
      const secret = input.apiSecret !== undefined ? c.text("apiSecret", input.apiSecret, { required: true, max: 200 }) : null;
      c.done("Invalid gateway configuration");
      if (secret !== null) g.apiSecretEnc = this.box.encrypt(secret);
      return g;
    });
  }


  async gatewayConfigs(merchantId?: string): Promise<GatewayConfig[]> {
    return this.em().find(GatewayConfig, merchantId ? { merchantRef: merchantId } : {}, { orderBy: { createdAt: "asc" } });
  }

  /** The upstream credentials of a configuration, decrypted, for the gateway client only. */
  async gatewayCredentials(configId: string): Promise<{ merchantId: string; apiKey: string } | null> {
    const g = await this.em().findOne(GatewayConfig, { id: configId });
    return g === null ? null : { merchantId: g.upstreamMerchantId, apiKey: this.box.decrypt(g.apiSecretEnc) };
  }

  /** The credentials for a generate call: the hot path, so read through a short cache (see above). */
  async gatewayCredentialsForUse(configId: string): Promise<{ merchantId: string; apiKey: string } | null> {
    return this.credentials.get(configId, () => this.gatewayCredentials(configId));
  }

  async createLinkConfig(input: { merchantId: string; name: string; url: string; currency: number }): Promise<LinkConfig> {
    const c = new Checker();
    c.text("name", input.name, { required: true, max: 100 });
    const url = c.text("url", input.url, { required: true, max: 2000 });
    if (url !== null && !isHttpUrl(url)) c.fail("url", "must be an http(s) URL");
    if (input.currency !== 116 && input.currency !== 840) c.fail("currency", "must be 116 (KHR) or 840 (USD)");
    c.done("Invalid payment-link configuration");
    const em = this.em();
    await this.mustHaveMerchant(em, input.merchantId);
    const l = Object.assign(new LinkConfig(), { merchantRef: input.merchantId, name: input.name, url: input.url, currency: input.currency as 116 | 840 });
    await em.persist(l).flush();
    return l;
  }

  async updateLinkConfig(id: string, input: { name?: string; url?: string; currency?: number }): Promise<LinkConfig> {
    const em = this.em();
    const l = await em.findOne(LinkConfig, { id });
    if (l === null) throw new AppError("NOT_FOUND", "Payment-link configuration not found");
    const c = new Checker();
    if (input.name !== undefined) l.name = c.text("name", input.name, { required: true, max: 100 }) ?? l.name;
    if (input.url !== undefined) {
      const url = c.text("url", input.url, { required: true, max: 2000 });
      if (url !== null && !isHttpUrl(url)) c.fail("url", "must be an http(s) URL");
      else if (url !== null) l.url = url;
    }
    if (input.currency !== undefined) {
      if (input.currency !== 116 && input.currency !== 840) c.fail("currency", "must be 116 (KHR) or 840 (USD)");
      else l.currency = input.currency;
    }
    c.done("Invalid payment-link configuration");
    await em.flush();
    return l;
  }

  async linkConfigs(merchantId?: string): Promise<LinkConfig[]> {
    return this.em().find(LinkConfig, merchantId ? { merchantRef: merchantId } : {}, { orderBy: { createdAt: "asc" } });
  }

  async linkConfig(id: string): Promise<LinkConfig | null> {
    return this.em().findOne(LinkConfig, { id });
  }

  /** Creates a key and returns its plaintext once. A gateway key needs a gateway config, a link key a link config, of the same merchant. */
  async createApiKey(input: { merchantId: string; kind: KeyKind; label?: string; gatewayConfigId?: string | null; linkConfigId?: string | null }): Promise<{ key: ApiKey; plain: string }> {
    const em = this.em();
    const c = new Checker();
    if (!["qr", "gateway", "gateway_link"].includes(input.kind)) c.fail("kind", "must be qr, gateway or gateway_link");
    c.text("label", input.label, { max: 100 });
    if (input.kind === "gateway" && !input.gatewayConfigId) c.fail("gatewayConfigId", "is required for a gateway key (create a gateway configuration first)");
    if (input.kind === "gateway_link" && !input.linkConfigId) c.fail("linkConfigId", "is required for a gateway-link key (create a payment-link configuration first)");
    if (input.kind !== "gateway" && input.gatewayConfigId) c.fail("gatewayConfigId", "only applies to gateway keys");
    if (input.kind !== "gateway_link" && input.linkConfigId) c.fail("linkConfigId", "only applies to gateway-link keys");
    c.done("Invalid API key request");
    await this.mustHaveMerchant(em, input.merchantId);
    if (input.gatewayConfigId) {
      const g = await em.findOne(GatewayConfig, { id: input.gatewayConfigId, merchantRef: input.merchantId });
      if (g === null) throw new AppError("BAD_USER_INPUT", "Gateway configuration not found for this merchant", [{ field: "gatewayConfigId", message: "not found for this merchant" }]);
    }
    if (input.linkConfigId) {
      const l = await em.findOne(LinkConfig, { id: input.linkConfigId, merchantRef: input.merchantId });
      if (l === null) throw new AppError("BAD_USER_INPUT", "Payment-link configuration not found for this merchant", [{ field: "linkConfigId", message: "not found for this merchant" }]);
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
    return this.withInvalidation({ kind: "api_key", id }, async (em) => {
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

  private async mustHaveMerchant(em: EntityManager, id: string): Promise<void> {
    if (typeof id !== "string" || (await em.findOne(Merchant, { id })) === null) {
      throw new AppError("BAD_USER_INPUT", "Merchant not found", [{ field: "merchantId", message: "not found" }]);
    }
  }
}
