import { checkedReturnUrl, issueCheckout } from "../auth/checkout-link.js";
import type { Clock } from "../clock.js";
import type { EgressPolicy } from "../upstreams/egress.js";
import { AppError } from "../errors.js";
import { newId } from "../ids.js";
import type { Logger } from "../logger.js";
import type { KeyPrincipal } from "../auth/principal.js";
import type { Authenticator } from "../auth/keys.js";
import type { LinkConfigs } from "./link-configs.js";
import type { NewTransaction, TransactionStore } from "../transactions/transition.js";
import type { TxRecord } from "../transactions/record.js";
import { NUMERIC_TO_CODE } from "../money/money.js";
import { failureReason } from "../transactions/failure-reason.js";
import { decimalInput, invalidInput } from "../validation/check.js";
import { checkArgument, refuse } from "../validation/checker.js";
import { IDENTIFIER } from "../validation/rules.js";
import { LINK_LIFETIME_MS, type GenerateGatewayLinkQrInput } from "./link.types.js";
import { shareRefusalOf, type BrowserPool, type PageOwner, type ShareRefusal } from "./browser.js";
import type { LinkPageProtocol, LinkProtocolName, PayerFields } from "./link-protocol.js";
import { LinkDriverError, openLinkSession, type LinkSession } from "./link-driver.js";
import type { SecretBox } from "../auth/secret-box.js";
import type { LinkRefusals } from "./link-refusals.js";
import type { LinkWatch } from "./link-watch.js";
import { POLL_LEASE_MS, sealPoll } from "./poll-store.js";
import type { LinkConfig } from "./link-config.entity.js";
import { payeeRefusal, qrPayee } from "./payee.js";
import { noQrReason } from "./no-qr.js";
import { classifyRefusal } from "./page-refusal.js";

type Draft = NewTransaction & { status: "PENDING" };

export interface LinkView {
  transactionId: string;
  expiredAt: string;
  status: string;
  requestData: { amount: number; currency: number; meta: Record<string, unknown> };
  data: { qr: string; clientId: string };
  /** Opens the payer's banking app on this QR (PayWay links). */
  deeplink?: string;
  receiptUrl?: string;
  scanned?: boolean;
  /** FAILED only: why, as stored with the failure. */
  failureReason?: string;
  clientToken?: string;
  checkoutUrl?: string;
}

/** Gateway-link area: a QR obtained by driving the key's payment-link page in headless Chromium. */
export class LinkService {
  constructor(
    private readonly store: TransactionStore,
    private readonly configs: Pick<LinkConfigs, "get" | "protocolOf" | "recordPayee">,
    private readonly auth: Pick<Authenticator, "issueClientToken">,
    private readonly pool: BrowserPool,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly opts: {
      openTimeoutMs: number;
      protocol: (name: LinkProtocolName) => LinkPageProtocol;
      egress: EgressPolicy;
      box: Pick<SecretBox, "seal">;
      /** This worker's watch of payments followed without a page (null where no jobs run: a worker claims them). */
      watch: LinkWatch | null;
      refusals: LinkRefusals;
      allowedOrigins: readonly string[];
      /** Where the hosted checkout page is (checkoutUrl). */
      baseUrl?: string;
    },
  ) {}

