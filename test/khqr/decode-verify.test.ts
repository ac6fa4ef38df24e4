import { describe, expect, it } from "@jest/globals";
import { decodeKhqr, encodeKhqr, verifyKhqr } from "../../src/khqr/index.js";
import {
  ABA_STATIC_MULTI_SCHEME,
  HOUR,
  individualFull,
  individualStatic,
  merchantDynamic,
  otherSchemes,
  recrc,
  T0,
  tlv,
  withCrc,
} from "./fixtures.js";

const OK = { code: 0, errorCode: null, message: null };

/** A static individual QR body (no CRC) with one value replaced: handy for single-rule tests. */
function body(
  parts: Partial<
    Record<"pfi" | "poi" | "account" | "mcc" | "cur" | "amount" | "country" | "name" | "city" | "extra", string>
  > = {},
): string {
  return (
    (parts.pfi ?? "000201") +
    (parts.poi ?? "010211") +
    (parts.account ?? tlv("29", tlv("00", "a@b"))) +
    (parts.mcc ?? "52045999") +
    (parts.cur ?? "5303116") +
    (parts.amount ?? "") +
    (parts.country ?? "5802KH") +
    (parts.name ?? "5901n") +
    (parts.city ?? "6001c") +
    (parts.extra ?? "")
  );
}

function errorCodeOf(qr: string): number | null {
  return decodeKhqr(qr).status.errorCode;
}

describe("decodeKhqr on valid QRs", () => {
  it("answers code 0 and the contract fields for a dynamic merchant QR", () => {
    const { qr } = encodeKhqr(merchantDynamic());
    expect(decodeKhqr(qr)).toEqual({
      status: OK,
      data: {
        merchantType: "30",
        bankAccountID: "devit@abaa",
        merchantID: "1243546472",
        acquiringBank: "DEVBKKHPXXX",
        merchantCategoryCode: "5999",
        transactionCurrency: "840",
        transactionAmount: "1.50",
        countryCode: "KH",
        merchantName: "devit",
        merchantCity: "Battambang",
        crc: qr.slice(-4),
        pointOfInitiationMethod: "12",
        creationTimestamp: String(T0),
        expirationTimestamp: String(T0 + HOUR),
      },
    });
  });

  it("shows absent contract fields as null and omits absent optional fields", () => {
    const { data } = decodeKhqr(encodeKhqr(individualStatic).qr);
    expect(data.merchantID).toBeNull();
    expect(data.acquiringBank).toBeNull();
    expect(data.transactionAmount).toBeNull();
    expect(Object.keys(data)).toEqual([
      "merchantType",
      "bankAccountID",
      "merchantID",
      "acquiringBank",
      "merchantCategoryCode",
      "transactionCurrency",
      "transactionAmount",
      "countryCode",
      "merchantName",
      "merchantCity",
      "crc",
      "pointOfInitiationMethod",
    ]);
  });

  it("reads account information, additional data, alternate language and timestamps", () => {
    const { status, data } = decodeKhqr(encodeKhqr(individualFull()).qr);
    expect(status).toEqual(OK);
    expect(data).toMatchObject({
      merchantType: "29",
      accountInformation: "85512345678",
      acquiringBank: "Wing Bank",
      merchantCategoryCode: "5812",
      transactionCurrency: "116",
      transactionAmount: "25000",
      billNumber: "#0001",
      mobileNumber: "85587575857",
      storeLabel: "Old Market",
      terminalLabel: "POS-2",
      purposeOfTransaction: "lunch",
      languagePreference: "km",
      merchantNameAlternateLanguage: "ហាងសុខា",
      merchantCityAlternateLanguage: "សៀមរាប",
    });
  });

  it("accepts a lowercase CRC, tags in any order between 00 and 63, and unknown tags", () => {
    const qr = encodeKhqr(individualStatic).qr;
    expect(decodeKhqr(qr.slice(0, -4) + qr.slice(-4).toLowerCase()).status).toEqual(OK);
    expect(
      errorCodeOf(
        withCrc("000201" + "5303116" + "010211" + "5802KH" + tlv("29", tlv("00", "a@b")) + "52045999" + "6001c5901n"),
      ),
    ).toBeNull();
    expect(
      errorCodeOf(
        withCrc(body({ extra: tlv("26", tlv("00", "other.scheme")) + "6105" + "12000" + tlv("62", tlv("05", "ref")) })),
      ),
    ).toBeNull();
  });

  it("accepts KHR amounts with up to 2 decimals from other issuers (ISO 4217 exponent 2)", () => {
    const dyn = (amount: string) =>
      withCrc(body({ poi: "010212", amount: tlv("54", amount), extra: tlv("99", tlv("01", String(T0 + HOUR))) }));
    expect(errorCodeOf(dyn("1000.50"))).toBeNull();
    expect(errorCodeOf(dyn("1000.505"))).toBe(4);
  });
});

