import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { KeyKind } from "./api-key.entity.js";
import type { KeyKinds } from "./key-kinds.js";
import { type ClientPrincipal, type KeyPrincipal, type Principal } from "./principal.js";
import type { SecretBox } from "./secret-box.js";
import { TtlCache } from "../cache/ttl-cache.js";
import type { Invalidation, Invalidations } from "../cache/invalidation.js";
import { credentialsFromHeaders } from "./credentials.js";

const LAST_USED_EVERY_MS = 60_000;
/**
 * How long a key's principal is reused without reading api_key again. Revocation does not wait for it: the
 * revoking process drops the entry on commit and every other process on the NOTIFY (cache/invalidation.ts);
 * this bound only matters when a notification is lost, e.g. while a listener reconnects.
 */
export const KEY_CACHE_TTL_MS = 5_000;

/**
 * The longest a clientToken lives (it is public by design: a browser holds it). A token issued for a
 * longer-lived transaction (a hosted gateway QR may live 120 days) stops at this cap; the page asks its
 * server for a new one.
 */
export const CLIENT_TOKEN_MAX_MS = 24 * 3600_000;
/** A client token outlives its transaction by this much, so the page still sees the end. */
const CLIENT_TOKEN_GRACE_MS = 600_000;
/** What generateKey writes: `pqr_`, a kind tag, `_`, base64url. Anything else is not a key (401, no lookup). */
const KEY_ALPHABET = /^[A-Za-z0-9_-]{1,200}$/;

export function hashKey(plain: string): string {
  return createHash("sha256").update(plain).digest("hex");
}

/** A new key: `pqr_<kind's tag>_<43 chars of base64url of 32 random bytes>`; the prefix is safe to display. */
export function generateKey(tag: string): { plain: string; prefix: string; hash: string } {
  const plain = `pqr_${tag}_${randomBytes(32).toString("base64url")}`;
  return { plain, prefix: plain.slice(0, 14), hash: hashKey(plain) };
}

/**
 * Whether a presented token is the expected secret (the admin token, METRICS_TOKEN), compared in constant time: both are
 * hashed first, so neither where they differ nor the expected one's length shows in the time taken.
 */
