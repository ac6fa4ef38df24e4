import { createHmac } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { checkTransactionHash, generateQrHash, hashesEqual } from "../../src/upstreams/gateway-hash.js";

/**
 * The expected values are computed here without the project's code: either literal base64
 * strings produced with `openssl dgst -sha512 -hmac KEY -binary | base64`, or node's createHmac
 * over the concatenation written out by hand in the gateway's field order.
 */
const hmac = (key: string, message: string) => createHmac("sha512", key).update(message, "utf8").digest("base64");

const ITEMS_B64 = "W3sibmFtZSI6IkNvZmZlZSIsInF1YW50aXR5IjoyLCJwcmljZSI6Mi41fV0="; // [{"name":"Coffee","quantity":2,"price":2.5}]
const CALLBACK_B64 = "aHR0cHM6Ly9zaG9wLmV4YW1wbGUvcGF5d2F5L3B1c2hiYWNr"; // https://shop.example/payway/pushback

describe("check-transaction-2 hash", () => {
  it("signs req_time + merchant_id + tran_id (openssl vector)", () => {
    const hash = checkTransactionHash("fb629880e9a741dc9862a4ad260f6668", {
      req_time: "20250213065545",
      merchant_id: "ec000002",
      tran_id: "17394277693",
    });
    expect(hash).toBe("Dc6SLdHuBvRWm3SGV4VuVkP1m/YnJCGVq/Je6GvIxtTMMcARi40Y/J5CFi5SEVV1xAOVqttwH7tYHl7on2xItA==");
  });

  it("matches a hand-written concatenation", () => {
    const hash = checkTransactionHash("key-2", { req_time: "20260101000000", merchant_id: "m-1", tran_id: "ORD-9" });
    expect(hash).toBe(hmac("key-2", "20260101000000m-1ORD-9"));
  });
});

describe("generate-qr hash", () => {
  it("signs a minimal KHQR request, absent fields as empty strings (openssl vector)", () => {
    const hash = generateQrHash("sandbox-api-key-0001", {
      req_time: "20250301120000",
      merchant_id: "ec000002",
      tran_id: "trx-001",
      amount: "1.5",
      purchase_type: "purchase",
      payment_option: "abapay_khqr",
      currency: "USD",
      lifetime: "6",
    });
    expect(hash).toBe("3zWbngSfh9p5XggDoeBa6L09oPrkrs0HWCRhQcpCBiDKBB6VgZR5T1yKCgCJS2dJFIwqxndaDfenumlDKoqQeQ==");
  });

  it("signs customer fields, items, callback and template in the gateway's order, UTF-8 (openssl vector)", () => {
    const hash = generateQrHash("k3y-with-ünïcode", {
      qr_image_template: "template3_color",
      currency: "KHR",
      lifetime: "1440",
      callback_url: CALLBACK_B64,
      payment_option: "abapay_khqr",
      purchase_type: "purchase",
      phone: "+855 12 345 678",
      email: "dara@example.com",
      last_name: "Chan",
      first_name: "សុខា",
      items: ITEMS_B64,
      amount: "100000",
      tran_id: "ORDER-2025-0001",
      merchant_id: "merchant-xyz",
      req_time: "20251231235959",
    });
    expect(hash).toBe("UGyJSPJ0vyBFgOhe9MrFy1RBj6fUAamsI6/yEI+CdZJxYCvlCfptGdmuuhhvz1awi1hp5CofVWU/sYTBz7raWQ==");
  });

  it("uses all nineteen fields in order (hand-written concatenation)", () => {
    const fields = {
      req_time: "20250505050505",
      merchant_id: "M",
      tran_id: "T",
      amount: "9.99",
      items: "I",
      first_name: "F",
      last_name: "L",
      email: "e@x.io",
      phone: "012",
      purchase_type: "pre-auth",
      payment_option: "abapay_khqr",
      callback_url: "C",
      return_deeplink: "D",
      currency: "USD",
      custom_fields: "CF",
      return_params: "RP",
      payout: "PO",
      lifetime: "30",
      qr_image_template: "template1",
    };
    const message =
      "20250505050505" +
      "M" +
      "T" +
      "9.99" +
      "I" +
      "F" +
      "L" +
      "e@x.io" +
      "012" +
      "pre-auth" +
      "abapay_khqr" +
      "C" +
      "D" +
      "USD" +
      "CF" +
      "RP" +
      "PO" +
      "30" +
      "template1";
    expect(generateQrHash("k", fields)).toBe(hmac("k", message));
  });

  it("treats an absent field exactly like an empty one, and order changes the hash", () => {
    const base = {
      req_time: "20250101000000",
      merchant_id: "M",
      tran_id: "T",
      amount: "1",
      currency: "USD",
      lifetime: "3",
    };
    expect(generateQrHash("k", base)).toBe(generateQrHash("k", { ...base, items: "", email: "" }));
    expect(generateQrHash("k", base)).toBe(hmac("k", "20250101000000MT1USD3"));
    expect(generateQrHash("k", { ...base, amount: "USD", currency: "1" })).not.toBe(generateQrHash("k", base));
  });
});

describe("hashesEqual", () => {
  it("compares signatures of any length without throwing", () => {
    expect(hashesEqual("abc", "abc")).toBe(true);
    expect(hashesEqual("abc", "abd")).toBe(false);
    expect(hashesEqual("abc", "abcd")).toBe(false);
  });
});