describe("merchant QRs (tag 30) on read", () => {
  it("accepts a merchant account with only its account id, as the SDK's verify does; merchant id and bank read as null", () => {
    for (const account of [
      tlv("00", "a@b"),
      tlv("00", "a@b") + tlv("01", "M1"),
      tlv("00", "a@b") + tlv("02", "BANK"),
    ]) {
      const qr = withCrc(body({ account: tlv("30", account) }));
      expect(verifyKhqr(qr, T0)).toBe(true);
      expect(decodeKhqr(qr).status).toEqual(OK);
    }
    const { data } = decodeKhqr(withCrc(body({ account: tlv("30", tlv("00", "a@b")) })));
    expect(data).toMatchObject({ merchantType: "30", bankAccountID: "a@b", merchantID: null, acquiringBank: null });
  });
});

describe("tag 99 that is not KHQR timestamps", () => {
  it("accepts the production ABA static QR and reports its tag 99 raw, not as a creation time", () => {
    expect(verifyKhqr(ABA_STATIC_MULTI_SCHEME, T0)).toBe(true);
    expect(decodeKhqr(ABA_STATIC_MULTI_SCHEME)).toEqual({
      status: OK,
      data: {
        merchantType: "30",
        bankAccountID: "abaakhppxxx@abaa",
        merchantID: "316600770110242",
        acquiringBank: "abaa",
        merchantCategoryCode: "2242",
        transactionCurrency: "840",
        transactionAmount: null,
        countryCode: "KH",
        merchantName: "USD OUTLET",
        merchantCity: "PHNOM PENH",
        crc: "3870",
        pointOfInitiationMethod: "11",
        terminalLabel: "27CE1980",
        tag99: "001339CA026411FDA6803mmp",
      },
    });
  });

  it("on a static QR, takes a tag 99 with sub-ids other than 00/01 as another party's data: no timestamps, no expiry", () => {
    const vendor = tlv("99", tlv("00", String(T0 - HOUR)) + tlv("01", String(T0 - 1)) + tlv("68", "x"));
    const qr = withCrc(body({ extra: vendor }));
    expect(verifyKhqr(qr, T0)).toBe(true);
    const { data } = decodeKhqr(qr);
    expect(data.tag99).toBe(vendor.slice(4));
    expect(data.creationTimestamp).toBeUndefined();
    expect(data.expirationTimestamp).toBeUndefined();
  });

  it("still reads a tag 99 of only 00/01 as KHQR timestamps on a static QR, and refuses malformed ones", () => {
    const qr = withCrc(body({ extra: tlv("99", tlv("00", String(T0)) + tlv("01", String(T0 + HOUR))) }));
    expect(decodeKhqr(qr).data).toMatchObject({
      creationTimestamp: String(T0),
      expirationTimestamp: String(T0 + HOUR),
    });
    expect(decodeKhqr(qr).data.tag99).toBeUndefined();
    expect(errorCodeOf(withCrc(body({ extra: tlv("99", tlv("00", "39CA026411FDA")) })))).toBe(8);
  });

  it("on a dynamic QR, reads tag 99 as timestamps whatever else it holds (the expiry must be there)", () => {
    const dyn = (t99: string) => withCrc(body({ poi: "010212", amount: tlv("54", "100"), extra: tlv("99", t99) }));
    const withExtra = dyn(tlv("00", String(T0)) + tlv("01", String(T0 + HOUR)) + tlv("68", "x"));
    expect(decodeKhqr(withExtra).status).toEqual(OK);
    expect(decodeKhqr(withExtra).data).toMatchObject({
      creationTimestamp: String(T0),
      expirationTimestamp: String(T0 + HOUR),
    });
    expect(decodeKhqr(withExtra).data.tag99).toBeUndefined();
    expect(verifyKhqr(withExtra, T0 + 2 * HOUR)).toBe(false);
    expect(errorCodeOf(dyn("001339CA026411FDA6803mmp"))).toBe(45);
  });
});

