import type { EntityManager } from "@mikro-orm/postgresql";
import { AppError } from "../errors.js";
import type { Orm } from "../db/orm.js";
import type { AdminService } from "../admin/admin-service.js";
import { Checker } from "../validation/checker.js";
import { CURRENCY_NUMBER, oneOf } from "../validation/rules.js";
import { checkTargetUrl, resolvesAllowed, type EgressPolicy } from "../upstreams/egress.js";
import { KHQR_MAX } from "../khqr/index.js";
import { LinkConfig, type PayeeSource } from "./link-config.entity.js";
import { LINK_PROTOCOL_NAMES, type LinkProtocolName } from "./link-protocol.js";

/** The payment-link pages (URL + currency) a gateway-link key can be bound to (operator only). */
export class LinkConfigs {
  constructor(
    private readonly orm: Orm,
    private readonly merchants: Pick<AdminService, "mustHaveMerchant">,
    private readonly egress: EgressPolicy,
  ) {}

  /** What a configuration that names no adapter is driven with: the one there is (link-protocol.ts). */
  get defaultProtocolName(): LinkProtocolName {
    return LINK_PROTOCOL_NAMES[0];
  }

  /** The adapter a configuration's page is driven with. */
  protocolOf(l: LinkConfig): LinkProtocolName {
    return (LINK_PROTOCOL_NAMES as readonly string[]).includes(l.protocol ?? "")
      ? (l.protocol as LinkProtocolName)
      : this.defaultProtocolName;
  }

  private checkProtocol(c: Checker, protocol: string | null | undefined): void {
    const known = oneOf(
      LINK_PROTOCOL_NAMES,
      `must be one of ${LINK_PROTOCOL_NAMES.join(", ")} (or null for the default)`,
    );
    if (protocol !== undefined && protocol !== null) c.check("protocol", protocol, known);
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

  /** An expected payee as the operator gives it: a KHQR account id (`name@bank`, ≤ 32); "" or null clears it. */
  private checkPayee(c: Checker, payee: string | null | undefined): { payee: string | null } | undefined {
    if (payee === undefined) return undefined;
    const v = c.text("expectedPayee", payee, {
      max: KHQR_MAX.ACCOUNT_ID,
      pattern: /^[^\s@]+@[^\s@]+$/,
      patternMessage: "must be a KHQR account id, name@bank",
    });
    return { payee: v };
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
    expectedPayee?: string | null;
  }): Promise<LinkConfig> {
    const c = new Checker();
    const payee = this.checkPayee(c, input.expectedPayee)?.payee ?? null;
    c.text("name", input.name, { required: true, max: 100 });
    const url = c.text("url", input.url, { required: true, max: 2000 });
    if (url !== null) await this.checkUrl(c, url);
    c.check("currency", input.currency, CURRENCY_NUMBER);
    this.checkProtocol(c, input.protocol);
    c.done("Invalid payment-link configuration");
    await this.merchants.mustHaveMerchant(input.merchantId);
    const l = Object.assign(new LinkConfig(), {
      merchantRef: input.merchantId,
      name: input.name,
      url: input.url,
      currency: input.currency as 116 | 840,
      protocol: input.protocol ?? null,
      expectedPayee: payee,
      expectedPayeeSource: payee === null ? null : ("operator" as PayeeSource),
    });
    await this.em().persist(l).flush();
    return l;
  }

  async update(
    id: string,
    input: { name?: string; url?: string; currency?: number; protocol?: string | null; expectedPayee?: string | null },
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
      // The rule admits 116 and 840 only.
      if (c.check("currency", input.currency, CURRENCY_NUMBER)) l.currency = input.currency as 116 | 840;
    }
    this.checkProtocol(c, input.protocol);
    if (input.protocol !== undefined) l.protocol = input.protocol;
    // The operator's word replaces whatever was recorded; cleared, the link's next QR records it again.
    const payee = this.checkPayee(c, input.expectedPayee);
    if (payee !== undefined) {
      l.expectedPayee = payee.payee;
      l.expectedPayeeSource = payee.payee === null ? null : "operator";
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

  /**
   * The payee a configuration expects, recording `payee` if it expects none yet (the link's first QR, trust on first
   * use): one conditional update, so two first QRs at once cannot both record theirs. `recorded`: this call did.
   */
  async recordPayee(id: string, payee: string): Promise<{ expected: string | null; recorded: boolean }> {
    const em = this.em();
    const changed = await em.nativeUpdate(
      LinkConfig,
      { id, expectedPayee: null },
      { expectedPayee: payee, expectedPayeeSource: "first-qr", updatedAt: new Date() },
    );
    if (changed > 0) return { expected: payee, recorded: true };
    return { expected: (await em.findOne(LinkConfig, { id }))?.expectedPayee ?? null, recorded: false };
  }

  /** Whether a configuration of this merchant exists (a gateway-link key is bound to one). */
  async belongsTo(id: string, merchantId: string): Promise<boolean> {
    return (await this.em().findOne(LinkConfig, { id, merchantRef: merchantId })) !== null;
  }
}
