import { createHash, randomInt } from "node:crypto";

// The request shapes of an ABA PayWay payment link's own API, as public code shows them (docs/gateway-link.md, "Pointing at
// a real PayWay link", lists each fact with its confidence). Shared by the adapter, its poller and the twin in
// src/simulators/payway/, so a path or a hash is written once; test/upstreams/payway.test.ts pins the hashes
// against values computed from the formulas alone.

/** The page's API, on its own origin (PAYWAY_API_ORIGIN). */
export const PAYWAY_PATHS = {
  listPaymentOptions: "/api/pw-app/v1/payment/gateway/list-payment-options",
  checkPaymentStatus: "/api/pw-app/v1/payment-link/check-payment-status",
  downloadReceipt: "/api/payment-gateway/v1/payments/download-receipt",
} as const;

export const PAYWAY_DEFAULT_API_ORIGIN = "https://pwapp.ababank.com";

/** The only status code that means the call worked. */
export const PAYWAY_OK = "00";

/** The one action that means paid (high confidence). */
export const PAYWAY_APPROVED = "approved";

const sha512hex = (text: string): string => createHash("sha512").update(text, "utf8").digest("hex");

/** list-payment-options: sha512hex(request_time + aba_data + additional_fields), no secret. */
export function listOptionsHash(requestTime: string, abaData: string, additionalFields: string): string {
  return sha512hex(requestTime + abaData + additionalFields);
}

/** check-payment-status: sha512hex(client_id + device_id + request_time), no secret. */
export function statusHash(clientId: string, deviceId: string, requestTime: string): string {
  return sha512hex(clientId + deviceId + requestTime);
}

const DEVICE_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A fresh random 10-character device id, one per poll as the page makes them. */
export function newDeviceId(): string {
  let id = "";
  for (let i = 0; i < 10; i++) id += DEVICE_ALPHABET[randomInt(DEVICE_ALPHABET.length)];
  return id;
}

/** The body of one check-payment-status poll. */
export function statusPollBody(clientId: string, requestTime: string, deviceId = newDeviceId()) {
  return {
    device_id: deviceId,
    request_time: requestTime,
    client_id: clientId,
    hash: statusHash(clientId, deviceId, requestTime),
  };
}

/**
 * `request_time` of the page: YYYYMMDDHHmmss in UTC, as captures show it (a QR made at 07:05:09Z carried
 * `20260917070508`, somvannda/chmabapay; a poll's `rq-time` 1777691150 four minutes after `20260502030151`,
 * Eavheang/payway-merchant).
 */
export function paywayRequestTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return (
    p(d.getUTCFullYear(), 4) +
    p(d.getUTCMonth() + 1) +
    p(d.getUTCDate()) +
    p(d.getUTCHours()) +
    p(d.getUTCMinutes()) +
    p(d.getUTCSeconds())
  );
}

/** A poll answer's `data["rq-time"]`: the answer's time in whole Unix seconds, a JSON number (Eavheang's capture). */
export function paywayRqTime(ms: number): number {
  return Math.floor(ms / 1000);
}

/** The banking app's deeplink for a KHQR (the format of the official abapay_deeplink; medium confidence). */
export function paywayDeeplink(qrString: string): string {
  return `abamobilebank://ababank.com?type=payway&qrcode=${encodeURIComponent(qrString)}`;
}

/** Answers come flat or wrapped in `data` (both seen in public code): the object that carries `field`. */
export function unwrapAnswer(body: unknown, field: string): Record<string, unknown> | null {
  if (!isRecord(body)) return null;
  if (field in body) return body;
  return isRecord(body.data) && field in body.data ? body.data : null;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