describe("decodeKhqr on broken input", () => {
  it("answers code 1, KHQR_INVALID and empty data for garbage (unlike the SDK's code 0)", () => {
    for (const junk of ["hello", "", "0002", "x".repeat(10_000), "\ud800\udc00\ud800"]) {
      const r = decodeKhqr(junk);
      expect(r.status).toEqual({ code: 1, errorCode: 8, message: "KHQR provided is invalid" });
      expect(r.data.merchantName).toBeNull();
    }
  });

  it("never throws on non-strings", () => {
    for (const junk of [undefined, null, 42, {}, [], Symbol("x")]) {
      expect(decodeKhqr(junk as never).status.errorCode).toBe(8);
      expect(verifyKhqr(junk as never, T0)).toBe(false);
    }
  });

  it("reports a wrong CRC as KHQR_INVALID but keeps everything it read", () => {
    const qr = encodeKhqr(merchantDynamic()).qr;
    const bad = qr.slice(0, -1) + (qr.endsWith("0") ? "1" : "0");
    const r = decodeKhqr(bad);
    expect(r.status.errorCode).toBe(8);
    expect(r.data.merchantName).toBe("devit");
    expect(r.data.crc).toBe(bad.slice(-4));
  });

  it("keeps the fields read before the text stops being readable", () => {
    const qr = encodeKhqr(merchantDynamic()).qr;
    const cut = qr.slice(0, qr.indexOf("5905devit") + 6);
    const r = decodeKhqr(cut);
    expect(r.status.errorCode).toBe(8);
    expect(r.data).toMatchObject({
      merchantType: "30",
      bankAccountID: "devit@abaa",
      transactionAmount: "1.50",
      countryCode: "KH",
      merchantName: null,
      crc: null,
    });
  });

  it.each<[string, number, string]>([
    ["no CRC tag", 24, body()],
    ["CRC of 5 characters", 22, body() + "6305ABCDE"],
    ["payload format missing", 23, withCrc(body().slice(6))],
    ["payload format not first", 36, withCrc("010211000201" + body().slice(12))],
    ["a tag after the CRC", 36, withCrc(body()) + "610512000"],
    ["a tag twice", 8, withCrc(body({ extra: "5901m" }))],
    [
      "both tag 29 and tag 30",
      8,
      withCrc(body({ extra: tlv("30", tlv("00", "x@y") + tlv("01", "1") + tlv("02", "B")) })),
    ],
    ["a malformed template", 8, withCrc(body({ extra: tlv("62", "0105abc") }))],
    ["a malformed foreign template", 8, withCrc(body({ extra: tlv("27", "zz") }))],
    ["payload format 02", 8, withCrc(body({ pfi: "000202" }))],
    ["payload format of 3", 16, withCrc(body({ pfi: "0003001" }))],
    ["PoI missing", 48, withCrc(body({ poi: "" }))],
    ["PoI 13", 48, withCrc(body({ poi: "010213" }))],
    ["PoI of 3", 17, withCrc(body({ poi: "0103011" }))],
    ["no account template", 5, withCrc(body({ account: "" }))],
    ["account id missing", 1, withCrc(body({ account: tlv("29", tlv("01", "123")) }))],
    ["account id of 33", 6, withCrc(body({ account: tlv("29", tlv("00", "a".repeat(31) + "@b")) }))],
    ["account id without @", 3, withCrc(body({ account: tlv("29", tlv("00", "A000000677010111")) }))],
    [
      "account information of 33",
      35,
      withCrc(body({ account: tlv("29", tlv("00", "a@b") + tlv("01", "1".repeat(33))) })),
    ],
    [
      "merchant with an empty merchant id",
      30,
      withCrc(body({ account: tlv("30", tlv("00", "a@b") + "0100" + tlv("02", "BANK")) })),
    ],
    [
      "merchant with an empty acquiring bank",
      31,
      withCrc(body({ account: tlv("30", tlv("00", "a@b") + tlv("01", "1") + "0200") })),
    ],
    ["merchant id of 33", 32, withCrc(body({ account: tlv("30", tlv("00", "a@b") + tlv("01", "1".repeat(33))) }))],
    [
      "acquiring bank of 33",
      33,
      withCrc(body({ account: tlv("30", tlv("00", "a@b") + tlv("01", "1") + tlv("02", "B".repeat(33))) })),
    ],
    ["MCC missing", 25, withCrc(body({ mcc: "" }))],
    ["MCC of 5", 18, withCrc(body({ mcc: "520559999" }))],
    ["MCC of 3", 51, withCrc(body({ mcc: "5203599" }))],
    ["currency missing", 9, withCrc(body({ cur: "" }))],
    ["currency of 4", 19, withCrc(body({ cur: "53040840" }))],
    ["currency THB", 28, withCrc(body({ cur: "5303764" }))],
    ["amount with letters", 4, withCrc(body({ amount: "54041.5a", extra: tlv("99", tlv("01", String(T0))) }))],
    [
      "amount with 3 decimals",
      4,
      withCrc(body({ cur: "5303840", amount: tlv("54", "10.555"), extra: tlv("99", tlv("01", String(T0))) })),
    ],
    ["amount zero", 4, withCrc(body({ amount: "54010", extra: tlv("99", tlv("01", String(T0))) }))],
    ["dynamic without amount", 47, withCrc(body({ poi: "010212", extra: tlv("99", tlv("01", String(T0))) }))],
    ["amount without expiration", 45, withCrc(body({ poi: "010212", amount: "5403100" }))],
    ["country missing", 26, withCrc(body({ country: "" }))],
    ["country of 4", 20, withCrc(body({ country: "5804KHMR" }))],
    ["country TH", 8, withCrc(body({ country: "5802TH" }))],
    ["name missing", 2, withCrc(body({ name: "" }))],
    ["name of 26", 7, withCrc(body({ name: tlv("59", "n".repeat(26)) }))],
    ["city missing", 27, withCrc(body({ city: "" }))],
    ["city of 16", 21, withCrc(body({ city: tlv("60", "c".repeat(16)) }))],
    ["bill number of 26", 10, withCrc(body({ extra: tlv("62", tlv("01", "b".repeat(26))) }))],
    ["empty store label", 11, withCrc(body({ extra: tlv("62", "0300") }))],
    ["mobile number of 26", 34, withCrc(body({ extra: tlv("62", tlv("02", "8".repeat(26))) }))],
    ["terminal label of 26", 12, withCrc(body({ extra: tlv("62", tlv("07", "t".repeat(26))) }))],
    ["purpose of 26", 42, withCrc(body({ extra: tlv("62", tlv("08", "p".repeat(26))) }))],
    ["language template without preference", 37, withCrc(body({ extra: tlv("64", tlv("01", "x")) }))],
    ["language preference of 3", 38, withCrc(body({ extra: tlv("64", tlv("00", "khm") + tlv("01", "x")) }))],
    ["language template without name", 39, withCrc(body({ extra: tlv("64", tlv("00", "km")) }))],
    ["alternate name of 26", 40, withCrc(body({ extra: tlv("64", tlv("00", "km") + tlv("01", "x".repeat(26))) }))],
    [
      "alternate city of 16",
      41,
      withCrc(body({ extra: tlv("64", tlv("00", "km") + tlv("01", "x") + tlv("02", "y".repeat(16))) })),
    ],
    ["expiration in seconds", 49, withCrc(body({ extra: tlv("99", tlv("01", "1767225600")) }))],
    [
      "creation not 13 digits",
      8,
      withCrc(body({ extra: tlv("99", tlv("00", "17672256000x0") + tlv("01", String(T0))) })),
    ],
    [
      "expiration before creation",
      50,
      withCrc(body({ extra: tlv("99", tlv("00", String(T0 + 1)) + tlv("01", String(T0))) })),
    ],
  ])("%s → error %i", (_name, code, qr) => {
    const r = decodeKhqr(qr);
    expect(r.status.code).toBe(1);
    expect(r.status.errorCode).toBe(code);
    expect(typeof r.status.message).toBe("string");
    expect(verifyKhqr(qr, T0 - HOUR)).toBe(false);
  });
});

