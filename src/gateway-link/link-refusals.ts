import type { Logger } from "../logger.js";

/**
 * "The payment page or its API refuses us with 403": said once in the log, with its likely cause and the setting
 * that fixes it, and shown in /readyz until a call is answered again. Per process (each sees its own calls).
 */
export class LinkRefusals {
  private refused: { since: string; where: string; detail: string } | null = null;

  constructor(
    private readonly logger: Pick<Logger, "error" | "info">,
    private readonly proxy: string | null,
    private readonly now: () => Date,
  ) {}

  /** A 403 from the page (`where`: what answered it). Logged once per run of refusals. */
  refusedBy(where: string, detail: string): void {
    if (this.refused !== null) return;
    this.refused = { since: this.now().toISOString(), where, detail };
    this.logger.error({ upstream: "gateway-link", where, detail, proxy: this.proxy }, this.message());
  }

  /** Anything but a 403 from the page or its API ends the run. */
  answered(): void {
    if (this.refused === null) return;
    this.refused = null;
    this.logger.info({ upstream: "gateway-link" }, "payment-link pages answer again (no more HTTP 403)");
  }

  message(): string {
    const r = this.refused;
    if (r === null) return "";
    return (
      `payment-link page refused with HTTP 403 (${r.where}: ${r.detail}); likely cause: ${LIKELY_CAUSE}` +
      (this.proxy === null ? "" : ` (requests go through the proxy ${this.proxy})`)
    );
  }

  readiness(): Record<string, unknown> {
    if (this.refused === null) return {};
    return {
      gatewayLink: {
        refused: `${this.refused.where} answered HTTP 403 since ${this.refused.since}`,
        detail: this.refused.detail,
        likelyCause: LIKELY_CAUSE,
        setting: "LINK_PROXY",
        proxy: this.proxy,
      },
    };
  }
}

const LIKELY_CAUSE =
  "the payment provider's firewall refuses this address (datacenter or outside Cambodia): route the browser and " +
  "the status polls through a proxy in Cambodia with LINK_PROXY=http://[user:pass@]host:port";
