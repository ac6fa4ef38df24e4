import { describe, it, expect } from "@jest/globals";
import { createHash, randomBytes, randomInt, randomUUID } from "node:crypto";
import { ConfigError, loadConfig, weakSecret } from "../src/config.js";

/**
 * The rule for secret settings in production (docs/decisions/0176-secret-strength-by-alphabet-and-known-values.md),
 * both ways: well-known values refused however they are written, random values accepted by what they are drawn from,
 * phrases judged by their words.
 */
const PRODUCTION = {
  NODE_ENV: "production",
  ADMIN_TOKEN: "t3L3QrdOh4-gKyrmM36WoFRbB8iNxJ7XgIWrRxLLnrI",
  SECRET_KEY: "hdW3mQ8vYc2TfK9pLx4RnB7sZa1GeJ6uNq5Dw0Vt",
  SIMULATORS: "false",
  DATABASE_URL: "postgresql://pqr@127.0.0.1:9/pqr",
};

/** The ConfigError's message for these settings in production, or null when they are accepted. */
function refusal(settings: Record<string, string>): string | null {
  try {
    loadConfig({ ...PRODUCTION, ...settings });
    return null;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.message;
  }
}

const digest = (algorithm: string, text: string) => createHash(algorithm).update(text).digest();
const alphanumerics = (n: number) =>
  Array.from({ length: n }, () => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[randomInt(62)]).join(
    "",
  );

describe("secret settings in production", () => {
  it.each([
    ['the SHA-256 of "" in hex', digest("sha256", "").toString("hex"), 'it is the SHA-256 of ""'],
    ['the SHA-256 of "" in upper-case hex', digest("sha256", "").toString("hex").toUpperCase(), "SHA-256 of"],
    ['the SHA-256 of "" in base64', digest("sha256", "").toString("base64"), 'it is the SHA-256 of ""'],
    ['the SHA-256 of "password" and a newline', digest("sha256", "password\n").toString("hex"), '"password\\n"'],
    ['the MD5 of "admin"', digest("md5", "admin").toString("hex"), 'it is the MD5 of "admin"'],
    ['the SHA-1 of "changeme"', digest("sha1", "changeme").toString("hex"), 'it is the SHA-1 of "changeme"'],
    ['the SHA-512 of "secret"', digest("sha512", "secret").toString("base64url"), 'it is the SHA-512 of "secret"'],
    ["32 zero bytes in hex", "00".repeat(32), "it is the byte 0x00 repeated"],
    ["the bytes 0 to 31 in base64", Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString("base64"), "run"],
    ["a weak phrase in base64", Buffer.from("ThisIsMyAdminTokenForProduction2026!!").toString("base64"), "decodes"],
    ["a weak phrase in hex", Buffer.from("password-password-password").toString("hex"), "decodes"],
    ["16 random bytes in hex (128 bits exactly)", randomBytes(16).toString("hex"), "strength estimate"],
    ["a UUID (122 random bits)", `${randomUUID()}`, "strength estimate"],
    ["the same character", "x".repeat(40), "strength estimate"],
    ["a keyboard walk and a sequence", "qwertyuiopasdfghjklzxcvbnm1234567890", "strength estimate"],
  ])("refuses %s", (_what, value, why) => {
    expect(weakSecret(value, true)).toContain(why);
  });

  it('refuses the SHA-256 of "" in hex as ADMIN_TOKEN: the start stops with why and how to make one', () => {
    expect(refusal({ ADMIN_TOKEN: digest("sha256", "").toString("hex") })).toBe(
      'ADMIN_TOKEN is too weak (it is the SHA-256 of ""); use 32 random bytes (`openssl rand -base64 32`, or ' +
        "`node -e \"console.log(require('node:crypto').randomBytes(32).toString('base64url'))\"`)",
    );
  });

  it("applies the same rule to SECRET_KEY and METRICS_TOKEN", () => {
    const sha = digest("sha256", "").toString("hex");
    expect(refusal({ SECRET_KEY: sha })).toBe(
      'SECRET_KEY is too weak (it is the SHA-256 of ""); use 32 random bytes (`openssl rand -base64 32`, or ' +
        "`node -e \"console.log(require('node:crypto').randomBytes(32).toString('base64url'))\"`)",
    );
    expect(refusal({ METRICS_TOKEN: sha })).toMatch(/^METRICS_TOKEN is too weak \(it is the SHA-256 of ""\)/);
    expect(refusal({ SECRET_KEY: "test-secret-key-0123456789-0123456789" })).toMatch(
      /^SECRET_KEY is too weak \(its strength estimate is \d+ bits, more than 128 are required/,
    );
  });

  it("accepts random values by the alphabet they are drawn from: 34 alphanumerics (202 bits) every time", () => {
    const value = alphanumerics(34);
    expect({ value, refusal: refusal({ ADMIN_TOKEN: value, SECRET_KEY: value }) }).toEqual({ value, refusal: null });
    for (const value of [
      ...Array.from({ length: 10 }, () => alphanumerics(34)),
      randomBytes(24).toString("base64url"), // 192 bits in 32 characters
      randomBytes(32).toString("hex"),
      randomBytes(48).toString("base64"), // the README's SECRET_KEY
      `pqr_${randomBytes(32).toString("base64url")}`,
    ])
      expect({ value, weak: weakSecret(value, true) }).toEqual({ value, weak: null });
  });

  it("judges a phrase by its words: a common one is refused, eleven random words pass", () => {
    expect(refusal({ ADMIN_TOKEN: "correct-horse-battery-staple-violin-quantum-marmalade" })).toMatch(
      /^ADMIN_TOKEN is too weak \(its strength estimate is \d+ bits, more than 128 are required/,
    );
    for (const weak of [
      "correct horse battery staple correct horse",
      "admin-token-for-the-payment-qr-service-prod",
      "ThisIsMyAdminTokenForProduction2026!!",
    ])
      expect(weakSecret(weak, true)).toMatch(/^its strength estimate is \d+ bits/);
    expect(
      refusal({ ADMIN_TOKEN: "city handbook jet washtub footage oasis schedule quarrel gondola elderly recollect" }),
    ).toBeNull();
  });

  it("checks only the length outside production", () => {
    const sha = digest("sha256", "").toString("hex");
    expect(() => loadConfig({ NODE_ENV: "development", ADMIN_TOKEN: sha, SECRET_KEY: sha })).not.toThrow();
    expect(() => loadConfig({ NODE_ENV: "development", METRICS_TOKEN: "short" })).toThrow(
      "METRICS_TOKEN is too weak (it has 5 characters, at least 32 are required)",
    );
  });
});
