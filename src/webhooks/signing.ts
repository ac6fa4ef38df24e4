import { createHmac, timingSafeEqual } from "node:crypto";

/** `v1=` + hex HMAC-SHA256 of `timestamp + "." + rawBody` under the endpoint secret (DESIGN.md "Webhooks"). */
export function signature(secret: string, timestamp: number | string, rawBody: string | Buffer): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex");
}

/** The x-signature header: one `v1=` value per active secret (two during a rotation's overlap), space separated. */
export function signatureHeader(secrets: string[], timestamp: number, rawBody: string): string {
  return secrets.map((s) => `v1=${signature(s, timestamp, rawBody)}`).join(" ");
}

export interface VerifyWebhookInput {
  secret: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: string | Buffer;
  toleranceSeconds?: number;
  /** Unix seconds; defaults to the current time. */
  now?: number;
}

/**
 * For receivers: true when the delivery was signed with `secret` and its timestamp is within the tolerance
 * (default 5 minutes, which stops replays of old deliveries). Pass the raw body exactly as received.
 */
export function verifyWebhook({
  secret,
  headers,
  rawBody,
  toleranceSeconds = 300,
  now = Math.floor(Date.now() / 1000),
}: VerifyWebhookInput): boolean {
  const get = (name: string) => {
    const v = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  };
  const ts = get("x-timestamp");
  const sig = get("x-signature");
  if (!ts || !sig || !/^\d{1,12}$/.test(ts)) return false;
  if (Math.abs(now - Number(ts)) > toleranceSeconds) return false;
  const expected = Buffer.from(signature(secret, ts, rawBody), "hex");
  return sig.split(" ").some((part) => {
    if (!part.startsWith("v1=")) return false;
    const given = Buffer.from(part.slice(3), "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