  /** `input` is checked already (its class's rules); the key's configuration decides currency and precision. */
  async generate(key: KeyPrincipal, input: GenerateGatewayLinkQrInput): Promise<LinkView> {
    const link = key.targetRef ? await this.configs.get(key.targetRef) : null;
    if (link === null)
      throw refuse(
        "x-api-key",
        "is not linked to a payment-link configuration",
        "This key has no payment-link configuration",
      );
    if (input.currency !== link.currency) {
      throw invalidInput([
        { field: "currency", message: `must be ${link.currency}, the currency configured for this key` },
      ]);
    }
    const amount = decimalInput(input.amount, "amount", link.currency === 116 ? 0 : 2);
    const meta = input.meta ?? {};
    const returnUrl = checkedReturnUrl(input.returnUrl, this.opts.baseUrl ?? "");

    if (!this.pool.executableAvailable())
      throw new AppError("SERVICE_UNAVAILABLE", chromiumMissing(this.pool.executablePath));
    // Its page, and the page its payment may need held (one polled through after refused polls), come out of this
    // merchant's and this configuration's shares of the pool: a payment that could not be followed is refused (429)
    // before anything is opened or stored.
    const owner: PageOwner = { merchant: key.merchantRef, config: link.id };
    const protocol = this.opts.protocol(this.configs.protocolOf(link));
    const full = this.pool.holdRefusal(owner, this.opts.watch?.waitingForPages());
    if (full !== null) throw shareRefused(full);
    const issuedAt = this.clock.now();
    const expiresAt = new Date(issuedAt.getTime() + LINK_LIFETIME_MS);
    const id = newId("txn");
    const payer = payerFieldsOf(input);
    const request = {
      amount: input.amount,
      currency: link.currency,
      meta,
      ...(returnUrl === undefined ? {} : { returnUrl }),
      // Which of the payer's fields were given, never their values (they are personal data, and only the page needs
      // them): docs/decisions/0201-what-a-link-asks-beyond-an-amount.md.
      ...(payer === undefined ? {} : { payerFields: Object.keys(payer) }),
    };
    // What the transaction is, whether the page gives a QR or not.
    const draft: Draft = {
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
    let session: LinkSession;
    try {
      session = await this.open(link, amount, protocol, owner, payer);
    } catch (err) {
      const refusal = shareRefusalOf(err);
      if (refusal !== null) throw shareRefused(refusal);
      // The request does not fit the link (its fixed amount, its bounds, a field it requires): the caller's error,
      // found before the page's API was asked; nothing is stored.
      if (err instanceof LinkDriverError && err.kind === "invalid_input")
        throw invalidInput([...err.invalid], "The payment link refuses this request");
      return this.noQr(draft, link.url, err);
    }
    const refusal = await this.payeeRefusal(link, session.qr);
    if (refusal !== null) {
      this.logger.warn({ url: link.url, linkConfig: link.id }, refusal);
      return this.failed(draft, capitalised(refusal), refusal);
    }
    const tx = await this.record(draft, { url: link.url, configId: link.id }, protocol, session);
    return {
      ...this.view(tx),
      ...issueCheckout(this.auth, this.opts.baseUrl ?? "", tx.id, tx.expiresAt, tx.apiKeyRef),
    };
  }

  /**
   * The page driven to its QR. When its API refuses the request's data (JSON "Invalid Data": the page's state was
   * stale), the page is opened once more, in a fresh context (fresh aba_data, request_time and cookies), as public
   * clients do (decision 0196); an edge refusal (Cloudflare) or any other failure is not retried.
   */
  private async open(
    link: LinkConfig,
    amount: string,
    protocol: LinkPageProtocol,
    owner: PageOwner,
    payer: PayerFields | undefined,
  ) {
    const attempt = () =>
      openLinkSession(this.pool, {
        url: link.url,
        amount,
        currency: link.currency,
        ...(payer === undefined ? {} : { payer }),
        timeoutMs: this.opts.openTimeoutMs,
        protocol,
        egress: this.opts.egress,
        allowedOrigins: this.opts.allowedOrigins,
        onWarning: (warning) => this.logger.warn({ url: link.url, protocol: protocol.name }, warning),
        share: { owner },
      });
    try {
      return await attempt();
    } catch (err) {
      const refusal = err instanceof LinkDriverError ? err.refusal : null;
      if (refusal === null || refusal.kind !== "page") throw err;
      this.opts.refusals.refusedBy(refusedWhere(refusal.by), refusal);
      this.logger.warn(
        { url: link.url, detail: refusal.detail },
        "payment-link page refused the request's data (stale page state): opening the page again, once",
      );
      return attempt();
    }
  }

  /**
   * Whether the QR pays the configuration's payee (payee.ts): a refusal's reason, or null. A configuration that
   * expects none yet records this QR's (trust on first use), which the operator sees and can change.
   */
  private async payeeRefusal(link: LinkConfig, qr: string): Promise<string | null> {
    const payee = qrPayee(qr);
    if (link.expectedPayee !== null || payee === null) return payeeRefusal(payee, link.expectedPayee);
    const { expected, recorded } = await this.configs.recordPayee(link.id, payee);
    if (recorded)
      this.logger.warn(
        { linkConfig: link.id, url: link.url, payee },
        "payment-link configuration: its first QR's payee is recorded as the payee every QR must pay; " +
          "check it (link configurations, expectedPayee)",
      );
    return payeeRefusal(payee, expected);
  }

  /**
   * The page produced no QR: the attempt is a FAILED transaction, and the 502 names why (the page's refusal with its
   * code and message, the network error, …: no-qr.ts), so the merchant sees it in the answer and in failureReason.
   */
  private async noQr(draft: Draft, url: string, err: unknown): Promise<never> {
    const why = err instanceof Error ? err.message : String(err);
    this.logger.warn({ err: why, url }, "payment-link page produced no QR");
    const refusal = err instanceof LinkDriverError ? refusalOf(err) : null;
    if (refusal !== null) this.opts.refusals.refusedBy(refusedWhere(refusal.by), refusal);
    // Refused twice, on a freshly loaded page too: the answer names what the page's API said.
    const reason =
      refusal?.kind === "page"
        ? `the payment page refused: its API refused the request twice, on a freshly loaded page too ` +
          `(code ${refusal.code ?? "none"}, "${refusal.message ?? ""}")`
        : noQrReason(err);
    return this.failed(draft, capitalised(reason), reason);
  }

  private async failed(draft: Draft, message: string, why: string): Promise<never> {
    await this.store.create(draft);
    await this.store.transition({
      id: draft.id,
      to: "FAILED",
      event: "payment.failed",
      upstream: { failure: { message: why } },
    });
    throw new AppError("UPSTREAM_UNAVAILABLE", message, [], { transactionId: draft.id });
  }

  /** Stores the payment with its QR and hands it to whoever follows it: this worker's watch, or any worker's. */
  private async record(
    draft: Draft,
    { url, configId }: { url: string; configId: string },
    protocol: LinkPageProtocol,
    session: LinkSession,
  ): Promise<TxRecord> {
    // A page opened and answered: it ends a run of refused openings, never one the status polls met (the edge may let
    // the browser through and still refuse the polls: link-refusals.ts).
    this.opts.refusals.answered("open");
    const poll = session.poll;
    if (poll.expireInSec !== null && poll.expireInSec !== String(LINK_LIFETIME_MS / 1000))
      this.logger.warn(
        { url, expireInSec: poll.expireInSec },
        "the payment page gives its QR another lifetime than 180 s; the payment still expires after 180 s",
      );
    const local = this.opts.watch !== null && this.opts.watch.room > 0;
    const now = this.clock.now().getTime();
    let tx: TxRecord;
    try {
      ({ tx } = await this.store.create({
        ...draft,
        qr: session.qr,
        upstreamRef: session.clientId,
        upstream: {
          linkUrl: url,
          linkConfigId: configId,
          protocol: protocol.name,
          ...(session.deeplink === undefined ? {} : { deeplink: session.deeplink }),
          poll: sealPoll(this.opts.box, draft.id, poll),
        },
        // Followed here: leased to this worker; else due now, for any worker to claim.
        nextCheckAt: new Date(local ? now + POLL_LEASE_MS : now),
      }));
    } catch (err) {
      if ((err as { code?: string }).code !== "23505") throw err;
      // The page answered with a session another payment of this merchant already holds (a provider that
      // resumed a session it should not have): never two payments on one upstream session.
      this.logger.warn({ url }, "payment-link page answered with a session already in use");
      return this.failed(
        draft,
        "The payment page answered with a payment already in use",
        "the payment page answered with a session another payment holds",
      );
    }
    if (local) this.opts.watch?.adopt(tx, true);
    return tx;
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
    checkArgument("transactionId", transactionId, IDENTIFIER, "transactionId is required");
    const tx = await this.store.findForKey(key.keyId, { id: transactionId as string, area: "gateway_link" });
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
      data: { qr: tx.qr ?? "", clientId: tx.upstreamRef ?? "" },
    };
    if (typeof tx.upstream.deeplink === "string") v.deeplink = tx.upstream.deeplink;
    if (tx.status === "SUCCESS" && typeof tx.upstream.receiptUrl === "string" && tx.upstream.receiptUrl)
      v.receiptUrl = tx.upstream.receiptUrl;
    if (tx.upstream.scannedAt !== undefined) v.scanned = true;
    const reason = failureReason(tx);
    if (reason !== null) v.failureReason = reason;
    return v;
  }
}

