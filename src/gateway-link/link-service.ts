import { issueCheckout } from "../auth/checkout-link.js";
import type { Clock } from "../clock.js";
import type { EgressPolicy } from "../upstreams/egress.js";
import { AppError } from "../errors.js";
import { newId } from "../ids.js";
import type { Logger } from "../logger.js";
import type { KeyPrincipal } from "../auth/principal.js";
import type { Authenticator } from "../auth/keys.js";
import type { LinkConfigs } from "./link-configs.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { TxRecord } from "../transactions/record.js";
import { NUMERIC_TO_CODE } from "../transactions/money.js";
import { decimalInput, invalidInput } from "../validation/check.js";
import { LINK_LIFETIME_MS, type GenerateGatewayLinkQrInput } from "./link.types.js";
import type { BrowserPool } from "./browser.js";
import type { LinkPageProtocol } from "./link-protocol.js";
import { openLinkSession, type LinkSession } from "./link-driver.js";

/** Fixed by the contract: every gateway-link QR expires exactly 180 s after issue. */

export interface LinkView {
  transactionId: string;
  expiredAt: string;
  status: string;
  requestData: { amount: number; currency: number; meta: Record<string, unknown> };
  data: { qr: string; clientId: string };
  receiptUrl?: string;
  scanned?: boolean;
  clientToken?: string;
  checkoutUrl?: string;
}

/** Gateway-link area: a QR obtained by driving the key's payment-link page in headless Chromium. */
export class LinkService {
  /** Sessions opened here and not yet taken by a monitor in this process (saves reopening the page). */
  readonly handoff = new Map<string, LinkSession>();

  constructor(
    private readonly store: TransactionStore,
    private readonly configs: Pick<LinkConfigs, "get">,
    private readonly auth: Pick<Authenticator, "issueClientToken">,
    private readonly pool: BrowserPool,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly opts: {
      openTimeoutMs: number;
      protocol: LinkPageProtocol;
      egress: EgressPolicy;
      allowedOrigins: readonly string[];
      startMonitor: (transactionId: string) => Promise<void>;
      /** Where the hosted checkout page is (checkoutUrl). */
      baseUrl?: string;
    },
  ) {}