export function sameToken(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Resolves request credentials to a principal. Never says why a key is refused beyond a generic reason. */
export class Authenticator {
  private readonly lastUsedWritten = new Map<string, number>();
  /** SHA-256 of the presented key → its principal (valid keys only, so unknown keys cannot fill it). */
  private readonly keys: TtlCache<KeyPrincipal>;
  /** Key id → still active (a client token is checked against the key that issued it). */
  private readonly activeKeys: TtlCache<true>;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly adminToken: string,
    /** The kinds of key the areas declare (x-auth-type → kind). */
    private readonly kinds: KeyKinds,
    invalidations?: Invalidations,
  ) {
    this.keys = new TtlCache(KEY_CACHE_TTL_MS, () => clock.now().getTime());
    this.activeKeys = new TtlCache(KEY_CACHE_TTL_MS, () => clock.now().getTime());
    invalidations?.register({
      invalidate: (inv: Invalidation) => {
        if (inv.kind !== "api_key") return;
        this.keys.delete((_hash, p) => p.keyId === inv.id);
        this.activeKeys.delete((id) => id === inv.id);
      },
      clear: () => {
        this.keys.clear();
        this.activeKeys.clear();
      },
    });
  }

  async fromCredentials(creds: {
    apiKey?: string;
    authType?: string;
    bearer?: string;
    clientToken?: string;
  }): Promise<Principal> {
    if (creds.bearer !== undefined && creds.bearer !== "") {
      if (this.isAdminToken(creds.bearer)) return { type: "admin" };
      const client = await this.verifyClientToken(creds.bearer);
      if (client !== null) return client;
      return { type: "anonymous", reason: "invalid bearer token" };
    }
    if (creds.clientToken !== undefined && creds.clientToken !== "") {
      return (await this.verifyClientToken(creds.clientToken)) ?? { type: "anonymous", reason: "invalid client token" };
    }
    if (creds.apiKey === undefined || creds.apiKey === "") return { type: "anonymous", reason: "missing x-api-key" };
    if (!KEY_ALPHABET.test(creds.apiKey)) return { type: "anonymous", reason: "invalid API key" };
    const kind = this.kinds.kindOfAuthType(creds.authType);
    if (kind === undefined) return { type: "anonymous", reason: "missing or unknown x-auth-type" };
    const key = await this.lookup(creds.apiKey);
    if (key === null) return { type: "anonymous", reason: "invalid API key" };
    // Said apart from an unknown key, so the REST answer can point at the area the caller's key belongs to.
    if (key.kind !== kind) return { type: "anonymous", reason: "key of another area", keyKind: key.kind };
    return key;
  }

  /** Demo mode prints the admin token in its banner and demo.json. */
  adminTokenForDemo(): string {
    return this.adminToken;
  }

  /**
   * The admin-token check, the one of the service: GraphQL's admin principal (fromCredentials), the operator HTTP
   * paths (isAdminRequest) and the metrics scrape all ask it.
   */
  isAdminToken(token: string): boolean {
    return sameToken(token, this.adminToken);
  }

  /** Whether an HTTP request carries the admin token (`Authorization: Bearer <ADMIN_TOKEN>`). */
  isAdminRequest(headers: Record<string, string | string[] | undefined>): boolean {
    const token = credentialsFromHeaders(headers).bearer ?? "";
    return token !== "" && this.isAdminToken(token);
  }

  /**
   * A read-only token for one transaction that a browser may hold (the checkout view only): valid until the
   * transaction expires (+ 10 min to see the end), at most CLIENT_TOKEN_MAX_MS, and while its key is active.
   */
  issueClientToken(transactionId: string, expiresAt: Date, keyId: string): string {
    const exp = Math.min(expiresAt.getTime() + CLIENT_TOKEN_GRACE_MS, this.clock.now().getTime() + CLIENT_TOKEN_MAX_MS);
    const body = Buffer.from(`${transactionId}.${exp}.${keyId}`).toString("base64url");
    return `ct_${body}.${this.box.mac(body)}`;
  }

  async verifyClientToken(token: string): Promise<ClientPrincipal | null> {
    if (!token.startsWith("ct_") || token.length > 400) return null;
    const dot = token.lastIndexOf(".");
    if (dot < 0) return null;
    const body = token.slice(3, dot);
    if (!this.box.macMatches(body, token.slice(dot + 1))) return null;
    const [transactionId, exp, keyId] = Buffer.from(body, "base64url").toString().split(".");
    const expiresAt = Number(exp);
    if (!transactionId || !keyId || !Number.isFinite(expiresAt) || expiresAt < this.clock.now().getTime()) return null;
    if ((await this.activeKeys.get(keyId, () => this.keyActive(keyId))) === null) return null;
    return { type: "client", transactionId, expiresAt, keyId };
  }

  private async keyActive(keyId: string): Promise<true | null> {
    const rows = await this.db.query(`select 1 from api_key where id = ? and revoked_at is null`, [keyId]);
    return rows.length > 0 ? true : null;
  }

  private async lookup(plain: string): Promise<KeyPrincipal | null> {
    if (plain.length > 200) return null;
    const hash = hashKey(plain);
    const key = await this.keys.get(hash, () => this.load(hash));
    if (key !== null) this.touch(key.keyId);
    return key;
  }

  private async load(hash: string): Promise<KeyPrincipal | null> {
    const rows = await this.db.query<Record<string, string | null>>(
      `select id, hash, merchant_ref, kind, target_ref from api_key where hash = ? and revoked_at is null`,
      [hash],
    );
    const row = rows[0];
    // The index finds the row; the explicit constant-time comparison keeps the check itself timing-safe.
    if (row === undefined || !timingSafeEqual(Buffer.from(row.hash as string), Buffer.from(hash))) return null;
    // Frozen: one cached object is handed to every request of this key.
    return Object.freeze({
      type: "key",
      keyId: row.id as string,
      merchantRef: row.merchant_ref as string,
      kind: row.kind as KeyKind,
      targetRef: row.target_ref,
    } as const);
  }

  /** last_used_at is written at most once a minute per key, off the request's path. */
  private touch(keyId: string): void {
    const now = this.clock.now();
    const last = this.lastUsedWritten.get(keyId) ?? 0;
    if (now.getTime() - last < LAST_USED_EVERY_MS) return;
    this.lastUsedWritten.set(keyId, now.getTime());
    this.db.query(`update api_key set last_used_at = ? where id = ?`, [now, keyId]).catch(() => undefined);
  }
}
