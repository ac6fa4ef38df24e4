import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import {
  INVALIDATE_CHANNEL,
  NOTIFY_INVALIDATION_SQL,
  invalidationPayload,
  type Invalidation,
  type Invalidations,
} from "../cache/invalidation.js";
import type { SecretBox } from "../auth/secret-box.js";
import type { TokenRefusal } from "./network-limits.js";
import { checkArgument } from "../validation/checker.js";
import { matches } from "../validation/rules.js";

/**
 * The national network's bearer token through its lifecycle (issue 20,
 * docs/decisions/0109-network-token-lifecycle.md): a JWT valid about 90 days. The one in use is the operator's
 * stored replacement (encrypted, row `network_token` of upstream_credential) if there is one, else
 * NETWORK_API_TOKEN. A replacement is effective in every process
 * at once (a NOTIFY on the invalidation channel makes each reload it). With NETWORK_API_EMAIL it is renewed
 * by the network's renew_token call: once when a call answers 401 with the token in use, and ahead of expiry
 * at most once a day — never in a loop.
 */

export interface TokenStatus {
  source: "environment" | "stored";
  /** The JWT's `exp`; null when the token is not a JWT or carries none. */
  expiresAt: Date | null;
  updatedAt: Date | null;
  /** Set while the network refuses the token, or when it expires within WARN_DAYS (or has expired). */
  warning: string | null;
  /** Since when the network refuses the token in use (401 / errorCode 6), as this process saw it; null if it does not. */
  refusedSince: Date | null;
}

/** Renews by e-mail: POST /v1/renew_token {email} → the new token, or null. */
export type Renewer = (email: string) => Promise<string | null>;

export const WARN_DAYS = 14;
const DAY_MS = 24 * 3600_000;
const NAME = "network_token";
/** A replacement token, trimmed: 8 to 4096 characters, none of them white space. */
const TOKEN = matches("must be 8 to 4096 characters without spaces", /^\S{8,4096}$/);
/** The stored replacement is sealed for this purpose and bound to its row (src/auth/secret-box.ts). */
const PURPOSE = "network-token";
const KIND = "network_token";

/** The `exp` claim of a JWT, in ms; null if the token is not a JWT with a numeric exp. */
export function jwtExpiry(token: string): Date | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8")) as unknown;
    const exp = typeof payload === "object" && payload !== null ? (payload as { exp?: unknown }).exp : undefined;
    return typeof exp === "number" && Number.isFinite(exp) && exp > 0 ? new Date(exp * 1000) : null;
  } catch {
    return null;
  }
}

export class NetworkToken {
  private token: string;
  private source: TokenStatus["source"] = "environment";
  private updatedAt: Date | null = null;
  /** The token a 401-driven renewal was last attempted for (one attempt per token). */
  private renewedFor: string | null = null;
  private lastAheadAttempt = 0;
  private inflight: Promise<boolean> | null = null;
  private refusal: { seen: TokenRefusal; token: string } | null = null;

  constructor(
    private readonly deps: {
      db: Db;
      box: Pick<SecretBox, "seal" | "open">;
      invalidations: Invalidations;
      logger: Logger;
      now: () => number;
      envToken: string;
      email: string | null;
      renew: Renewer;
    },
  ) {
    this.token = deps.envToken;
    deps.invalidations.register({
      invalidate: (inv: Invalidation) => {
        if (inv.kind === KIND) void this.load();
      },
      clear: () => void this.load(),
    });
  }

  current(): string {
    return this.token;
  }

  /** The network client's word: the token in use is refused since…, or (null) answered again. */
  refused(refusal: TokenRefusal | null): void {
    this.refusal = refusal === null ? null : { seen: refusal, token: this.token };
  }

  /** Reads the stored replacement, if any (start-up, and on every invalidation). */
  async load(): Promise<void> {
    const rows = await this.deps.db
      .query<{ sealed: string; updated_at: Date }>(
        `select sealed, updated_at from upstream_credential where name = ?`,
        [NAME],
      )
      .catch((err: unknown) => {
        this.deps.logger.warn({ err }, "network token: could not read the stored token; keeping the one in use");
        return null;
      });
    if (rows === null) return;
    if (rows.length === 0) {
      this.token = this.deps.envToken;
      this.source = "environment";
      this.updatedAt = null;
      return;
    }
    try {
      this.token = this.deps.box.open(rows[0].sealed, PURPOSE, NAME).plain;
      this.source = "stored";
      this.updatedAt = new Date(rows[0].updated_at);
    } catch {
      this.deps.logger.error("network token: the stored token cannot be decrypted with this SECRET_KEY");
    }
  }