/** The payer's fields the request gives (non-empty), or undefined when it gives none. */
function payerFieldsOf(input: GenerateGatewayLinkQrInput): PayerFields | undefined {
  const payer: PayerFields = {};
  for (const k of ["remark", "payerName", "payerEmail", "payerPhone"] as const) {
    const v = input[k];
    if (typeof v === "string" && v !== "") payer[k] = v;
  }
  return Object.keys(payer).length > 0 ? payer : undefined;
}

/** A generate over its merchant's or configuration's share of the browser pool: 429 with when to try again. */
function shareRefused(r: ShareRefusal): AppError {
  const retryAfter = Math.ceil(r.retryAfterMs / 1000);
  const whose = r.scope === "configuration" ? "This payment-link configuration" : `This ${r.scope}`;
  const setting = `LINK_${r.kind === "open" ? "OPENS" : "HELD_PAGES"}_PER_${r.scope === "merchant" ? "MERCHANT" : "CONFIG"}`;
  const message =
    r.kind === "open"
      ? `${whose} already has ${r.cap} payment pages opening on this worker, its share (${setting}); retry in ${retryAfter} s`
      : `${whose}'s payments already hold ${r.cap} browser pages on this worker, its share (${setting}): ` +
        `a new payment could not be followed; retry in ${retryAfter} s`;
  return new AppError("RATE_LIMITED", message, [], { retryAfter });
}

/** The one sentence an operator needs when the gateway-link area has no browser. */
export function chromiumMissing(path: string): string {
  return (
    `The gateway-link area needs Chromium and there is no executable at ${path}: install it (Debian: ` +
    `apt-get install chromium) or set CHROMIUM_PATH`
  );
}

/** The refusal behind a driver's error; a 403 whose answer was not read is an edge refusal of unknown kind. */
function refusalOf(err: LinkDriverError): LinkDriverError["refusal"] {
  if (err.refusal !== null || err.httpStatus !== 403) return err.refusal;
  const refusal = classifyRefusal({ status: 403, body: null });
  return refusal === null ? null : { ...refusal, by: "page" };
}

function refusedWhere(by: "page" | "api"): string {
  return by === "page" ? "the payment page" : "the page's QR request (list-payment-options)";
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
