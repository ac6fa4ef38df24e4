import type { EntityManager } from "@mikro-orm/postgresql";
import { AppError } from "../errors.js";
import type { Orm } from "../db/orm.js";
import type { AdminService } from "../admin/admin-service.js";
import { Checker } from "../validation/checker.js";
import { checkTargetUrl, resolvesAllowed, type EgressPolicy } from "../upstreams/egress.js";
import { LinkConfig } from "./link-config.entity.js";
import { LINK_PROTOCOL_NAMES, type LinkProtocolName } from "./link-protocol.js";

/** The payment-link pages (URL + currency) a gateway-link key can be bound to (operator only). */
export class LinkConfigs {
  constructor(
    private readonly orm: Orm,
    private readonly merchants: Pick<AdminService, "mustHaveMerchant">,
    private readonly egress: EgressPolicy,
    /** LINK_PAGE_PROTOCOL: the adapter of a configuration that names none. */
    private readonly defaultProtocol: LinkProtocolName = "simulated",
  ) {}

  /** LINK_PAGE_PROTOCOL: what a configuration that names no adapter is driven with. */
  get defaultProtocolName(): LinkProtocolName {
    return this.defaultProtocol;
  }

  /** The adapter a configuration's page is driven with. */
  protocolOf(l: LinkConfig): LinkProtocolName {
    return (LINK_PROTOCOL_NAMES as readonly string[]).includes(l.protocol ?? "")
      ? (l.protocol as LinkProtocolName)
      : this.defaultProtocol;
  }

  private checkProtocol(c: Checker, protocol: string | null | undefined): void {
    if (protocol !== undefined && protocol !== null && !(LINK_PROTOCOL_NAMES as readonly string[]).includes(protocol))
      c.fail("protocol", `must be one of ${LINK_PROTOCOL_NAMES.join(", ")} (or null for LINK_PAGE_PROTOCOL)`);
  }

  /** The egress policy (upstreams/egress.ts) on a page URL: its shape, then where its name resolves now. */
  private async checkUrl(c: Checker, url: string): Promise<boolean> {
    const problem = checkTargetUrl(url, this.egress);
    if (problem !== null) c.fail("url", problem);
    else if (!(await resolvesAllowed(url, this.egress)))
      c.fail("url", "must resolve to a public address (loopback, private and reserved addresses are refused)");
    else return true;
    return false;
  }

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  async create(input: {
    merchantId: string;
    name: string;
    url: string;
    currency: number;
    protocol?: string | null;
  }): Promise<LinkConfig> {
    const c = new Checker();
    c.text("name", input.name, { required: true, max: 100 });
    const url = c.text("url", input.url, { required: true, max: 2000 });
    if (url !== null) await this.checkUrl(c, url);
    if (input.currency !== 116 && input.currency !== 840) c.fail("currency", "must be 116 (KHR) or 840 (USD)");
    this.checkProtocol(c, input.protocol);
    c.done("Invalid payment-link configuration");
    await this.merchants.mustHaveMerchant(input.merchantId);
    const l = Object.assign(new LinkConfig(), {
      merchantRef: input.merchantId,
      name: input.name,
      url: input.url,
      currency: input.currency as 116 | 840,
      protocol: input.protocol ?? null,
    });
    await this.em().persist(l).flush();
    return l;
  }

  async update(
    id: string,
    input: { name?: string; url?: string; currency?: number; protocol?: string | null },
  ): Promise<LinkConfig> {
    const em = this.em();
    const l = await em.findOne(LinkConfig, { id });
    if (l === null) throw new AppError("NOT_FOUND", "Payment-link configuration not found");
    const c = new Checker();
    if (input.name !== undefined) l.name = c.text("name", input.name, { required: true, max: 100 }) ?? l.name;
    if (input.url !== undefined) {
      const url = c.text("url", input.url, { required: true, max: 2000 });
      if (url !== null && (await this.checkUrl(c, url))) l.url = url;
    }
    if (input.currency !== undefined) {
      if (input.currency !== 116 && input.currency !== 840) c.fail("currency", "must be 116 (KHR) or 840 (USD)");
      else l.currency = input.currency;
    }
    this.checkProtocol(c, input.protocol);
    if (input.protocol !== undefined) l.protocol = input.protocol;
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
