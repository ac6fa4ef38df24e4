import type { EntityManager } from "@mikro-orm/postgresql";
import { AppError } from "../errors.js";
import type { Orm } from "../db/orm.js";
import type { AdminService } from "../admin/admin-service.js";
import { Checker, isHttpUrl } from "../validation/checker.js";
import { LinkConfig } from "./link-config.entity.js";

/** The payment-link pages (URL + currency) a gateway-link key can be bound to (operator only). */
export class LinkConfigs {
  constructor(
    private readonly orm: Orm,
    private readonly merchants: Pick<AdminService, "mustHaveMerchant">,
  ) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  async create(input: { merchantId: string; name: string; url: string; currency: number }): Promise<LinkConfig> {
    const c = new Checker();
    c.text("name", input.name, { required: true, max: 100 });
    const url = c.text("url", input.url, { required: true, max: 2000 });
    if (url !== null && !isHttpUrl(url)) c.fail("url", "must be an http(s) URL");
    if (input.currency !== 116 && input.currency !== 840) c.fail("currency", "must be 116 (KHR) or 840 (USD)");
    c.done("Invalid payment-link configuration");
    await this.merchants.mustHaveMerchant(input.merchantId);
    const l = Object.assign(new LinkConfig(), {
      merchantRef: input.merchantId,
      name: input.name,
      url: input.url,
      currency: input.currency as 116 | 840,
    });
    await this.em().persist(l).flush();
    return l;
  }

  async update(id: string, input: { name?: string; url?: string; currency?: number }): Promise<LinkConfig> {
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

  async list(merchantId?: string): Promise<LinkConfig[]> {
    return this.em().find(LinkConfig, merchantId ? { merchantRef: merchantId } : {}, { orderBy: { createdAt: "asc" } });
  }

  async get(id: string): Promise<LinkConfig | null> {
    return this.em().findOne(LinkConfig, { id });
  }

  /** Whether a configuration of this merchant exists (a gateway-link key is bound to one). */
  async belongsTo(id: string, merchantId: string): Promise<boolean> {
    return (await this.em().findOne(LinkConfig, { id, merchantRef: merchantId })) !== null;
  }
}
