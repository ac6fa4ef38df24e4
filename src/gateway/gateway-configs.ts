import type { EntityManager } from "@mikro-orm/postgresql";
import { AppError } from "../errors.js";
import type { Orm } from "../db/orm.js";
import type { SecretBox } from "../auth/secret-box.js";
import { TtlCache } from "../cache/ttl-cache.js";
import { withInvalidation, type Invalidations } from "../cache/invalidation.js";
import { HOT_READ_TTL_MS, type AdminService } from "../admin/admin-service.js";
import { Checker } from "../validation/checker.js";
import { GatewayConfig } from "./gateway-config.entity.js";

export interface GatewayCredentials {
  merchantId: string;
  apiKey: string;
}

/** The merchants' accounts at the hosted gateway (operator only), and their credentials for the client. */
export class GatewayConfigs {
  private readonly credentials: TtlCache<GatewayCredentials>;

  constructor(
    private readonly orm: Orm,
    private readonly box: SecretBox,
    private readonly merchants: Pick<AdminService, "mustHaveMerchant">,
    private readonly invalidations: Invalidations,
    now: () => number,
  ) {
    this.credentials = new TtlCache(HOT_READ_TTL_MS, now);
    invalidations.register({
      invalidate: (inv) => {
        if (inv.kind === "gateway_config") this.credentials.delete((id) => id === inv.id);
      },
      clear: () => this.credentials.clear(),
    });
  }

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  async create(input: {
    merchantId: string;
    name: string;
    upstreamMerchantId: string;
    apiSecret: string;
  }): Promise<GatewayConfig> {
    const c = new Checker();
    c.text("name", input.name, { required: true, max: 100 });
    c.text("upstreamMerchantId", input.upstreamMerchantId, { required: true, max: 30 });
    c.text("apiSecret", input.apiSecret, { required: true, max: 200 });
    c.done("Invalid gateway configuration");
    await this.merchants.mustHaveMerchant(input.merchantId);
    const g = Object.assign(new GatewayConfig(), {
      merchantRef: input.merchantId,
      name: input.name,
      upstreamMerchantId: input.upstreamMerchantId,
      apiSecretEnc: this.box.encrypt(input.apiSecret),
    });
    await this.em().persist(g).flush();
    return g;
  }

  async update(
    id: string,
    input: { name?: string; upstreamMerchantId?: string; apiSecret?: string },
  ): Promise<GatewayConfig> {
    return withInvalidation(this.em(), this.invalidations, { kind: "gateway_config", id }, async (em) => {
      const g = await em.findOne(GatewayConfig, { id });
      if (g === null) throw new AppError("NOT_FOUND", "Gateway configuration not found");
      const c = new Checker();
      if (input.name !== undefined) g.name = c.text("name", input.name, { required: true, max: 100 }) ?? g.name;
      if (input.upstreamMerchantId !== undefined) {
        g.upstreamMerchantId =
          c.text("upstreamMerchantId", input.upstreamMerchantId, { required: true, max: 30 }) ?? g.upstreamMerchantId;
      }
      const secret =
        input.apiSecret !== undefined ? c.text("apiSecret", input.apiSecret, { required: true, max: 200 }) : null;
      c.done("Invalid gateway configuration");
      if (secret !== null) g.apiSecretEnc = this.box.encrypt(secret);
      return g;
    });
  }

  async list(merchantId?: string): Promise<GatewayConfig[]> {
    return this.em().find(GatewayConfig, merchantId ? { merchantRef: merchantId } : {}, {
      orderBy: { createdAt: "asc" },
    });
  }

  /** Whether a configuration of this merchant exists (a gateway key is linked to one). */
  async belongsTo(id: string, merchantId: string): Promise<boolean> {
    return (await this.em().findOne(GatewayConfig, { id, merchantRef: merchantId })) !== null;
  }

  /** The upstream credentials of a configuration, decrypted, for the gateway client only. */
  async credentialsOf(configId: string): Promise<GatewayCredentials | null> {
    const g = await this.em().findOne(GatewayConfig, { id: configId });
    return g === null ? null : { merchantId: g.upstreamMerchantId, apiKey: this.box.decrypt(g.apiSecretEnc) };
  }

  /** The credentials for a generate call: the hot path, so read through a short cache (NOTIFY-invalidated on update). */
  async credentialsForUse(configId: string): Promise<GatewayCredentials | null> {
    return this.credentials.get(configId, () => this.credentialsOf(configId));
  }
}