  status(): TokenStatus {
    const expiresAt = jwtExpiry(this.token);
    // A refusal is of the token it was seen with: a replaced token has yet to be judged by the network.
    const refusal = this.refusal !== null && this.refusal.token === this.token ? this.refusal.seen : null;
    let warning: string | null = null;
    const left = expiresAt === null ? null : expiresAt.getTime() - this.deps.now();
    if (expiresAt !== null && left !== null && left <= 0)
      warning = `the network API token expired at ${expiresAt.toISOString()}: payments cannot be followed; replace it`;
    else if (refusal !== null)
      warning =
        `the network refuses the API token (unauthorized, HTTP ${refusal.httpStatus}) since ${refusal.since}: ` +
        "payments cannot be followed and stay pending; replace it (setNetworkToken / npm run admin -- network-token:set)";
    else if (expiresAt !== null && left !== null && left <= WARN_DAYS * DAY_MS)
      warning =
        `the network API token expires at ${expiresAt.toISOString()} (in ${Math.ceil(left / DAY_MS)} days): ` +
        "renew it by e-mail and replace it (setNetworkToken / npm run admin -- network-token:set)";
    const refusedSince = refusal === null ? null : new Date(refusal.since);
    return { source: this.source, expiresAt, updatedAt: this.updatedAt, warning, refusedSince };
  }

  /** Stores a replacement (encrypted) and makes every process use it at once. */
  async replace(token: string, by: "operator" | "renewal"): Promise<TokenStatus> {
    const value = token.trim();
    checkArgument("token", value, TOKEN, "invalid network token");
    const now = new Date(this.deps.now());
    const inv: Invalidation = { kind: KIND, id: NAME };
    await this.deps.db.transaction(async (q) => {
      await q(
        `insert into upstream_credential (name, sealed, updated_at) values (?, ?, ?)
         on conflict (name) do update set sealed = excluded.sealed, updated_at = excluded.updated_at`,
        [NAME, this.deps.box.seal(value, PURPOSE, NAME), now],
      );
      await q(NOTIFY_INVALIDATION_SQL, [INVALIDATE_CHANNEL, invalidationPayload(inv)]);
    });
    this.token = value;
    this.source = "stored";
    this.updatedAt = now;
    const expiresAt = jwtExpiry(value);
    this.deps.logger.info(
      { upstream: "network", by, expiresAt: expiresAt?.toISOString() ?? null },
      `network token replaced (${by})`,
    );
    return this.status();
  }

  /**
   * A call answered 401 with `used`. True when a different token is now available to retry with once: another
   * process or the operator replaced it, or (with NETWORK_API_EMAIL) one renewal for this token succeeded.
   */
  async unauthorized(used: string): Promise<boolean> {
    this.inflight ??= (async () => {
      await this.load();
      if (this.token !== used) return true;
      if (this.deps.email === null || this.renewedFor === used) return false;
      this.renewedFor = used;
      return this.renewNow("the network answered 401");
    })().finally(() => (this.inflight = null));
    return this.inflight;
  }

  /** Ahead of expiry (within WARN_DAYS, not yet expired), at most once a day: the scheduled job calls this. */
  async renewAhead(): Promise<void> {
    const expiresAt = jwtExpiry(this.token);
    if (this.deps.email === null || expiresAt === null) return;
    const now = this.deps.now();
    // An expired token is the 401 path's (one attempt per token); this is only for one about to expire.
    const left = expiresAt.getTime() - now;
    if (left <= 0 || left > WARN_DAYS * DAY_MS || now - this.lastAheadAttempt < DAY_MS) return;
    this.lastAheadAttempt = now;
    await this.renewNow(`the token expires at ${expiresAt.toISOString()}`);
  }

  private async renewNow(why: string): Promise<boolean> {
    const email = this.deps.email as string;
    const fresh = await this.deps.renew(email).catch((err: unknown) => {
      this.deps.logger.error({ err: String(err) }, "network token: renew_token failed");
      return null;
    });
    if (fresh === null || fresh === this.token) {
      this.deps.logger.error(
        { upstream: "network", why },
        "network token: renewal gave no new token; replace it by hand (setNetworkToken / network-token:set)",
      );
      return false;
    }
    await this.replace(fresh, "renewal");
    return true;
  }
}
