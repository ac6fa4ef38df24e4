import type { EntityManager } from "@mikro-orm/postgresql";
import { AppError } from "../errors.js";
import type { Orm } from "../db/orm.js";
import type { SecretBox } from "../auth/secret-box.js";
import { rewriteSealed, type SealedColumn } from "../auth/stored-secrets.js";
import type { Db } from "../db/sql.js";
import { TtlCache } from "../cache/ttl-cache.js";
import { withInvalidation, type Invalidations } from "../cache/invalidation.js";
import { HOT_READ_TTL_MS, type AdminService } from "../admin/admin-service.js";
import { Checker } from "../validation/checker.js";
import { GatewayConfig } from "./gateway-config.entity.js";
import { DEFAULT_QR_IMAGE_TEMPLATE, isQrImageTemplate, QR_IMAGE_TEMPLATE_MESSAGE } from "./gateway-rules.js";

/** Where a configuration's gateway API secret is stored, sealed to its row. */
export const GATEWAY_SECRET: SealedColumn = {
  table: "gateway_config",
  column: "api_secret_enc",
  purpose: "gateway-api-secret",
};

export interface GatewayCredentials {
  merchantId: string;
  apiKey: string;
  /** The configuration's qr_image_template (a generate may name another). */
  qrImageTemplate: string;
}

/** The configuration's template, when given: one of the QR API's (gateway-rules.ts). */
function checkTemplate(c: Checker, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (isQrImageTemplate(value)) return value;
  c.fail("qrImageTemplate", QR_IMAGE_TEMPLATE_MESSAGE);
  return null;
}

/** The merchants' accounts at the hosted gateway (operator only), and their credentials for the client. */
export class GatewayConfigs {
  private readonly credentials: TtlCache<GatewayCredentials>;
  /** Configurations known to exist (a pushback names one in its path: a name that is none costs one lookup). */
  private readonly known: TtlCache<true>;

  constructor(
    private readonly orm: Orm,
    private readonly db: Pick<Db, "query">,
    private readonly box: SecretBox,
    private readonly merchants: Pick<AdminService, "mustHaveMerchant">,
    private readonly invalidations: Invalidations,
    now: () => number,
  ) {
    this.credentials = new TtlCache(HOT_READ_TTL_MS, now);
    this.known = new TtlCache(HOT_READ_TTL_MS, now);
    invalidations.register({
      invalidate: (inv) => {
        if (inv.kind !== "gateway_config") return;
        this.credentials.delete((id) => id === inv.id);
        this.known.delete((id) => id === inv.id);
      },
      clear: () => {
        this.credentials.clear();
        this.known.clear();
      },
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
    qrImageTemplate?: string | null;
  }): Promise<GatewayConfig> {
    const c = new Checker();
    c.text("name", input.name, { required: true, max: 100 });
    c.text("upstreamMerchantId", input.upstreamMerchantId, { required: true, max: 30 });
    c.text("apiSecret", input.apiSecret, { required: true, max: 200 });
    const template = checkTemplate(c, input.qrImageTemplate);
    c.done("Invalid gateway configuration");
    await this.merchants.mustHaveMerchant(input.merchantId);
    const g = Object.assign(new GatewayConfig(), {
      merchantRef: input.merchantId,
      name: input.name,
      upstreamMerchantId: input.upstreamMerchantId,
      qrImageTemplate: template ?? DEFAULT_QR_IMAGE_TEMPLATE,
    });
    g.apiSecretEnc = this.box.seal(input.apiSecret, "gateway-api-secret", g.id);
    await this.em().persist(g).flush();
    return g;
  }

  async update(
    id: string,
    input: { name?: string; upstreamMerchantId?: string; apiSecret?: string; qrImageTemplate?: string | null },
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
      // null puts the default back: a configuration always sends a template.
      if (input.qrImageTemplate !== undefined)
        g.qrImageTemplate = checkTemplate(c, input.qrImageTemplate) ?? DEFAULT_QR_IMAGE_TEMPLATE;
      c.done("Invalid gateway configuration");
      if (secret !== null) g.apiSecretEnc = this.box.seal(secret, "gateway-api-secret", g.id);
      return g;
    });
  }

  async list(merchantId?: string): Promise<GatewayConfig[]> {
    return this.em().find(GatewayConfig, merchantId ? { merchantRef: merchantId } : {}, {
      orderBy: { createdAt: "asc" },
    });
  }

  /** Whether a configuration exists: read through a short cache of the ones that do. */
  async exists(id: string): Promise<boolean> {
    const found = await this.known.get(id, async () => {
      const rows = await this.db.query<{ one: number }>(`select 1 as one from gateway_config where id = ?`, [id]);
      return rows.length > 0 ? true : null;
    });
    return found === true;
  }

  /** Whether a configuration of this merchant exists (a gateway key is linked to one). */
  async belongsTo(id: string, merchantId: string): Promise<boolean> {
    return (await this.em().findOne(GatewayConfig, { id, merchantRef: merchantId })) !== null;
  }

  /**
   * The upstream credentials of a configuration, decrypted, for the gateway client only. A secret stored in the
   * legacy format is rewritten bound to its row; one that is not this row's throws SecretUnreadableError.
   */
  async credentialsOf(configId: string): Promise<GatewayCredentials | null> {
    const g = await this.em().findOne(GatewayConfig, { id: configId });
    if (g === null) return null;
    const opened = this.box.open(g.apiSecretEnc, "gateway-api-secret", g.id);
    if (opened.upgraded !== null) await rewriteSealed(this.db, GATEWAY_SECRET, g.id, g.apiSecretEnc, opened.upgraded);
    return { merchantId: g.upstreamMerchantId, apiKey: opened.plain, qrImageTemplate: g.qrImageTemplate };
  }

  /** The credentials for a generate call: the hot path, so read through a short cache (NOTIFY-invalidated on update). */
  async credentialsForUse(configId: string): Promise<GatewayCredentials | null> {
    return this.credentials.get(configId, () => this.credentialsOf(configId));
  }
}
