// The cross-check corpus: valid QRs from both encoders and systematic corruptions of them.
// Entries where our codec follows the standard and the reference SDK does not carry a
// `disagree` key (see KNOWN_DISAGREEMENTS, docs/decisions/0055-khqr-codec.md,
// docs/decisions/0061-khqr-cross-implementation-corpus.md and docs/khqr.md).
import { encodeKhqr, type KhqrInput } from "../../src/khqr/index.js";
import {
  HOUR,
  individualFull,
  individualStatic,
  merchantDynamic,
  otherSchemes,
  recrc,
  sdkGenerate,
  tlv,
  withCrc,
} from "./fixtures.js";

/** Cases where we and the SDK's verify answer differently on purpose: ours / the SDK's answer. */
export const KNOWN_DISAGREEMENTS = {
  amountNotNumeric: { ours: false, sdk: true, why: "SDK verify accepts letters in the amount" },
  amountPrecision: { ours: false, sdk: true, why: "SDK verify accepts any number of decimals" },
  amountZero: { ours: false, sdk: true, why: "SDK verify accepts a zero amount" },
  poiMissing: { ours: false, sdk: true, why: "SDK does not require tag 01" },
  payloadFormatValue: { ours: false, sdk: true, why: "SDK accepts any 1–2 character payload format indicator" },
  payloadFormatNotFirst: { ours: false, sdk: true, why: "SDK does not check that tag 00 comes first" },
  countryNotKH: { ours: false, sdk: true, why: "SDK accepts any country code of up to 3 characters" },
  mccNot4Digits: { ours: false, sdk: true, why: "SDK accepts 1–4 digit category codes" },
  accountIdForm: { ours: false, sdk: true, why: "SDK only checks that the account id contains an '@'" },
  emptyOptionalValue: { ours: false, sdk: true, why: "SDK accepts an empty account information value in tag 29" },
  expiredStatic: { ours: false, sdk: true, why: "SDK checks expiry only when PoI is 12" },
  duplicateTag: { ours: false, sdk: true, why: "SDK reads a repeated tag twice instead of rejecting it" },
  bothAccountTemplates: { ours: false, sdk: true, why: "SDK accepts tag 29 and tag 30 together" },
  languageLength: { ours: false, sdk: true, why: "SDK accepts a 1-character language preference" },
  malformedTlv: { ours: false, sdk: true, why: "SDK skips data objects whose id is not two digits and reads on" },
  unreservedTemplateForm: {
    ours: false,
    sdk: true,
    why: "SDK does not check that an unreserved template (tags 80–99) holds data objects",
  },
  timestampNotDigits: {
    ours: false,
    sdk: true,
    why: "SDK ignores tag 99 on a static QR, even a timestamp that is not digits",
  },
} as const;
export type Disagreement = keyof typeof KNOWN_DISAGREEMENTS;

export interface CorpusEntry {
  name: string;
  qr: string;
  disagree?: Disagreement;
}

interface Tlv {
  id: string;
  start: number;
  end: number;
}

/** Top-level data objects of a well-formed QR (test-side reader). */
function topLevel(qr: string): Tlv[] {
  const out: Tlv[] = [];
  for (let i = 0; i + 4 <= qr.length;) {
    const end = i + 4 + Number(qr.slice(i + 2, i + 4));
    out.push({ id: qr.slice(i, i + 2), start: i, end });
    i = end;
  }
  return out;
}

function flipHex(c: string): string {
  return "0123456789ABCDEF"[(parseInt(c, 16) + 1) % 16];
}

function bases(now: number): Record<string, string> {
  const sdkStatic = sdkGenerate({
    ...individualStatic,
    accountType: "merchant",
    merchantId: "M-77",
    acquiringBank: "ACLBKHPP",
    currency: 116,
    billNumber: "INV-9",
  });
  if (sdkStatic === null) throw new Error("SDK refused the static merchant fixture");
  return {
    individualStatic: encodeKhqr(individualStatic).qr,
    merchantDynamic: encodeKhqr(merchantDynamic(now, now + HOUR)).qr,
    individualFull: encodeKhqr(individualFull(now, now + HOUR)).qr,
    sdkMerchantStatic: sdkStatic.qr,
  };
}

