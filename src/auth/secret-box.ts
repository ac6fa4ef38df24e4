import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createSecretKey,
  randomBytes,
  timingSafeEqual,
  type KeyObject,
} from "node:crypto";

/**
 * Encrypts stored secrets (gateway API secrets, webhook signing secrets) with AES-256-GCM under a key
 * derived from SECRET_KEY, and signs the stateless per-transaction client tokens.
 */
export class SecretBox {
  private readonly key: Buffer;
  /** A KeyObject made once: createHmac with a Buffer imports the key again on every call. */
  private readonly macKey: KeyObject;

  constructor(secret: string) {
    this.key = createHash("sha256").update(`enc:${secret}`).digest();
    this.macKey = createSecretKey(createHash("sha256").update(`mac:${secret}`).digest());
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
  }

  decrypt(sealed: string): string {
    if (!sealed.startsWith("v1.")) throw new Error("unknown secret format");
    const raw = Buffer.from(sealed.slice(3), "base64url");
    const decipher = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
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
