// What the tests that drive payment-link pages with real Chromium share: where Chromium is, a QR stand-in, and a
// JSON caller of a twin's controls (the pages themselves: the PayWay twin, payway-twin.ts).

import { randomBytes } from "node:crypto";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Deterministic enough to recognise, random enough that two clients never share a QR. */
export function fakeQr(amount: string, currency: 116 | 840): string {
  return `KHQR-${amount}-${currency}-${randomBytes(4).toString("hex")}`;
}

/** `(method, path, body?)` against `origin`: the status and the answer as JSON, or as text when it is not (HTML pages). */
export function jsonCaller(origin: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(origin + path, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // HTML pages stay text
    }
    return { status: res.status, body: parsed };
  };
}