function validVariants(now: number): CorpusEntry[] {
  const out: CorpusEntry[] = [];
  const variants: [string, KhqrInput][] = [];
  for (const type of ["individual", "merchant"] as const) {
    for (const currency of [116, 840] as const) {
      for (const amount of [undefined, currency === 116 ? "15000" : "9.99", currency === 116 ? "100.00" : "10"]) {
        for (const extras of [false, true]) {
          const x: KhqrInput = {
            ...individualStatic,
            accountType: type,
            currency,
            merchantId: "MID1",
            acquiringBank: "ABAAKHPP",
          };
          if (amount !== undefined)
            Object.assign(x, { amount, creationTimestamp: now, expirationTimestamp: now + HOUR });
          if (extras)
            Object.assign(x, {
              billNumber: "B-1",
              storeLabel: "Store",
              alternateLanguage: { languagePreference: "km", merchantName: "ចន" },
              merchantCategoryCode: "5411",
            });
          variants.push([`${type} ${currency} ${amount ?? "static"}${extras ? " extras" : ""}`, x]);
        }
      }
    }
  }
  for (const [name, x] of variants) {
    out.push({ name: `ours: ${name}`, qr: encodeKhqr(x).qr });
    const theirs = sdkGenerate(x);
    if (theirs !== null) out.push({ name: `sdk: ${name}`, qr: theirs.qr });
  }
  return out;
}

/** Length edits after which the SDK, re-synchronising on junk ids, still accepts the string. */
const SDK_READS_THROUGH_JUNK = new Set(["individualFull: tag 60 length -1, CRC redone"]);

/** A template whose last sub-object is cut short: the SDK's sub-tag loop never ends on it. */
export const SDK_HANG_PROBE = withCrc(
  "000201010211" + tlv("29", tlv("00", "a@b") + "5") + "52045999" + "5303116" + "5802KH5901n6001c",
);

function corruptions(name: string, qr: string): CorpusEntry[] {
  const out: CorpusEntry[] = [];
  const n = qr.length;
  for (let i = n - 4; i < n; i++)
    out.push({
      name: `${name}: CRC digit ${i - n + 4} changed`,
      qr: qr.slice(0, i) + flipHex(qr[i]) + qr.slice(i + 1),
    });
  out.push({ name: `${name}: CRC in lowercase`, qr: qr.slice(0, -4) + qr.slice(-4).toLowerCase() });
  const cuts = new Set<number>([0, 1, 2, 3, 4, n - 1, n - 2, n - 4, n - 8]);
  for (const t of topLevel(qr)) for (const d of [-1, 0, 1, 3, 4, 5]) cuts.add(t.start + d);
  for (const c of cuts) if (c >= 0 && c < n) out.push({ name: `${name}: truncated to ${c}`, qr: qr.slice(0, c) });
  for (const t of topLevel(qr)) {
    if (t.id === "63") continue;
    const len = t.end - t.start - 4;
    for (const d of [-1, 1]) {
      const edited = qr.slice(0, t.start + 2) + String(len + d).padStart(2, "0") + qr.slice(t.start + 4);
      out.push({ name: `${name}: tag ${t.id} length ${d > 0 ? "+1" : "-1"}`, qr: edited });
      const redone = `${name}: tag ${t.id} length ${d > 0 ? "+1" : "-1"}, CRC redone`;
      out.push({
        name: redone,
        qr: recrc(edited),
        ...(SDK_READS_THROUGH_JUNK.has(redone) ? { disagree: "malformedTlv" as const } : {}),
      });
    }
    const removed = recrc(qr.slice(0, t.start) + qr.slice(t.end));
    out.push({
      name: `${name}: tag ${t.id} removed`,
      qr: removed,
      ...(t.id === "01" ? { disagree: "poiMissing" as const } : {}),
    });
  }
  return out;
}

