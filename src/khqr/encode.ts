import { hash } from "node:crypto";
import { formatKhqrAmount } from "./amount.js";
import { crc16, crcToHex } from "./crc.js";
import { KhqrError } from "./errors.js";
import { writeTlv } from "./tlv.js";
import type { KhqrInput } from "./types.js";
import { validateKhqrInput } from "./validate-input.js";

/** The value, or undefined when absent or "" (the SDK drops empty optional values too). */
function opt(v: string | undefined): string | undefined {
  return v === undefined || v === null || v === "" ? undefined : v;
}

/** Sub-object when the value is present, else "". */
function sub(id: string, v: string | undefined): string {
  return v === undefined ? "" : writeTlv(id, v);
}

/**
 * Builds the KHQR string and its md5 (lowercase hex of the UTF-8 bytes, the key Bakong and
 * /qr/check look transactions up by). Tags are written in the reference SDK's order, so for the
 * same input (and creation time) the string is byte-identical to the SDK's. Throws KhqrError with
 * the SDK's code for the first rule of validateKhqrInput that the input breaks.
 */
export function encodeKhqr(input: KhqrInput): { qr: string; md5: string } {
  const errors = validateKhqrInput(input);
  if (errors.length > 0) throw new KhqrError(errors[0].errorCode, errors[0].message, errors[0].field);
  const qr = build(input);
  return { qr, md5: hash("md5", qr, "hex") };
}

function build(x: KhqrInput): string {
  const amountText = opt(x.amount);
  const amount = amountText === undefined ? null : formatKhqrAmount(amountText, x.currency);
  let s = amount === null ? "000201010211" : "000201010212";
  s +=
    x.accountType === "merchant"
      ? writeTlv(
          "30",
          writeTlv("00", x.bakongAccountId) + sub("01", opt(x.merchantId)) + sub("02", opt(x.acquiringBank)),
        )
      : writeTlv(
          "29",
          writeTlv("00", x.bakongAccountId) + sub("01", opt(x.accountInformation)) + sub("02", opt(x.acquiringBank)),
        );
  s += "5204" + (opt(x.merchantCategoryCode) ?? "5999");
  s += x.currency === 116 ? "5303116" : "5303840";
  if (amount !== null) s += writeTlv("54", amount);
  s += "5802KH" + writeTlv("59", x.merchantName) + writeTlv("60", x.merchantCity);
  const additional =
    sub("01", opt(x.billNumber)) +
    sub("02", opt(x.mobileNumber)) +
    sub("03", opt(x.storeLabel)) +
    sub("07", opt(x.terminalLabel)) +
    sub("08", opt(x.purposeOfTransaction));
  if (additional !== "") s += writeTlv("62", additional);
  const lang = x.alternateLanguage;
  if (lang !== undefined && lang !== null) {
    s += writeTlv(
      "64",
      writeTlv("00", lang.languagePreference) + writeTlv("01", lang.merchantName) + sub("02", opt(lang.merchantCity)),
    );
  }
  const created = x.creationTimestamp;
  const expires = x.expirationTimestamp;
  const timestamps =
    (created == null ? "" : writeTlv("00", String(created))) + (expires == null ? "" : writeTlv("01", String(expires)));
  if (timestamps !== "") s += writeTlv("99", timestamps);
  s += "6304";
  return s + crcToHex(crc16(s));
}
