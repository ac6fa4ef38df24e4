// fast-check generators of valid KHQR inputs, and the field-by-field expectation of a decode.
import fc from "fast-check";
import { formatKhqrAmount, type KhqrDecoded, type KhqrInput } from "../../src/khqr/index.js";

const ascii = (min: number, max: number) => fc.string({ unit: "grapheme-ascii", minLength: min, maxLength: max });
const khmer = (min: number, max: number) =>
  fc
    .array(
      fc.integer({ min: 0x1780, max: 0x17dd }).map((c) => String.fromCharCode(c)),
      { minLength: min, maxLength: max },
    )
    .map((a) => a.join(""));
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const accountId = fc
  .tuple(fc.stringMatching(/^[a-z0-9_.]{1,12}$/), fc.stringMatching(/^[a-z]{2,8}$/))
  .map(([n, b]) => `${n}@${b}`);

/** Amount strings as integrators write them (no leading zeros): "12", "12.5", "12.50"; KHR integers. */
const usdAmount = fc
  .tuple(fc.integer({ min: 0, max: 99_999_999 }), fc.integer({ min: 0, max: 99 }), fc.constantFrom(0, 1, 2))
  .map(([whole, cents, digits]) => {
    const s =
      digits === 0
        ? String(whole)
        : digits === 1
          ? `${whole}.${Math.floor(cents / 10)}`
          : `${whole}.${String(cents).padStart(2, "0")}`;
    return /[1-9]/.test(s) ? s : "1"; // amounts are > 0
  });
const khrAmount = fc.integer({ min: 100, max: 9_999_999_999 }).map(String);

const timestamps = fc.tuple(
  fc.integer({ min: 1_700_000_000_000, max: 2_000_000_000_000 }),
  fc.integer({ min: 0, max: 1_000_000_000 }),
);

/**
 * Valid inputs. withStaticTimestamps: also put timestamps on some static QRs (our encoder writes
 * them; the SDK drops them, so the byte-identity check with the SDK turns this off).
 */
export function validInput(withStaticTimestamps = true): fc.Arbitrary<KhqrInput> {
  return fc
    .record({
      accountType: fc.constantFrom("individual" as const, "merchant" as const),
      bakongAccountId: accountId,
      merchantName: ascii(1, 25),
      merchantCity: ascii(1, 15),
      merchantId: fc.stringMatching(/^[A-Z0-9]{1,20}$/),
      acquiringBank: ascii(1, 20),
      accountInformation: opt(ascii(1, 20)),
      individualBank: fc.boolean(),
      merchantCategoryCode: opt(fc.stringMatching(/^\d{4}$/)),
      currency: fc.constantFrom(116 as const, 840 as const),
      usd: usdAmount,
      khr: khrAmount,
      dynamic: fc.boolean(),
      billNumber: opt(ascii(1, 15)),
      mobileNumber: opt(fc.stringMatching(/^\d{1,15}$/)),
      storeLabel: opt(ascii(1, 15)),
      terminalLabel: opt(ascii(1, 15)),
      purposeOfTransaction: opt(ascii(1, 15)),
      alternateLanguage: opt(
        fc.record({
          languagePreference: fc.constantFrom("km", "en", "zh"),
          merchantName: khmer(1, 25),
          merchantCity: opt(khmer(1, 15)),
        }),
      ),
      times: timestamps,
      staticTimes: fc.constantFrom(0, 1, 2, 3),
    })
    .map((r) => {
      const x: KhqrInput = {
        accountType: r.accountType,
        bakongAccountId: r.bakongAccountId,
        merchantName: r.merchantName,
        merchantCity: r.merchantCity,
        currency: r.currency,
      };
      if (r.accountType === "merchant") {
        x.merchantId = r.merchantId;
        x.acquiringBank = r.acquiringBank;
      } else {
        if (r.accountInformation !== undefined) x.accountInformation = r.accountInformation;
        if (r.individualBank) x.acquiringBank = r.acquiringBank;
      }
      if (r.merchantCategoryCode !== undefined) x.merchantCategoryCode = r.merchantCategoryCode;
      for (const k of ["billNumber", "mobileNumber", "storeLabel", "terminalLabel", "purposeOfTransaction"] as const) {
        if (r[k] !== undefined) x[k] = r[k];
      }
      if (r.alternateLanguage !== undefined) {
        const { merchantCity, ...rest } = r.alternateLanguage;
        x.alternateLanguage = merchantCity === undefined ? rest : { ...rest, merchantCity };
      }
      const [created, lifetime] = r.times;
      if (r.dynamic) {
        x.amount = r.currency === 840 ? r.usd : r.khr;
        x.creationTimestamp = created;
        x.expirationTimestamp = created + lifetime;
      } else if (withStaticTimestamps) {
        if (r.staticTimes & 1) x.creationTimestamp = created;
        if (r.staticTimes & 2) x.expirationTimestamp = created + lifetime;
      }
      return x;
    });
}

/** What decodeKhqr must answer for the QR encoded from x. */
export function expectedDecode(x: KhqrInput, qr: string): KhqrDecoded {
  const merchant = x.accountType === "merchant";
  const d: KhqrDecoded = {
    merchantType: merchant ? "30" : "29",
    bankAccountID: x.bakongAccountId,
    merchantID: merchant ? (x.merchantId ?? null) : null,
    acquiringBank: x.acquiringBank ?? null,
    merchantCategoryCode: x.merchantCategoryCode ?? "5999",
    transactionCurrency: String(x.currency),
    transactionAmount: x.amount === undefined ? null : formatKhqrAmount(x.amount, x.currency),
    countryCode: "KH",
    merchantName: x.merchantName,
    merchantCity: x.merchantCity,
    crc: qr.slice(-4),
    pointOfInitiationMethod: x.amount === undefined ? "11" : "12",
  };
  if (!merchant && x.accountInformation !== undefined) d.accountInformation = x.accountInformation;
  for (const k of ["billNumber", "mobileNumber", "storeLabel", "terminalLabel", "purposeOfTransaction"] as const) {
    if (x[k] !== undefined) d[k] = x[k];
  }
  if (x.alternateLanguage) {
    d.languagePreference = x.alternateLanguage.languagePreference;
    d.merchantNameAlternateLanguage = x.alternateLanguage.merchantName;
    if (x.alternateLanguage.merchantCity !== undefined)
      d.merchantCityAlternateLanguage = x.alternateLanguage.merchantCity;
  }
  if (x.creationTimestamp !== undefined) d.creationTimestamp = String(x.creationTimestamp);
  if (x.expirationTimestamp !== undefined) d.expirationTimestamp = String(x.expirationTimestamp);
  return d;
}