  /** `input` is checked already (its class's rules); the key's configuration decides currency and precision. */
  async generate(key: KeyPrincipal, input: GenerateGatewayLinkQrInput): Promise<LinkView> {
    const link = key.linkConfigRef ? await this.configs.get(key.linkConfigRef) : null;
    if (link === null)
      throw new AppError("BAD_USER_INPUT", "This key has no payment-link configuration", [
        { field: "x-api-key", message: "is not linked to a payment-link configuration" },
      ]);
    if (input.currency !== link.currency) {
      throw invalidInput([
        { field: "currency", message: `must be ${link.currency}, the currency configured for this key` },
      ]);
    }
    const amount = decimalInput(input.amount, "amount", link.currency === 116 ? 0 : 2);
    const meta = input.meta ?? {};

    if (!this.pool.executableAvailable())
      throw new AppError("SERVICE_UNAVAILABLE", chromiumMissing(this.pool.executablePath));
    const issuedAt = this.clock.now();
    const expiresAt = new Date(issuedAt.getTime() + LINK_LIFETIME_MS);
    const id = newId("txn");
    const request = { amount: input.amount, currency: link.currency, meta };
    // What the transaction is, whether the page gives a QR or not.
    const draft = {
      id,
      area: "gateway_link" as const,
      merchantRef: key.merchantRef,
      apiKeyRef: key.keyId,
      status: "PENDING" as const,
      amount,
      currency: NUMERIC_TO_CODE[link.currency],
      meta,
      request,
      expiresAt,
    };
    const failed = async (message: string, why: string): Promise<never> => {
      // The attempt is recorded as a FAILED transaction so the merchant sees it (issue: 502 + FAILED).
      await this.store.create(draft);
      await this.store.transition({
        id,
        to: "FAILED",
        event: "payment.failed",
        upstream: { failure: { message: why } },
      });
      throw new AppError("UPSTREAM_UNAVAILABLE", message, [], { transactionId: id });
    };
    let session: LinkSession;
    try {
      session = await openLinkSession(this.pool, {
        url: link.url,
        amount,
        currency: link.currency,
        timeoutMs: this.opts.openTimeoutMs,
        protocol: this.opts.protocol,
        egress: this.opts.egress,
        allowedOrigins: this.opts.allowedOrigins,
      });
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, url: link.url }, "payment-link page produced no QR");
      return failed("The payment page did not produce a QR in time", "the payment page did not produce a QR");
    }
    let tx: TxRecord;
    try {
      ({ tx } = await this.store.create({
        ...draft,
        qr: session.qr,
        clientId: session.clientId,
        upstream: { linkUrl: link.url },
        nextCheckAt: expiresAt,
      }));
    } catch (err) {
      await session.close();
      if ((err as { code?: string }).code !== "23505") throw err;
      // The page answered with a session another payment of this merchant already holds (a provider that
      // resumed a session it should not have): never two payments on one upstream session.
      this.logger.warn({ url: link.url }, "payment-link page answered with a session already in use");
      return failed(
        "The payment page answered with a payment already in use",
        "the payment page answered with a session another payment holds",
      );
    }
    this.handoff.set(tx.id, session);
    setTimeout(() => {
      // Not taken by a local monitor within a few seconds (api-only process): release the page; a worker resumes it.
      const s = this.handoff.get(tx.id);
      if (s) void s.close().then(() => this.handoff.delete(tx.id));
    }, 5_000).unref();
    await this.opts.startMonitor(tx.id);
    return {
      ...this.view(tx),
      ...issueCheckout(this.auth, this.opts.baseUrl ?? "", tx.id, tx.expiresAt, tx.apiKeyRef),
    };
  }

  /** The generate answer rebuilt from its transaction (an Idempotency-Key retry after a crash). */
  async replay(key: KeyPrincipal, transactionId: string): Promise<LinkView> {
    const tx = await this.store.findForKey(key.keyId, { id: transactionId, area: "gateway_link" });
    if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    return {
      ...this.view(tx),
      ...issueCheckout(this.auth, this.opts.baseUrl ?? "", tx.id, tx.expiresAt, tx.apiKeyRef),
    };
  }

  async check(key: KeyPrincipal, transactionId: unknown): Promise<LinkView> {
    if (typeof transactionId !== "string" || transactionId.length === 0 || transactionId.length > 100) {
      throw new AppError("BAD_USER_INPUT", "transactionId is required", [
        { field: "transactionId", message: "must be a non-empty string" },
      ]);
    }
    const tx = await this.store.findForKey(key.keyId, { id: transactionId, area: "gateway_link" });
    if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    return this.view(tx);
  }

  view(tx: TxRecord): LinkView {
    const req = tx.request as { amount: number; currency: number };
    const v: LinkView = {
      transactionId: tx.id,
      expiredAt: tx.expiresAt.toISOString(),
      status: tx.status,
      requestData: { amount: req.amount, currency: req.currency, meta: tx.meta },
      data: { qr: tx.qr ?? "", clientId: tx.clientId ?? "" },
    };
    if (tx.status === "SUCCESS" && tx.receiptUrl) v.receiptUrl = tx.receiptUrl;
    if (tx.upstream.scannedAt !== undefined) v.scanned = true;
    return v;
  }
}

/** The one sentence an operator needs when the gateway-link area has no browser. */
export function chromiumMissing(path: string): string {
  return (
    `The gateway-link area needs Chromium and there is no executable at ${path}: install it (Debian: ` +
    `apt-get install chromium) or set CHROMIUM_PATH`
  );
}
