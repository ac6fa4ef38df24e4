import { createHash } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { encodeKhqr, KhqrError, validateKhqrInput, type KhqrInput } from "../../src/khqr/index.js";
import { HOUR, individualFull, individualStatic, merchantDynamic, T0, tlv, withCrc } from "./fixtures.js";

function codeOf(input: unknown): number | null {
  try {
    encodeKhqr(input as KhqrInput);
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(KhqrError);
    return (e as KhqrError).errorCode;
  }
}

describe("encodeKhqr", () => {
  it("writes a static individual QR: PoI 11, tag 29, no amount, no timestamps", () => {
    const { qr, md5 } = encodeKhqr(individualStatic);
    expect(qr).toBe(
      withCrc(
        "000201" +
          "010211" +
          tlv("29", tlv("00", "john_smith@devb")) +
          "52045999" +
          "5303116" +
          "5802KH" +
          tlv("59", "John Smith") +
          tlv("60", "Phnom Penh"),
      ),
    );
    expect(md5).toBe(createHash("md5").update(qr).digest("hex"));
  });

  it("writes a dynamic merchant QR: PoI 12, tag 30 with merchant id and bank, amount, tag 99", () => {
    const { qr } = encodeKhqr(merchantDynamic());
    expect(qr).toBe(
      withCrc(
        "000201010212" +
          tlv("30", tlv("00", "devit@abaa") + tlv("01", "1243546472") + tlv("02", "DEVBKKHPXXX")) +
          "52045999" +
          "5303840" +
          tlv("54", "1.50") +
          "5802KH" +
          tlv("59", "devit") +
          tlv("60", "Battambang") +
          tlv("99", tlv("00", String(T0)) + tlv("01", String(T0 + HOUR))),
      ),
    );
    // The shape of the SDK's published example (README / research note).
    expect(
      qr.startsWith(
        "00020101021230430010devit@abaa011012435464720211DEVBKKHPXXX52045999530384054041.505802KH5905devit6010Battambang9934",
      ),
    ).toBe(true);
  });

  it("writes individual account information, acquiring bank, MCC, additional data, alternate language and timestamps", () => {
    const { qr } = encodeKhqr(individualFull());
    expect(qr).toBe(
      withCrc(
        "000201010212" +
          tlv("29", tlv("00", "sokha@wing") + tlv("01", "85512345678") + tlv("02", "Wing Bank")) +
          "52045812" +
          "5303116" +
          tlv("54", "25000") +
          "5802KH" +
          tlv("59", "Sokha Shop") +
          tlv("60", "Siem Reap") +
          tlv(
            "62",
            tlv("01", "#0001") +
              tlv("02", "85587575857") +
              tlv("03", "Old Market") +
              tlv("07", "POS-2") +
              tlv("08", "lunch"),
          ) +
          tlv("64", tlv("00", "km") + tlv("01", "ហាងសុខា") + tlv("02", "សៀមរាប")) +
          tlv("99", tlv("00", String(T0)) + tlv("01", String(T0 + HOUR))),
      ),
    );
  });

  it("formats the amount by currency: USD fraction padded to 2, KHR without decimals", () => {
    expect(encodeKhqr({ ...merchantDynamic(), amount: "1.5" }).qr).toContain("54041.50");
    expect(encodeKhqr({ ...merchantDynamic(), amount: "10" }).qr).toContain("540210");
    expect(encodeKhqr({ ...merchantDynamic(), currency: 116, amount: "10000.00" }).qr).toContain("530311654051000058");
  });

  it("writes only the additional data fields given, in sub-tag order", () => {
    const { qr } = encodeKhqr({ ...individualStatic, terminalLabel: "T1", billNumber: "B1" });
    expect(qr).toContain(tlv("62", tlv("01", "B1") + tlv("07", "T1")));
  });

  it("writes the alternate language without a city when none is given", () => {
    const { qr } = encodeKhqr({
      ...individualStatic,
      alternateLanguage: { languagePreference: "km", merchantName: "ចន" },
    });
    expect(qr).toContain(tlv("64", tlv("00", "km") + tlv("01", "ចន")) + "6304");
  });

  it("treats empty optional strings as absent, as the SDK does", () => {
    const a = encodeKhqr({
      ...individualStatic,
      billNumber: "",
      accountInformation: "",
      merchantCategoryCode: "",
      amount: "",
    });
    expect(a.qr).toBe(encodeKhqr(individualStatic).qr);
  });

  it("writes timestamps given for a static QR (the SDK ignores them; we do not drop input silently)", () => {
    const { qr } = encodeKhqr({ ...individualStatic, expirationTimestamp: T0 + HOUR });
    expect(qr).toContain("010211");
    expect(qr).toContain(tlv("99", tlv("01", String(T0 + HOUR))) + "6304");
  });

  it("ignores merchantId for an individual and accountInformation for a merchant", () => {
    expect(encodeKhqr({ ...individualStatic, merchantId: "M1" }).qr).toBe(encodeKhqr(individualStatic).qr);
    expect(encodeKhqr({ ...merchantDynamic(), accountInformation: "X" }).qr).toBe(encodeKhqr(merchantDynamic()).qr);
  });

  it.each<[string, Partial<KhqrInput> & Record<string, unknown>, number]>([
    ["account type missing", { accountType: undefined }, 5],
    ["account id missing", { bakongAccountId: "" }, 1],
    ["account id without @", { bakongAccountId: "devit" }, 3],
    ["account id with two @", { bakongAccountId: "a@b@c" }, 3],
    ["account id with nothing before @", { bakongAccountId: "@abaa" }, 3],
    ["account id of 33", { bakongAccountId: "a".repeat(28) + "@abaa" }, 6],
    ["merchant name missing", { merchantName: "" }, 2],
    ["merchant name of 26", { merchantName: "n".repeat(26) }, 7],
    ["merchant city missing", { merchantCity: undefined }, 27],
    ["merchant city of 16", { merchantCity: "c".repeat(16) }, 21],
    ["merchant id missing", { merchantId: undefined }, 30],
    ["merchant id of 33", { merchantId: "1".repeat(33) }, 32],
    ["acquiring bank missing", { acquiringBank: "" }, 31],
    ["acquiring bank of 33", { acquiringBank: "B".repeat(33) }, 33],
    ["MCC of 5 digits", { merchantCategoryCode: "59999" }, 18],
    ["MCC of 3 digits", { merchantCategoryCode: "599" }, 51],
    ["MCC with letters", { merchantCategoryCode: "59A9" }, 51],
    ["currency missing", { currency: undefined }, 9],
    ["currency THB", { currency: 764 as never }, 28],
    ["amount with 3 decimals", { amount: "1.555" }, 4],
    ["amount with letters", { amount: "1.5a" }, 4],
    ["amount zero", { amount: "0" }, 4],
    ["amount negative", { amount: "-1" }, 4],
    ["amount as a number", { amount: 1.5 as never }, 4],
    ["bill number of 26", { billNumber: "b".repeat(26) }, 10],
    ["mobile number of 26", { mobileNumber: "8".repeat(26) }, 34],
    ["store label of 26", { storeLabel: "s".repeat(26) }, 11],
    ["terminal label of 26", { terminalLabel: "t".repeat(26) }, 12],
    ["purpose of 26", { purposeOfTransaction: "p".repeat(26) }, 42],
    ["language preference missing", { alternateLanguage: { languagePreference: "", merchantName: "x" } }, 37],
    ["language preference of 3", { alternateLanguage: { languagePreference: "khm", merchantName: "x" } }, 38],
    ["alternate name missing", { alternateLanguage: { languagePreference: "km", merchantName: "" } }, 39],
    ["alternate name of 26", { alternateLanguage: { languagePreference: "km", merchantName: "ក".repeat(26) } }, 40],
    [
      "alternate city of 16",
      { alternateLanguage: { languagePreference: "km", merchantName: "x", merchantCity: "ក".repeat(16) } },
      41,
    ],
    ["expiration missing with an amount", { expirationTimestamp: undefined }, 45],
    ["creation missing with an amount", { creationTimestamp: undefined }, 45],
    ["expiration in seconds", { expirationTimestamp: Math.floor(T0 / 1000) }, 49],
    ["expiration not an integer", { expirationTimestamp: T0 + 0.5 }, 49],
    ["expiration before creation", { expirationTimestamp: T0 - 1 }, 50],
  ])("rejects %s with the SDK's error code", (_name, patch, code) => {
    expect(codeOf({ ...merchantDynamic(), ...patch })).toBe(code);
  });

  it("rejects an account template over 99 characters although each part fits", () => {
    const input = {
      ...merchantDynamic(),
      bakongAccountId: "a".repeat(27) + "@abaa",
      merchantId: "1".repeat(32),
      acquiringBank: "B".repeat(32),
    };
    expect(codeOf(input)).toBe(8);
    expect(validateKhqrInput(input).map((e) => e.field)).toEqual(["merchantAccountInformation"]);
  });

  it("rejects additional data over 99 characters although each part fits", () => {
    const x = "x".repeat(25);
    const input = { ...individualStatic, billNumber: x, mobileNumber: x, storeLabel: x, terminalLabel: x };
    expect(validateKhqrInput(input).map((e) => e.field)).toEqual(["additionalData"]);
    expect(validateKhqrInput({ ...individualStatic, billNumber: x, mobileNumber: x, storeLabel: x })).toEqual([]);
  });

  it("accepts an expiration equal to the creation time, as the SDK's rule is 'not before'", () => {
    expect(codeOf({ ...merchantDynamic(), expirationTimestamp: T0 })).toBeNull();
  });

  it("throws errors that carry the field and the SDK's message", () => {
    try {
      encodeKhqr({ ...merchantDynamic(), merchantName: "" });
      throw new Error("no throw");
    } catch (e) {
      expect(e).toMatchObject({
        name: "KhqrError",
        errorCode: 2,
        field: "merchantName",
        message: "Merchant name cannot be null or empty",
      });
    }
  });
});

