import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { KeyKind } from "./api-key.entity.js";
import { AUTH_TYPES, type KeyPrincipal, type Principal } from "./principal.js";
import type { SecretBox } from "./secret-box.js";
import { TtlCache } from "../cache/ttl-cache.js";
import type { Invalidation, Invalidations } from "../cache/invalidation.js";

const KIND_TAG: Record<KeyKind, string> = { qr: "qr", gateway: "gw", gateway_link: "gl" };
const LAST_USED_EVERY_MS = 60_000;
/**
 * How long a key's principal is reused without reading api_key again. Revocation does not wait for it: the
 * revoking process drops the entry on commit and every other process on the NOTIFY (cache/invalidation.ts);
 * this bound only matters when a notification is lost, e.g. while a listener reconnects.
 */
export const KEY_CACHE_TTL_MS = 5_000;

export function hashKey(plain: string): string {
  return createHash("sha256").update(plain).digest("hex");
}

/** A new key: `pqr_<kind>_<43 chars of base64url of 32 random bytes>`; the prefix is safe to display. */
export function generateKey(kind: KeyKind): { plain: string; prefix: string; hash: string } {
  const plain = `pqr_${KIND_TAG[kind]}_${randomBytes(32).toString("base64url")}`;
  return { plain, prefix: plain.slice(0, 14), hash: hashKey(plain) };
}

/** Resolves request credentials to a principal. Never says why a key is refused beyond a generic reason. */
export class Authenticator {
  private readonly lastUsedWritten = new Map<string, number>();
  /** SHA-256 of the presented key → its principal (valid keys only, so unknown keys cannot fill it). */
  private readonly keys: TtlCache<KeyPrincipal>;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly adminToken: string,
    invalidations?: Invalidations,
  ) {
    this.keys = new TtlCache(KEY_CACHE_TTL_MS, () => clock.now().getTime());
    invalidations?.register({
      invalidate: (inv: Invalidation) => {
        if (inv.kind === "api_key") this.keys.delete((_hash, p) => p.keyId === inv.id);
      },
      clear: () => this.keys.clear(),
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
      const client = this.verifyClientToken(creds.bearer);
      if (client !== null) return client;
      return { type: "anonymous", reason: "invalid bearer token" };
    }
    if (creds.clientToken !== undefined && creds.clientToken !== "") {
      return this.verifyClientToken(creds.clientToken) ?? { type: "anonymous", reason: "invalid client token" };
    }
    if (creds.apiKey === undefined || creds.apiKey === "") return { type: "anonymous", reason: "missing x-api-key" };
    const kind = creds.authType === undefined ? undefined : AUTH_TYPES[creds.authType];
    if (kind === undefined) return { type: "anonymous", reason: "missing or unknown x-auth-type" };
    const key = await this.lookup(creds.apiKey);
    if (key === null || key.kind !== kind) return { type: "anonymous", reason: "invalid API key" };
    return key;
  }

  /** Demo mode prints the admin token in its banner and demo.json. */
  adminTokenForDemo(): string {
    return this.adminToken;
  }

  isAdminToken(token: string): boolean {
    const a = createHash("sha256").update(token).digest();
    const b = createHash("sha256").update(this.adminToken).digest();
    return timingSafeEqual(a, b);
  }

  /** A read-only token for one transaction that a browser may hold; valid until the transaction expires (+ 10 min to see the end). */
  issueClientToken(transactionId: string, expiresAt: Date): string {
    const body = Buffer.from(`${transactionId}.${expiresAt.getTime() + 600_000}`).toString("base64url");
    return `ct_${body}.${this.box.mac(body)}`;
  }

  verifyClientToken(token: string): Principal | null {
    if (!token.startsWith("ct_")) return null;
    const dot = token.lastIndexOf(".");
    if (dot < 0) return null;
    const body = token.slice(3, dot);
    if (!this.box.macMatches(body, token.slice(dot + 1))) return null;
    const [transactionId, exp] = Buffer.from(body, "base64url").toString().split(".");
    const expiresAt = Number(exp);
    if (!transactionId || !Number.isFinite(expiresAt) || expiresAt < this.clock.now().getTime()) return null;
    return { type: "client", transactionId, expiresAt };
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
      `select id, hash, merchant_ref, kind, gateway_config_ref, link_config_ref from api_key where hash = ? and revoked_at is null`,
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
      gatewayConfigRef: row.gateway_config_ref,
      linkConfigRef: row.link_config_ref,
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