/** QRs built by hand to probe one rule each. */
function probes(now: number): CorpusEntry[] {
  const exp = tlv("99", tlv("00", String(now)) + tlv("01", String(now + HOUR)));
  const acct = tlv("29", tlv("00", "a@b"));
  const q = (poi: string, account: string, rest: string, tail = "") => withCrc("000201" + poi + account + rest + tail);
  const std = (mcc = "52045999", cur = "5303840", amount = "", country = "5802KH") =>
    mcc + cur + amount + country + "5901n6001c";
  return [
    { name: "probe: valid dynamic", qr: q("010212", acct, std(undefined, undefined, tlv("54", "1.25")), exp) },
    {
      name: "probe: amount with letters",
      qr: q("010212", acct, std(undefined, undefined, tlv("54", "1.2a")), exp),
      disagree: "amountNotNumeric",
    },
    {
      name: "probe: amount 1e3",
      qr: q("010212", acct, std(undefined, undefined, tlv("54", "1e3")), exp),
      disagree: "amountNotNumeric",
    },
    {
      name: "probe: amount with 3 decimals",
      qr: q("010212", acct, std(undefined, undefined, tlv("54", "1.255")), exp),
      disagree: "amountPrecision",
    },
    {
      name: "probe: amount zero",
      qr: q("010212", acct, std(undefined, undefined, tlv("54", "0")), exp),
      disagree: "amountZero",
    },
    { name: "probe: amount negative", qr: q("010212", acct, std(undefined, undefined, tlv("54", "-1")), exp) },
    { name: "probe: amount of 14", qr: q("010212", acct, std(undefined, undefined, tlv("54", "12345678901.25")), exp) },
    {
      name: "probe: KHR amount with decimals",
      qr: q("010212", acct, std(undefined, "5303116", tlv("54", "100.50")), exp),
    },
    { name: "probe: dynamic without amount", qr: q("010212", acct, std(), exp) },
    { name: "probe: dynamic without timestamps", qr: q("010212", acct, std(undefined, undefined, tlv("54", "1.25"))) },
    {
      name: "probe: dynamic expired",
      qr: q(
        "010212",
        acct,
        std(undefined, undefined, tlv("54", "1.25")),
        tlv("99", tlv("00", String(now - 2 * HOUR)) + tlv("01", String(now - HOUR))),
      ),
    },
    {
      name: "probe: static expired",
      qr: q("010211", acct, std(), tlv("99", tlv("00", String(now - 2 * HOUR)) + tlv("01", String(now - HOUR)))),
      disagree: "expiredStatic",
    },
    {
      name: "probe: expiration in seconds",
      qr: q(
        "010212",
        acct,
        std(undefined, undefined, tlv("54", "1.25")),
        tlv("99", tlv("01", String(Math.floor(now / 1000) + 3600))),
      ),
    },
    { name: "probe: PoI 13", qr: q("010213", acct, std()) },
    { name: "probe: payload format 02", qr: withCrc("000202010211" + acct + std()), disagree: "payloadFormatValue" },
    {
      name: "probe: payload format not first",
      qr: withCrc("010211000201" + acct + std()),
      disagree: "payloadFormatNotFirst",
    },
    {
      name: "probe: country TH",
      qr: q("010211", acct, std(undefined, undefined, "", "5802TH")),
      disagree: "countryNotKH",
    },
    { name: "probe: currency 764", qr: q("010211", acct, std(undefined, "5303764")) },
    { name: "probe: MCC 599", qr: q("010211", acct, std("5203599")), disagree: "mccNot4Digits" },
    { name: "probe: MCC letters", qr: q("010211", acct, std("5204ABCD")) },
    { name: "probe: account a@b@c", qr: q("010211", tlv("29", tlv("00", "a@b@c")), std()), disagree: "accountIdForm" },
    { name: "probe: account @bank", qr: q("010211", tlv("29", tlv("00", "@bank")), std()), disagree: "accountIdForm" },
    { name: "probe: account without @", qr: q("010211", tlv("29", tlv("00", "devit")), std()) },
    { name: "probe: account of 33", qr: q("010211", tlv("29", tlv("00", "a".repeat(31) + "@b")), std()) },
    {
      name: "probe: merchant without merchant id",
      qr: q("010211", tlv("30", tlv("00", "a@b") + tlv("02", "BANK")), std()),
    },
    { name: "probe: merchant without bank", qr: q("010211", tlv("30", tlv("00", "a@b") + tlv("01", "M1")), std()) },
    { name: "probe: merchant with account id only", qr: q("010211", tlv("30", tlv("00", "a@b")), std()) },
    {
      name: "probe: individual with empty account information",
      qr: q("010211", tlv("29", tlv("00", "a@b") + "0100"), std()),
      disagree: "emptyOptionalValue",
    },
    { name: "probe: name repeated", qr: q("010211", acct, std(), "5901m"), disagree: "duplicateTag" },
    {
      name: "probe: tags 29 and 30",
      qr: q("010211", acct + tlv("30", tlv("00", "x@y") + tlv("01", "M") + tlv("02", "B")), std()),
      disagree: "bothAccountTemplates",
    },
    {
      name: "probe: name of 26",
      qr: withCrc("000201010211" + acct + "52045999" + "5303840" + "5802KH" + tlv("59", "n".repeat(26)) + "6001c"),
    },
    {
      name: "probe: city of 16",
      qr: withCrc("000201010211" + acct + "52045999" + "5303840" + "5802KH" + "5901n" + tlv("60", "c".repeat(16))),
    },
    { name: "probe: bill number of 26", qr: q("010211", acct, std(), tlv("62", tlv("01", "b".repeat(26)))) },
    {
      name: "probe: language preference of 1",
      qr: q("010211", acct, std(), tlv("64", tlv("00", "k") + tlv("01", "x"))),
      disagree: "languageLength",
    },
    { name: "probe: language template without name", qr: q("010211", acct, std(), tlv("64", tlv("00", "km"))) },
    { name: "probe: foreign template next to tag 29", qr: q("010211", acct, std(), tlv("26", tlv("00", "SG.PAYNOW"))) },
    { name: "probe: template ending in a cut-short sub-object", qr: SDK_HANG_PROBE },
    { name: "probe: postal code tag", qr: q("010211", acct, std(), tlv("61", "12000")) },
    {
      name: "probe: unreserved template 80 that is not data objects",
      qr: q("010211", acct, std(), tlv("80", "TEST")),
      disagree: "unreservedTemplateForm",
    },
    { name: "probe: unreserved template 80 of data objects", qr: q("010211", acct, std(), tlv("80", tlv("00", "x"))) },
    {
      name: "probe: static creation time not digits",
      qr: q("010211", acct, std(), tlv("99", tlv("00", "+" + String(now).slice(1)))),
      disagree: "timestampNotDigits",
    },
    {
      name: "probe: static tag 99 of another party",
      qr: q("010211", acct, std(), tlv("99", tlv("00", "39CA026411FDA") + tlv("68", "mmp"))),
    },
    ...Object.entries(otherSchemes).map(([name, qr]) => ({ name: `other scheme: ${name}`, qr })),
    { name: "garbage: hello", qr: "hello" },
    { name: "garbage: empty", qr: "" },
    { name: "garbage: digits", qr: "1".repeat(64) },
    { name: "garbage: just a CRC", qr: withCrc("") },
    { name: "garbage: payload format only", qr: withCrc("000201") },
  ];
}

export function buildCorpus(now: number): CorpusEntry[] {
  const out = [...validVariants(now), ...probes(now)];
  for (const [name, qr] of Object.entries(bases(now)))
    out.push({ name: `${name}: as generated`, qr }, ...corruptions(name, qr));
  return out;
}
