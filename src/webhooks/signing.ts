import { createHmac, timingSafeEqual } from "node:crypto";
import { stringifyExact } from "../exact-json.js";

/** The exact bytes sent; redeliveries of one event carry the same id and body, with meta exactly as sent. */
export function deliveryBody(eventId: string, type: string, createdAt: Date, data: unknown): string {
  return stringifyExact({ id: eventId, type, createdAt: createdAt.toISOString(), data });
}

/** `v1=` + hex HMAC-SHA256 of `timestamp + "." + rawBody` under the endpoint secret (docs/webhooks.md). */
export function signature(secret: string, timestamp: number | string, rawBody: string | Buffer): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex");
}

/** The x-signature header: one `v1=` value per active secret (two during a rotation's overlap), space separated. */
export function signatureHeader(secrets: string[], timestamp: number, rawBody: string | Buffer): string {
  return secrets.map((s) => `v1=${signature(s, timestamp, rawBody)}`).join(" ");
}

/** The headers every delivery carries, whoever sends it (the dispatcher, or `admin listen`). */
export function deliveryHeaders(
  secrets: string[],
  timestamp: number,
  rawBody: string,
  event: { id: string; type: string },
): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "payment-qr-webhooks/1",
    "x-timestamp": String(timestamp),
    "x-signature": signatureHeader(secrets, timestamp, rawBody),
    "x-event-id": event.id,
    "x-event-type": event.type,
  };
}

export interface VerifyWebhookOptions {
  /** How far x-timestamp may be from now, in seconds (default 300); stops replays of old deliveries. */
  toleranceSeconds?: number;
  /** Unix seconds; defaults to the current time. */
  now?: number;
}

type HeaderBag = Record<string, string | string[] | undefined> | Headers;

/**
 * For receivers: true when the delivery was signed with one of `secrets` (pass both the new and the old one
 * during a rotation) and its timestamp is within the tolerance. Pass the raw body exactly as received.
 */
export function verifyWebhook(
  rawBody: string | Buffer | Uint8Array,
  headers: HeaderBag,
  secrets: string | readonly string[],
  { toleranceSeconds = 300, now = Math.floor(Date.now() / 1000) }: VerifyWebhookOptions = {},
): boolean {
  const get = (name: string): string | undefined => {
    if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
    const bag = headers as Record<string, string | string[] | undefined>;
    const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
    const v = key === undefined ? undefined : bag[key];
    return Array.isArray(v) ? v[0] : v;
  };
  const ts = get("x-timestamp");
  const sig = get("x-signature");
  if (!ts || !sig || !/^\d{1,12}$/.test(ts)) return false;
  if (!(Math.abs(now - Number(ts)) <= toleranceSeconds)) return false;
  const body = typeof rawBody === "string" || Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody);
  const given = sig
    .split(" ")
    .filter((part) => part.startsWith("v1=") && /^[0-9a-f]{64}$/.test(part.slice(3)))
    .map((part) => Buffer.from(part.slice(3), "hex"));
  const list = typeof secrets === "string" ? [secrets] : secrets;
  return list.some((secret) => {
    if (typeof secret !== "string" || secret === "") return false;
    const expected = Buffer.from(signature(secret, ts, body), "hex");
    return given.some((g) => timingSafeEqual(g, expected));
  });
}