describe("verifyKhqr", () => {
  it("accepts what encode writes, static or dynamic", () => {
    expect(verifyKhqr(encodeKhqr(individualStatic).qr, T0)).toBe(true);
    expect(verifyKhqr(encodeKhqr(merchantDynamic()).qr, T0)).toBe(true);
    expect(verifyKhqr(encodeKhqr(individualFull()).qr, T0 + HOUR - 1)).toBe(true);
  });

  it("accepts a dynamic QR up to and including the millisecond of its expiration, as the SDK does, and rejects it after", () => {
    const qr = encodeKhqr(merchantDynamic(T0, T0 + 180_000)).qr;
    expect(verifyKhqr(qr, T0 + 179_999)).toBe(true);
    expect(verifyKhqr(qr, T0 + 180_000)).toBe(true);
    expect(verifyKhqr(qr, T0 + 180_001)).toBe(false);
    expect(verifyKhqr(qr, T0 + 10 * HOUR)).toBe(false);
    expect(decodeKhqr(qr).status).toEqual(OK); // decode has no clock: expiry is verify's business
  });

  it("rejects a static QR carrying an expiration that has passed", () => {
    const qr = encodeKhqr({ ...individualStatic, expirationTimestamp: T0 }).qr;
    expect(verifyKhqr(qr, T0)).toBe(true);
    expect(verifyKhqr(qr, T0 + 1)).toBe(false);
  });

  it("rejects a NaN clock for QRs that expire, not for those that do not", () => {
    expect(verifyKhqr(encodeKhqr(merchantDynamic()).qr, Number.NaN)).toBe(false);
    expect(verifyKhqr(encodeKhqr(individualStatic).qr, Number.NaN)).toBe(true);
  });

  it("rejects well-formed EMV QRs of other schemes", () => {
    for (const [name, qr] of Object.entries(otherSchemes)) {
      expect([name, verifyKhqr(qr, T0)]).toEqual([name, false]);
      expect([name, decodeKhqr(qr).status.code]).toEqual([name, 1]);
    }
  });

  it("rejects a KHQR-shaped QR of another country or currency", () => {
    const qr = encodeKhqr(individualStatic).qr;
    expect(verifyKhqr(recrc(qr.replace("5802KH", "5802TH")), T0)).toBe(false);
    expect(verifyKhqr(recrc(qr.replace("5303116", "5303764")), T0)).toBe(false);
    expect(verifyKhqr(recrc(qr), T0)).toBe(true);
  });

  it("rejects every single-character CRC change and every truncation", () => {
    const qr = encodeKhqr(individualFull()).qr;
    for (let i = qr.length - 4; i < qr.length; i++) {
      for (const c of "0123456789ABCDEF") {
        if (c !== qr[i]) expect(verifyKhqr(qr.slice(0, i) + c + qr.slice(i + 1), T0)).toBe(false);
      }
    }
    for (let n = 0; n < qr.length; n++) expect(verifyKhqr(qr.slice(0, n), T0)).toBe(false);
  });
});
