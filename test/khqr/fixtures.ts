// Shared builders for the KHQR tests: valid inputs, raw TLV strings with a correct CRC, and the
// QR strings of other EMV schemes.
import sdk from "bakong-khqr";
import { crc16, crcToHex, type KhqrInput } from "../../src/khqr/index.js";

export const HOUR = 3_600_000;
export const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z, a fixed creation time

/** One data object (test-side writer, independent of src/khqr/tlv.ts). */
export function tlv(id: string, value: string): string {
  return id + String(value.length).padStart(2, "0") + value;
}

/** Appends "6304" and the correct CRC to a body of data objects. */
export function withCrc(body: string): string {
  const s = body + "6304";
  return s + crcToHex(crc16(s));
}

/** Same body with the CRC recomputed (after an edit). */
export function recrc(qr: string): string {
  return withCrc(qr.slice(0, qr.lastIndexOf("6304")));
}

/**
 * A production ABA multi-scheme static QR (card schemes in tags 02/04, ABA's own template in tag
 * 99), from the national SDK's decode tests (bakong-khqr 1.0.20, test/decode.test.js, "Decode Test 5").
 */
export const ABA_STATIC_MULTI_SCHEME =
  "000201010211021641277800000000980416518352888000006030470016abaakhppxxx@abaa01153166007701102420204abaa5204224253038405802KH" +
  "5910USD OUTLET6010PHNOM PENH62250509115B02750070827CE19809924001339CA026411FDA6803mmp63043870";

export const individualStatic: KhqrInput = {
  accountType: "individual",
  bakongAccountId: "john_smith@devb",
  merchantName: "John Smith",
  merchantCity: "Phnom Penh",
  currency: 116,
};

export function merchantDynamic(created = T0, expires = created + HOUR): KhqrInput {
  return {
    accountType: "merchant",
    bakongAccountId: "devit@abaa",
    merchantName: "devit",
    merchantCity: "Battambang",
    merchantId: "1243546472",
    acquiringBank: "DEVBKKHPXXX",
    currency: 840,
    amount: "1.50",
    creationTimestamp: created,
    expirationTimestamp: expires,
  };
}

export function individualFull(created = T0, expires = created + HOUR): KhqrInput {
  return {
    accountType: "individual",
    bakongAccountId: "sokha@wing",
    merchantName: "Sokha Shop",
    merchantCity: "Siem Reap",
    accountInformation: "85512345678",
    acquiringBank: "Wing Bank",
    merchantCategoryCode: "5812",
    currency: 116,
    amount: "25000",
    billNumber: "#0001",
    mobileNumber: "85587575857",
    storeLabel: "Old Market",
    terminalLabel: "POS-2",
    purposeOfTransaction: "lunch",
    alternateLanguage: { languagePreference: "km", merchantName: "ហាងសុខា", merchantCity: "សៀមរាប" },
    creationTimestamp: created,
    expirationTimestamp: expires,
  };
}

/** Reference SDK's generator for the same input (it stamps its own creation time). */
export function sdkGenerate(x: KhqrInput): { qr: string; md5: string } | null {
  const optional = {
    currency: x.currency,
    amount: x.amount,
    accountInformation: x.accountInformation,
    acquiringBank: x.acquiringBank,
    billNumber: x.billNumber,
    mobileNumber: x.mobileNumber,
    storeLabel: x.storeLabel,
    terminalLabel: x.terminalLabel,
    purposeOfTransaction: x.purposeOfTransaction,
    merchantCategoryCode: x.merchantCategoryCode,
    languagePreference: x.alternateLanguage?.languagePreference,
    merchantNameAlternateLanguage: x.alternateLanguage?.merchantName,
    merchantCityAlternateLanguage: x.alternateLanguage?.merchantCity,
    expirationTimestamp: x.expirationTimestamp,
  };
  const generator = new sdk.BakongKHQR();
  const result =
    x.accountType === "merchant"
      ? generator.generateMerchant(
          new sdk.MerchantInfo(
            x.bakongAccountId,
            x.merchantName,
            x.merchantCity,
            x.merchantId ?? "",
            x.acquiringBank ?? "",
            optional,
          ),
        )
      : generator.generateIndividual(
          new sdk.IndividualInfo(x.bakongAccountId, x.merchantName, x.merchantCity, optional),
        );
  return result.data;
}

/** Well-formed EMV QRs of other national schemes (correct CRC): valid EMV, not KHQR. */
export const otherSchemes: Record<string, string> = {
  promptPayTH: withCrc(
    "000201010211" + tlv("29", tlv("00", "A000000677010111") + tlv("01", "0066812345678")) + "5303764" + "5802TH",
  ),
  promptPayTHAmount: withCrc(
    "000201010212" +
      tlv("29", tlv("00", "A000000677010111") + tlv("01", "0066812345678")) +
      "5303764" +
      tlv("54", "100.00") +
      "5802TH",
  ),
  payNowSG: withCrc(
    "000201010212" +
      tlv(
        "26",
        tlv("00", "SG.PAYNOW") + tlv("01", "2") + tlv("02", "201234567W") + tlv("03", "1") + tlv("04", "20301231"),
      ) +
      "52040000" +
      "5303702" +
      tlv("54", "12.50") +
      "5802SG" +
      tlv("59", "ACME PTE LTD") +
      tlv("60", "Singapore"),
  ),
  pixBR: withCrc(
    "000201" +
      tlv("26", tlv("00", "br.gov.bcb.pix") + tlv("01", "someone@example.com")) +
      "52040000" +
      "5303986" +
      tlv("54", "10.00") +
      "5802BR" +
      tlv("59", "Fulano de Tal") +
      tlv("60", "BRASILIA") +
      tlv("62", tlv("05", "***")),
  ),
  vietQR: withCrc(
    "000201010212" +
      tlv(
        "38",
        tlv("00", "A000000727") + tlv("01", tlv("00", "970436") + tlv("01", "0011012345678")) + tlv("02", "QRIBFTTA"),
      ) +
      "5303704" +
      tlv("54", "50000") +
      "5802VN" +
      tlv("62", tlv("08", "thanh toan")),
  ),
  duitNowMY: withCrc(
    "000201010211" +
      tlv("26", tlv("00", "A0000006150001") + tlv("01", "890053") + tlv("02", "000000000012345")) +
      "52045999" +
      "5303458" +
      "5802MY" +
      tlv("59", "KEDAI RUNCIT") +
      tlv("60", "KUALA LUMPUR"),
  ),
};