describe("validateKhqrInput", () => {
  it("returns nothing for valid inputs", () => {
    expect(validateKhqrInput(individualStatic)).toEqual([]);
    expect(validateKhqrInput(merchantDynamic())).toEqual([]);
    expect(validateKhqrInput(individualFull())).toEqual([]);
  });

  it("lists every broken rule with its field, message and SDK code", () => {
    const errors = validateKhqrInput({
      accountType: "merchant",
      bakongAccountId: "nobank",
      merchantName: "n".repeat(30),
      currency: 840,
      amount: "1.999",
    });
    expect(errors).toEqual([
      { field: "bakongAccountId", errorCode: 3, message: "Bakong Account ID is invalid" },
      { field: "merchantId", errorCode: 30, message: "Merchant ID cannot be null or empty" },
      { field: "acquiringBank", errorCode: 31, message: "Acquiring Bank cannot be null or empty" },
      { field: "merchantName", errorCode: 7, message: "Merchant Name Length is invalid" },
      { field: "merchantCity", errorCode: 27, message: "Merchant City cannot be null or empty" },
      { field: "amount", errorCode: 4, message: "Amount is invalid" },
      { field: "creationTimestamp", errorCode: 45, message: "Creation timestamp is required for dynamic KHQR" },
      { field: "expirationTimestamp", errorCode: 45, message: "Expiration timestamp is required for dynamic KHQR" },
    ]);
  });

  it("never throws on junk, reporting type errors per field", () => {
    expect(validateKhqrInput(null as never).length).toBeGreaterThan(0);
    expect(validateKhqrInput("x" as never).length).toBeGreaterThan(0);
    const errors = validateKhqrInput({
      ...individualStatic,
      merchantName: 42,
      billNumber: {},
      alternateLanguage: "km",
    } as never);
    expect(errors.map((e) => [e.field, e.errorCode])).toEqual([
      ["merchantName", 2],
      ["billNumber", 10],
      ["alternateLanguage", 37],
    ]);
  });
});
