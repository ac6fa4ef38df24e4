import { describe, it, expect } from "@jest/globals";
import { verifyWebhook } from "../../src/index.js";
import { sign } from "../support/webhook-receiver.js";

/** The package's `verifyWebhook(rawBody, headers, secrets, { toleranceSeconds })`, checked against the README's recipe. */
describe("verifyWebhook", () => {
  const body = '{"id":"evt_1","type":"payment.completed","data":{"meta":{"amount":1.10}}}';
  const ts = 1_800_000_000;
  const headers = (secrets: string[], t = ts) => ({
    "x-timestamp": String(t),
    "x-signature": secrets.map((s) => `v1=${sign(s, String(t), body)}`).join(" "),
  });

  it("accepts the raw body as a string, a Buffer or bytes, with headers in any case or as a Headers object", () => {
    const h = headers(["whsec_a"]);
    expect(verifyWebhook(body, h, "whsec_a", { now: ts })).toBe(true);
    expect(verifyWebhook(Buffer.from(body), h, ["whsec_a"], { now: ts })).toBe(true);
    expect(verifyWebhook(new TextEncoder().encode(body), h, "whsec_a", { now: ts })).toBe(true);
    expect(
      verifyWebhook(body, { "X-Timestamp": h["x-timestamp"], "X-Signature": h["x-signature"] }, "whsec_a", { now: ts }),
    ).toBe(true);
    expect(verifyWebhook(body, new Headers(h), "whsec_a", { now: ts })).toBe(true);
  });

  it("takes several secrets for a rotation: either the old or the new one verifies, a third does not", () => {
    const rotating = headers(["whsec_new", "whsec_old"]);
    expect(verifyWebhook(body, rotating, ["whsec_old"], { now: ts })).toBe(true);
    expect(verifyWebhook(body, rotating, ["whsec_other", "whsec_new"], { now: ts })).toBe(true);
    expect(verifyWebhook(body, rotating, ["whsec_other"], { now: ts })).toBe(false);
    expect(verifyWebhook(body, rotating, [], { now: ts })).toBe(false);
    expect(verifyWebhook(body, rotating, [""], { now: ts })).toBe(false);
  });

  it("refuses a changed body (even a re-serialised one), an old or future timestamp, and missing or junk headers", () => {
    const h = headers(["whsec_a"]);
    expect(verifyWebhook(body.replace("1.10", "1.1"), h, "whsec_a", { now: ts })).toBe(false);
    expect(verifyWebhook(JSON.stringify(JSON.parse(body)), h, "whsec_a", { now: ts })).toBe(false);
    expect(verifyWebhook(body, h, "whsec_a", { now: ts + 301 })).toBe(false);
    expect(verifyWebhook(body, h, "whsec_a", { now: ts - 301 })).toBe(false);
    expect(verifyWebhook(body, h, "whsec_a", { now: ts + 301, toleranceSeconds: 600 })).toBe(true);
    expect(verifyWebhook(body, { "x-signature": h["x-signature"] }, "whsec_a", { now: ts })).toBe(false);
    expect(verifyWebhook(body, { ...h, "x-timestamp": "1e9" }, "whsec_a", { now: ts })).toBe(false);
    expect(verifyWebhook(body, { ...h, "x-signature": "v1=abc" }, "whsec_a", { now: ts })).toBe(false);
    expect(
      verifyWebhook(body, { ...h, "x-signature": h["x-signature"].replace("v1=", "v0=") }, "whsec_a", { now: ts }),
    ).toBe(false);
    // A timestamp moved into the window does not carry the old signature with it.
    expect(verifyWebhook(body, { ...h, "x-timestamp": String(ts + 1) }, "whsec_a", { now: ts })).toBe(false);
  });
});
