import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createSecretKey,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
  type KeyObject,
} from "node:crypto";

/** What a stored secret is for: part of its key derivation, so a key for one purpose opens nothing else. */
export type SecretPurpose = "webhook-endpoint-secret" | "gateway-api-secret" | "network-token" | "link-poll-session";

/** A stored secret that does not open for this row and purpose (moved, altered, or another SECRET_KEY). */
export class SecretUnreadableError extends Error {
  override readonly name = "SecretUnreadableError";
}

export interface OpenedSecret {
  plain: string;
  /**
   * The stored text in the current format (v2), or null when it was the legacy v1 format: the caller writes
   * this instead (`upgraded`), bound to its row.
   */
  upgraded: string | null;
}

/**
 * Encrypts stored secrets (gateway API secrets, webhook signing secrets) with AES-256-GCM, and signs the
 * stateless per-transaction client tokens.
 *
 * Format v2 (`v2.` + base64url(iv ‖ tag ‖ ciphertext)): the key is HKDF-SHA256(SECRET_KEY) with the purpose
 * as its label, and the row's id (with the purpose) is the associated data, so a ciphertext copied to
 * another row, or to a column of another purpose, fails to decrypt (an error, never another plaintext).
 * Format v1 (before issue 16: SHA-256 of SECRET_KEY, no associated data) still opens, and is handed back
 * re-sealed as v2 so the caller can rewrite the row (docs/decisions/0127-secrets-at-rest-v2.md).
 */
export class SecretBox {
  private readonly legacyKey: Buffer;
  private readonly keys = new Map<SecretPurpose, Buffer>();
  /** A KeyObject made once: createHmac with a Buffer imports the key again on every call. */
  private readonly macKey: KeyObject;

  constructor(private readonly secret: string) {
    this.legacyKey = createHash("sha256").update(`enc:${secret}`).digest();
    this.macKey = createSecretKey(createHash("sha256").update(`mac:${secret}`).digest());
  }

  private keyFor(purpose: SecretPurpose): Buffer {
    let key = this.keys.get(purpose);
    if (key === undefined) {
      key = Buffer.from(hkdfSync("sha256", this.secret, "payment-qr-service/secrets-at-rest", purpose, 32));
      this.keys.set(purpose, key);
    }
    return key;
  }

  /** Encrypts `plain` for the row `rowId` of `purpose`. */
  seal(plain: string, purpose: SecretPurpose, rowId: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.keyFor(purpose), iv);
    cipher.setAAD(associatedData(purpose, rowId));
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return `v2.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
  }

  /** Decrypts a secret stored in the row `rowId`; throws SecretUnreadableError when it is not that row's. */
  open(sealed: string, purpose: SecretPurpose, rowId: string): OpenedSecret {
    if (sealed.startsWith("v2.")) {
      const plain = this.decipher(sealed.slice(3), this.keyFor(purpose), associatedData(purpose, rowId));
      return { plain, upgraded: null };
    }
    if (sealed.startsWith("v1.")) {
      const plain = this.decipher(sealed.slice(3), this.legacyKey, null);
      return { plain, upgraded: this.seal(plain, purpose, rowId) };
    }
    throw new SecretUnreadableError("unknown stored secret format");
  }

  private decipher(encoded: string, key: Buffer, aad: Buffer | null): string {
    const raw = Buffer.from(encoded, "base64url");
    if (raw.length < 28) throw new SecretUnreadableError("stored secret is truncated");
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
      if (aad !== null) decipher.setAAD(aad);
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    } catch {
      throw new SecretUnreadableError(
        "a stored secret does not decrypt for this row (copied from another row, altered, or another SECRET_KEY)",
      );
    }
  }

  /** The v1 format, kept for tests that play a row stored before issue 16. */
  sealLegacy(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.legacyKey, iv);
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
  }

  mac(data: string): string {
    return createHmac("sha256", this.macKey).update(data).digest("base64url");
  }

  macMatches(data: string, mac: string): boolean {
    const expected = Buffer.from(this.mac(data));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

function associatedData(purpose: SecretPurpose, rowId: string): Buffer {
  return Buffer.from(`${purpose}\0${rowId}`, "utf8");
}
