// KHQR strings from other implementations' test suites: the national SDK's own tests
// (bakong-khqr 1.0.20, read from node_modules/bakong-khqr/test) and public KHQR libraries in
// TypeScript, Go, Rust, Kotlin, Dart and Ruby. The strings and each source's claim about them are
// facts copied from those suites (no code is); `ours`, `error` and `sdk` are the verdicts the
// cross-check (sdk-crosscheck.test.ts) asserts, and `why` says why we part from a source's claim
// or from the SDK. `disagree` names the entry of KNOWN_DISAGREEMENTS (corpus.ts) when our verify
// and the SDK's differ.
import type { KhqrDecoded } from "../../src/khqr/index.js";
import type { Disagreement } from "./corpus.js";

/**
 * What the source's test asserts: "valid"/"invalid" (its verify), "generated" (its encoder's
 * output, so valid), "decodes" (its decoder reads it; decoders there do not validate), "emv"
 * (read only as plain EMV, no KHQR claim).
 */
export type Claim = "valid" | "invalid" | "generated" | "decodes" | "emv";

export interface WildVector {
  /** The string as its source has it; with `build`, the part before what the source's test appends. */
  qr: string;
  /**
   * How the source's test completes the string: "crc" appends "6304" and the CRC; "rawCrc16"
   * appends the CRC of the string as it is; "timestampsAndCrc" appends tag 99 (creation and
   * expiration) and "6304" + CRC, as the SDK's and go-khqr's verify tests do. They stamp now and
   * now + 60 s / 5 min; the cross-check stamps fixed times (2026-01-01, expiring 2100-01-01) so
   * that every run reads the same string.
   */
  build?: "crc" | "rawCrc16" | "timestampsAndCrc";
  /** Where the string comes from (repository or package, path) and what that test says of it. */
  sources: { ref: string; label: string; claim: Claim }[];
  /** Whether the complete string's CRC is correct. */
  crc: boolean;
  /** Our verify at test time. */
  ours: boolean;
  /** Our decode's errorCode (null: decodes). */
  error: number | null;
  /** The SDK's verify at test time, or "hangs" when its sub-tag loop would never end. */
  sdk: boolean | "hangs";
  /** Fields our decode must report (the source's expectations where it gives them). */
  fields?: Partial<KhqrDecoded>;
  disagree?: Disagreement;
  why?: string;
}

export const WILD_VECTORS: WildVector[] = [
  {
    qr: "00020101021229180014jonhsmith@nbcq520459995303116540750000.05802KH5910Jonh Smith6010Phnom Penh6215021185512345678",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Valid KHQR 1", claim: "valid" }, { ref: "ishinvin/go-khqr verify_test.go", label: "individual_khr_with_mobile", claim: "valid" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq52045999530384054031.05802KH5910Jonh Smith6010PHNOM PENH62210117INV-2021-07-65822",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Valid KHQR 2", claim: "valid" }, { ref: "ishinvin/go-khqr verify_test.go", label: "individual_usd_with_bill", claim: "valid" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021230400014jonhsmith@devb01061234560208Dev Bank520459995303840540410.05802KH5910Jonh Smith6010Phnom Penh62360117INV-2021-07-65822021185512345678",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Valid KHQR 3", claim: "valid" }, { ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 4", claim: "valid" }, { ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 6", claim: "valid" }, { ref: "ishinvin/go-khqr verify_test.go", label: "merchant_usd_with_additional", claim: "valid" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "6250070201030412340211855854989940117INV-2021-07-658226010PHNOM PENH5910Jonh Smith5802KH540115303840520459992926070412340014jonhsmith@nbcq010212000201",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 5", claim: "valid" }, { ref: "ishinvin/go-khqr verify_test.go", label: "individual_tags_reversed_with_additional", claim: "valid" }],
    crc: true, ours: false, error: 36, sdk: true,
    disagree: "payloadFormatNotFirst",
    why: "Tags out of order: the payload format indicator (00) must come first (EMV). The SDK does not check the order.",
  },
  {
    qr: "00020101021126200016coffeeklang@pras",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 2", claim: "invalid" }],
    crc: true, ours: false, error: 5, sdk: false,
  },
  {
    qr: "63046007",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 3", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "null",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 4", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "''",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 5", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "                   ",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 6", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "ABC",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 7", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "ABC     ",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 8", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "កខគឃង",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 9", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021126150011jonhsmith@nbcq5204599953031165802KH5912Jonh Smith6010Phnom Penh",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 10", claim: "invalid" }, { ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 11", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "EAB3",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 12", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021230190015",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 13", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "10263041234",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 14", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "63041234",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 15", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021230410015john_smith@devb01061234560208Dev Bank53038405204599954035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#069",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Valid KHQR 16", claim: "valid" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021252045999530384054035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#069",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 17", claim: "invalid" }],
    crc: true, ours: false, error: 5, sdk: false,
  },
  {
    qr: "00020101021230190015123456789012345",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 18", claim: "invalid" }],
    crc: true, ours: false, error: 3, sdk: false,
  },
  {
    qr: "000201010212304400401234567890123456789012345678901234567890",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 19", claim: "invalid" }],
    crc: true, ours: false, error: 6, sdk: false,
  },
  {
    qr: "000301001021230190015john_smith@devb",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 20", claim: "invalid" }],
    crc: true, ours: false, error: 16, sdk: false,
  },
  {
    qr: "01021230190015john_smith@devb52045999530384054035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#069",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 21", claim: "invalid" }],
    crc: true, ours: false, error: 23, sdk: false,
  },
  {
    qr: "000201010312330190015john_smith@devb",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 22", claim: "invalid" }],
    crc: true, ours: false, error: 17, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb5203999",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 23", claim: "invalid" }],
    crc: true, ours: false, error: 51, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb530384054035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#069",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 24", claim: "invalid" }],
    crc: true, ours: false, error: 25, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb5204599953048840",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 25", claim: "invalid" }],
    crc: true, ours: false, error: 19, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb5204599954035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#069",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 26", claim: "invalid" }],
    crc: true, ours: false, error: 9, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05803KKH",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 27", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05916john smith actor6010Phnom Penh62150111Invoice#069",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 28", claim: "invalid" }],
    crc: true, ours: false, error: 26, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH5916john smith actor601701234567890123456",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 29", claim: "invalid" }],
    crc: true, ours: false, error: 21, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH5916john smith actor600062150111Invoice#069",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 30", claim: "invalid" }],
    crc: true, ours: false, error: 27, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH5916john smith actor62150111Invoice#069",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 31", claim: "invalid" }],
    crc: true, ours: false, error: 27, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH59307PL7EvxHpgpP4jT4uMgegaYqgv3Ehb6010Phnom Penh",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 32", claim: "invalid" }],
    crc: true, ours: false, error: 7, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH59006010Phnom Penh",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 33", claim: "invalid" }],
    crc: true, ours: false, error: 2, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH6010Phnom Penh62150111Invoice#069",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 34", claim: "invalid" }],
    crc: true, ours: false, error: 2, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530311654065000.05802KH5910jonh smith6010Phnom Penh622701000313Coffee Klaing0702#2",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 35", claim: "invalid" }],
    crc: true, ours: false, error: 10, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530311654065000.05802KH5910jonh smith6010Phnom Penh62230109#INV-200303000702#2",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 36", claim: "invalid" }],
    crc: true, ours: false, error: 11, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530311654065000.05802KH5910jonh smith6010Phnom Penh62340109#INV-20030313Coffee Klaing0700",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Invalid KHQR 37", claim: "invalid" }],
    crc: true, ours: false, error: 12, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384954035.05802KH5916john smith actor6010Phnom Penh",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Valid KHQR 38", claim: "invalid" }],
    crc: true, ours: false, error: 28, sdk: false,
  },
  {
    qr: "000201",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "KHQR provided is invalid", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "020101021230190015john_smith@devb52045999530384054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Payload Format Indicator cannot be null or empty", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "000300101021230190015john_smith@devb52045999530384054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Payload Format Indicator Length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 16, sdk: false,
  },
  {
    qr: "000201010301230190015john_smith@devb52045999530384054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Point of Initiation Length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 17, sdk: false,
  },
  {
    qr: "00020101021252045999530384054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Merchant type cannot be null or empty", claim: "invalid" }],
    crc: true, ours: false, error: 5, sdk: false,
  },
  {
    qr: "00020101021230390035john_smmmmmmmmmmmithhhhhhhhhhh@devb52045999530384054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Bakong Account ID length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 6, sdk: false,
  },
  {
    qr: "00020101021230190018john_smith_devb52045999530384054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Bakong Account ID is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb530384054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Merchant Category cannot be null or empty", claim: "invalid" }],
    crc: true, ours: false, error: 25, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb520559999530384054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Merchant Category Length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 18, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb5204599954035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Currency type cannot be null or empty", claim: "invalid" }],
    crc: true, ours: false, error: 9, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb520459995304840054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Transaction Currency Length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 19, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530397854035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Unsupported currency", claim: "invalid" }],
    crc: true, ours: false, error: 28, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb5204599953031165414500000000000.05802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Transaction amount length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 4, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530384054035005910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Country Code cannot be null or empty", claim: "invalid" }],
    crc: true, ours: false, error: 26, sdk: false,
  },
  {
    qr: "00020101021230180014johnsmith@devb52045999530384054035005807VIETNAM5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Country Code Length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 20, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530384054035005802KH6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Merchant name cannot be null or empty", claim: "invalid" }],
    crc: true, ours: false, error: 2, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530384054035005802KH5929Joooooooooooooooooooohn Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Merchant name length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 7, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530384054035005802KH5910John Smith62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Merchant City cannot be null or empty", claim: "invalid" }],
    crc: true, ours: false, error: 27, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530384054035005802KH5910John Smith6016Phnommmmmmm Penh62460111Invoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Merchant City Length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 21, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530384054035005802KH5910John Smith6010Phnom Penh62610126Invvvvvvvvvvvvvvvvoice#0690314Coffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Bill number length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 10, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530384054035005802KH5910John Smith6010Phnom Penh62590111Invoice#0690327Cooooooooooooooffee Khlaing0709Counter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Store label length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 11, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530384054035005802KH5910John Smith6010Phnom Penh62640111Invoice#0690314Coffee Khlaing0727Cooooooooooooooooooounter 29917001316140656838196304",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "Terminal label length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 12, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530384054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 2991700131614065683819",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "KHQR provided is invalid", claim: "invalid" }, { ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "CRC cannot be null or empty", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021230190015john_smith@devb52045999530384054035005802KH5910John Smith6010Phnom Penh62460111Invoice#0690314Coffee Khlaing0709Counter 299170013161406568381963050F276",
    build: "rawCrc16",
    sources: [{ ref: "bakong-khqr@1.0.20 test/valid.test.js", label: "CRC Length is invalid", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530311654065000.05802KH5910jonh smith6010Phnom Penh62360109#INV-20030313Coffee Klaing0702#299170013161302797275763049ACF",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 1", claim: "decodes" }, { ref: "bakong-khqr@1.0.20 test/feature/non-khqr/docode.test.js", label: "Decode Non-KHQR 1", claim: "emv" }],
    crc: true, ours: false, error: 45, sdk: false,
    why: "Old rule: a dynamic QR without an expiration (tag 99 sub 01). The current SDK refuses it too (error 45).",
  },
  {
    qr: "00020101021230410015john_smith@devb01061234560208Dev Bank52045999530384054035.05802KH5916john smith actor6010Phnom Penh62130709Counter 299170013161343857579463048EF2",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 2", claim: "decodes" }],
    crc: true, ours: false, error: 45, sdk: false,
    why: "Old rule: a dynamic QR without an expiration (tag 99 sub 01). The current SDK refuses it too (error 45).",
  },
  {
    qr: "00020101021230410015john_smith@devb01061234560208Dev Bank52045999530384054035.05802KH5916john smith actor6010Phnom Penh62280111Invoice#0690709Counter 29917001316134385758926304384E",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 3", claim: "decodes" }],
    crc: true, ours: false, error: 45, sdk: false,
    why: "Old rule: a dynamic QR without an expiration (tag 99 sub 01). The current SDK refuses it too (error 45).",
  },
  {
    qr: "00020101021230410015john_smith@devb01061234560208Dev Bank52045999530384054035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#0699917001316134385758926304552D",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 4", claim: "decodes" }],
    crc: true, ours: false, error: 45, sdk: false,
    why: "Old rule: a dynamic QR without an expiration (tag 99 sub 01). The current SDK refuses it too (error 45).",
  },
  {
    qr: "000201010211021641277800000000980416518352888000006030470016abaakhppxxx@abaa01153166007701102420204abaa5204224253038405802KH5910USD OUTLET6010PHNOM PENH62250509115B02750070827CE19809924001339CA026411FDA6803mmp63043870",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 5", claim: "decodes" }, { ref: "ishinvin/go-khqr decode_test.go", label: "non_standard_emv", claim: "decodes" }],
    crc: true, ours: true, error: null, sdk: true,
    fields: { merchantType: "30", bankAccountID: "abaakhppxxx@abaa", merchantID: "316600770110242", acquiringBank: "abaa", merchantCategoryCode: "2242", terminalLabel: "27CE1980", tag99: "001339CA026411FDA6803mmp" },
    why: "A production ABA static QR: its tag 99 is ABA's own template, not KHQR timestamps. Both sources report its sub 00 as a creation time; we report the raw tag 99 as `tag99` instead.",
  },
  {
    qr: "00020101021130470009khqr@aclb0111855124649170215ACLEDA Bank Plc5204599953038405802KH5907BUN MAO6010Phnom Penh6102126213020901050033164310002KM0107BUN MAO0210Phnom Penh6304E313",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 6", claim: "decodes" }, { ref: "ishinvin/go-khqr decode_test.go", label: "acleda_with_language", claim: "decodes" }],
    crc: true, ours: true, error: null, sdk: true,
    fields: { merchantType: "30", bankAccountID: "khqr@aclb", merchantID: "85512464917", acquiringBank: "ACLEDA Bank Plc", mobileNumber: "010500331", languagePreference: "KM", merchantNameAlternateLanguage: "BUN MAO", merchantCityAlternateLanguage: "Phnom Penh" },
  },
  {
    qr: "00020101021130640009khqr@aclb0111855124649060215ACLEDA Bank Plc051385500000019425204593153038405802KH5912KHQR TESTING6010Phnom Penh6102126213020901753577164360002KM0112KHQR TESTING0210Phnom Penh6304AC1C",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 7", claim: "decodes" }, { ref: "ishinvin/go-khqr decode_test.go", label: "acleda_with_language_v2", claim: "decodes" }],
    crc: true, ours: true, error: null, sdk: true,
    fields: { merchantID: "85512464906", acquiringBank: "ACLEDA Bank Plc", merchantCategoryCode: "5931", mobileNumber: "017535771" },
  },
  {
    qr: "00020101021229310014jonhsmith@nbcq0109012345678520459995303116540750000.05802KH5910Jonh Smith6009Siam Reap62550117INV-2021-07-658220211855123456780305BKK-1070601234599170013163039583850263041134",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 8", claim: "decodes" }],
    crc: true, ours: false, error: 45, sdk: false,
    why: "Old rule: a dynamic QR without an expiration (tag 99 sub 01). The current SDK refuses it too (error 45).",
  },
  {
    qr: "EAB3",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 9", claim: "decodes" }, { ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 12", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
    why: "No valid CRC, so not a QR at all. The SDK's decode answers code 0 with empty fields; ours reports the failure (the contract wants non-zero).",
  },
  {
    qr: "00020101021230190015",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 10", claim: "decodes" }, { ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 13", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
    why: "No valid CRC, so not a QR at all. The SDK's decode answers code 0 with empty fields; ours reports the failure (the contract wants non-zero).",
  },
  {
    qr: "10263041234",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 11", claim: "decodes" }, { ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 14", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
    why: "No valid CRC, so not a QR at all. The SDK's decode answers code 0 with empty fields; ours reports the failure (the contract wants non-zero).",
  },
  {
    qr: "63041234",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 12", claim: "decodes" }, { ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 15", claim: "invalid" }],
    crc: false, ours: false, error: 23, sdk: false,
    why: "No valid CRC, so not a QR at all. The SDK's decode answers code 0 with empty fields; ours reports the failure (the contract wants non-zero).",
  },
  {
    qr: "00020101021230410015john_smith@devb01061234560208Dev Bank53038405204599954035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#06999170013161343857589263040437",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 13", claim: "decodes" }, { ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Valid KHQR 16", claim: "valid" }],
    crc: true, ours: false, error: 45, sdk: false,
    why: "Old rule: a dynamic QR without an expiration (tag 99 sub 01). The current SDK refuses it too (error 45).",
  },
  {
    qr: "00020101021252045999530384054035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#06999170013161343857589263042494",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 14", claim: "decodes" }, { ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 17", claim: "invalid" }, { ref: "ishinvin/go-khqr verify_test.go", label: "merchant_type_required_no_account_tag", claim: "invalid" }],
    crc: true, ours: false, error: 5, sdk: false,
    why: "Breaks a KHQR rule (error 5, Merchant type cannot be null or empty). The SDK's decode never fails; ours reports the first broken rule.",
  },
  {
    qr: "000201010212301900151234567890123456304D807",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 15", claim: "decodes" }, { ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 18", claim: "invalid" }],
    crc: true, ours: false, error: 3, sdk: false,
    why: "Breaks a KHQR rule (error 3, Bakong Account ID is invalid). The SDK's decode never fails; ours reports the first broken rule.",
  },
  {
    qr: "00020101021230440040123456789012345678901234567890123456789063041747",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 16", claim: "decodes" }, { ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 19", claim: "invalid" }],
    crc: true, ours: false, error: 6, sdk: false,
    why: "Breaks a KHQR rule (error 6, Bakong Account ID Length is Invalid). The SDK's decode never fails; ours reports the first broken rule.",
  },
  {
    qr: "000301001021230190015john_smith@devb630493FD",
    sources: [{ ref: "bakong-khqr@1.0.20 test/decode.test.js", label: "Decode Test 17", claim: "decodes" }, { ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 20", claim: "invalid" }],
    crc: true, ours: false, error: 16, sdk: false,
    why: "Breaks a KHQR rule (error 16, Payload Format indicator Length is invalid). The SDK's decode never fails; ours reports the first broken rule.",
  },
  {
    qr: "00020101021229460015john_smith@devb0111855122334550208Dev Bank52045999530384054031005802KH5910John Smith6010PHNOM PENH62670106#123450211855122334550311Coffee Shop0709Cashier_10810Buy coffee64280002km0108ចន ស្មីន0206ភ្នំពញ993400131726821915797011317268220357976304B73E",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/timestamp/decode.test.js", label: "Decode Test 1", claim: "decodes" }],
    crc: true, ours: false, error: null, sdk: false,
  },
  {
    qr: "00020101021230350009khqr@devb01061234560208Dev Bank52045999530384054031005802KH5910John Smith6010PHNOM PENH62670106#123450211855122334550311Coffee Shop0709Cashier_10810Buy coffee64280002km0108ចន ស្មីន0206ភ្នំពញ993400131726822962612011317268230826126304A560",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/timestamp/decode.test.js", label: "Decode Test 2", claim: "decodes" }],
    crc: true, ours: false, error: null, sdk: false,
  },
  {
    qr: "00020101021329180014vandoeurn@devb52045999530384054031015802KH5909Vandoeurn6010Phnom Penh993400131727249364974011317272494849746304DCEF",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/timestamp/valid.test.js", label: "Point of Initiation Method is invalid", claim: "invalid" }, { ref: "ishinvin/go-khqr verify_test.go", label: "poi_invalid", claim: "invalid" }],
    crc: true, ours: false, error: 48, sdk: false,
  },
  {
    qr: "00020101021229180014vandoeurn@devb5204599953038405802KH5909Vandoeurn6010Phnom Penh993400131727249364974011317272494849746304B6F4",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/timestamp/valid.test.js", label: "Invalid Dynamic KHQR", claim: "invalid" }],
    crc: true, ours: false, error: 47, sdk: false,
  },
  {
    qr: "00020101021229180014vandoeurn@devb52045999530384054031015802KH5909Vandoeurn6010Phnom Penh9934001317272493649740113172724948497463047BD0",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/timestamp/valid.test.js", label: "KHQR was expired", claim: "invalid" }, { ref: "ishinvin/go-khqr verify_test.go", label: "khqr_expired", claim: "invalid" }],
    crc: true, ours: false, error: null, sdk: false,
  },
  {
    qr: "00020101021215311974011600520446ACLB1000231208129200016chantha_dev@ftcc520459995303116540410005802KH5911Chantha Dev6010Phnom Penh63046011",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/timestamp/valid.test.js", label: "Expiration timestamp is required", claim: "invalid" }, { ref: "ishinvin/go-khqr verify_test.go", label: "expiration_required_no_tag99", claim: "invalid" }],
    crc: true, ours: false, error: 45, sdk: false,
  },
  {
    qr: "00020101021215311974011600520446ACLB1000231208129200016chantha_dev@ftcc52045999530311654034005802KH5911Chantha Dev6010Phnom Penh99170013172974008531463046EEC",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/timestamp/valid.test.js", label: "Expiration timestamp is required 1", claim: "invalid" }],
    crc: true, ours: false, error: 45, sdk: false,
  },
  {
    qr: "00020101021229220018sopheak_leng2@ftcc520459995303116540410005802KH5912sopheak leng6010Phnom Penh9936001411732270085311011417323270145310630445D7",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/timestamp/valid.test.js", label: "Expiration timestamp length is invalid", claim: "invalid" }],
    crc: true, ours: false, error: 49, sdk: false,
  },
  {
    qr: "00020101021129180014jonhsmith@nbcq52041A2B53031165802KH5910Jonh Smith6010Phnom Penh6304F7FD",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/mcc/valid.test.js", label: "Feature MCC: Verify Invalid Merchant Category Code 1", claim: "invalid" }, { ref: "ishinvin/go-khqr verify_test.go", label: "mcc_invalid_hex", claim: "invalid" }],
    crc: true, ours: false, error: 51, sdk: false,
  },
  {
    qr: "00020101021129180014jonhsmith@nbcq5204-10053031165802KH5910Jonh Smith6010Phnom Penh6304038A",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/mcc/valid.test.js", label: "Feature MCC: Verify Invalid Merchant Category Code 2", claim: "invalid" }, { ref: "ishinvin/go-khqr verify_test.go", label: "mcc_invalid_negative", claim: "invalid" }],
    crc: true, ours: false, error: 51, sdk: false,
  },
  {
    qr: "00020101021115231234567812345678901234530400014jonhsmith@nbcq01061234560208Dev Bank5204599953031165802KH5910Jonh Smith6010Phnom Penh9917001316873168216096310abcdef",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/non-khqr/docode.test.js", label: "Invalid crc length", claim: "emv" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "002",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/non-khqr/docode.test.js", label: "Invalid EMVQR", claim: "emv" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021115231234567812345678901234530400014jonhsmith@nbcq01061234560208Dev Bank5206599953031165802KH5910Jonh Smith6010Phnom Penh9917001316873168216096304D82B",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/non-khqr/docode.test.js", label: "Incorrect length of tag 52", claim: "emv" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021115140110555555555530400014jonhsmith@nbcq01061234560208Dev Bank5204599953031165802KH5910Jonh Smith6010Phnom Penh9924011316873168216090203TTT6304EC18",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/non-khqr/docode.test.js", label: "Decode Non-KHQR 2", claim: "emv" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021129370009khqr@aclb011009686507250206ACLEDA392000118551121508001014520420005802KH53031165912Chhuon Vutha6010Phnom Penh62420210096865072510020111070103ABC99070103ABC65240003ABC01020199070103ABC99340013171740156077901020199070103ABC63046995",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/non-khqr/docode.test.js", label: "Decode Non-KHQR 3", claim: "emv" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq520459995303840540115802KH5910Jonh Smith6010PHNOM PENH62210117INV-2021-07-65822",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/individualGenerate.test.js", label: "Success Generate 1", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq5204599953031165405500005802KH5910Jonh Smith6010Phnom Penh6215021185512345678",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/individualGenerate.test.js", label: "Success Generate 2", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq5204599953031165405500005802KH5910Jonh Smith6010Phnom Penh62090305BKK-1",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/individualGenerate.test.js", label: "Success Generate 3", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq5204599953031165405500005802KH5910Jonh Smith6009Siam Reap62550117INV-2021-07-658220211855123456780305BKK-10706012345",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/individualGenerate.test.js", label: "Success Generate 4", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021229430014jonhsmith@nbcq01090123456780208Dev Bank5204599953031165405500005802KH5910Jonh Smith6009Siam Reap62550117INV-2021-07-658220211855123456780305BKK-10706012345",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/individualGenerate.test.js", label: "Success Generate 5", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021229300014jonhsmith@nbcq0208Dev Bank5204599953031165405500005802KH5910Jonh Smith6009Siam Reap62550117INV-2021-07-658220211855123456780305BKK-10706012345",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/individualGenerate.test.js", label: "Success Generate 6", claim: "generated" }, { ref: "bakong-khqr@1.0.20 test/individualGenerate.test.js", label: "Success Generate 7", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021229310014jonhsmith@nbcq01090123456785204599953031165405500005802KH5910Jonh Smith6009Siam Reap62550117INV-2021-07-658220211855123456780305BKK-10706012345",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/individualGenerate.test.js", label: "Success Generate 8", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021129180014jonhsmith@nbcq5204599953031165802KH5910Jonh Smith6009Siam Reap64280002km0108ចន ស្មីន0206សៀមរាប",
    build: "crc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/individualGenerate.test.js", label: "Success Generate 9", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021129180014jonhsmith@nbcq5204599953031165802KH5910Jonh Smith6010Phnom Penh62260211855123456780807Testing",
    build: "crc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/individualGenerate.test.js", label: "Success Generate 10", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021230400014jonhsmith@devb01061234560208Dev Bank5204599953031165405500005802KH5910Jonh Smith6009Siam Reap62550117INV-2021-07-658220211855123456780305BKK-10706012345",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/merchantGenerate.test.js", label: "Success Generate 1", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021230400014jonhsmith@devb01061234560208Dev Bank5204599953038405402105802KH5910Jonh Smith6010Phnom Penh62450117INV-2021-07-658220211855123456780305BKK-1",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/merchantGenerate.test.js", label: "Success Generate 2", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021230400014jonhsmith@devb01061234560208Dev Bank5204599953038405402105802KH5910Jonh Smith6010Phnom Penh62360117INV-2021-07-65822021185512345678",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/merchantGenerate.test.js", label: "Success Generate 3", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021230400014jonhsmith@devb01061234560208Dev Bank5204599953038405402105802KH5910Jonh Smith6010Phnom Penh6215021185512345678",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/merchantGenerate.test.js", label: "Success Generate 4", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021230400014jonhsmith@devb01061234560208Dev Bank5204599953038405402105802KH5910Jonh Smith6010Phnom Penh",
    build: "timestampsAndCrc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/merchantGenerate.test.js", label: "Success Generate 5", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021130400014jonhsmith@devb01061234560208Dev Bank5204599953038405802KH5910Jonh Smith6010Phnom Penh",
    build: "crc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/merchantGenerate.test.js", label: "Success Generate 6", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021129180014jonhsmith@nbcq5204000053031165802KH5910Jonh Smith6010Phnom Penh",
    build: "crc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/mcc/individualGenerate.test.js", label: "Feature MCC: Success Generate Individual KHQR Test 1", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021129180014jonhsmith@nbcq5204123453031165802KH5910Jonh Smith6010Phnom Penh",
    build: "crc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/mcc/individualGenerate.test.js", label: "Feature MCC: Success Generate Individual KHQR Test 2", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021130400014jonhsmith@nbcq01061234560208Dev Bank5204000053031165802KH5910Jonh Smith6010Phnom Penh",
    build: "crc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/mcc/merchantGenerate.test.js", label: "Feature MCC: Success Generate Merchant KHQR Test 1", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021130400014jonhsmith@nbcq01061234560208Dev Bank5204123453031165802KH5910Jonh Smith6010Phnom Penh",
    build: "crc",
    sources: [{ ref: "bakong-khqr@1.0.20 test/feature/mcc/merchantGenerate.test.js", label: "Feature MCC: Success Generate Merchant KHQR Test 2", claim: "generated" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021029190015john_smith@devb5204599953038405405100.05802KH5910John Smith6010Phnom Penh",
    sources: [{ ref: "bakong-khqr@1.0.20 test/deepLink.test.js", label: "Invalid QR", claim: "invalid" }],
    crc: false, ours: false, error: 24, sdk: false,
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq520459995303116540750000.05802KH5910Jonh Smith6010Phnom Penh62150211855123456789917001316257134678276304A96B",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Valid KHQR 1", claim: "valid" }],
    crc: true, ours: false, error: 45, sdk: false,
    why: "Old rule: a dynamic QR without an expiration (tag 99 sub 01). The current SDK refuses it too (error 45).",
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq52045999530384054031.05802KH5910Jonh Smith6010PHNOM PENH62210117INV-2021-07-65822991700131625713467827630451CF",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Valid KHQR 2", claim: "valid" }],
    crc: true, ours: false, error: 45, sdk: false,
    why: "Old rule: a dynamic QR without an expiration (tag 99 sub 01). The current SDK refuses it too (error 45).",
  },
  {
    qr: "00020101021230400014jonhsmith@devb01061234560208Dev Bank520459995303840540410.05802KH5910Jonh Smith6010Phnom Penh62360117INV-2021-07-658220211855123456789917001316257134678276304ED60",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Valid KHQR 3", claim: "valid" }],
    crc: true, ours: false, error: 45, sdk: false,
    why: "Old rule: a dynamic QR without an expiration (tag 99 sub 01). The current SDK refuses it too (error 45).",
  },
  {
    qr: "9917001316257134678276250070201030412340211855854989940117INV-2021-07-658226010PHNOM PENH5910Jonh Smith5802KH540115303840520459992926070412340014jonhsmith@nbcq0102120002016304966B",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 5", claim: "valid" }],
    crc: true, ours: false, error: 36, sdk: true,
    disagree: "payloadFormatNotFirst",
    why: "Tags out of order: the payload format indicator (00) must come first (EMV). The SDK does not check the order.",
  },
  {
    qr: "00020101021126200016coffeeklang@pras63045927",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 2", claim: "invalid" }],
    crc: true, ours: false, error: 5, sdk: false,
  },
  {
    qr: "63046007",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 3", claim: "invalid" }],
    crc: true, ours: false, error: 23, sdk: false,
  },
  {
    qr: "null",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 4", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "''",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 5", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "                   ",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 6", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "ABC",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 7", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "ABC     ",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 8", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "កខគឃង",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 9", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021126150011jonhsmith@nbcq5204599953031165802KH5912Jonh Smith6010Phnom Penh63046D28",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 10", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021126150011jonhsmith@nbcq5204599953031165802KH5912Jonh Smith6010Phnom Penh63046D",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 11", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "01021230190015john_smith@devb52045999530384054035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#06999170013161343857589263044598",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 21", claim: "invalid" }],
    crc: true, ours: false, error: 23, sdk: false,
  },
  {
    qr: "000201010312330190015john_smith@devb63040FC8",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 22", claim: "invalid" }],
    crc: true, ours: false, error: 17, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb5203999630454EF",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 23", claim: "invalid" }],
    crc: true, ours: false, error: 51, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb530384054035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#0699917001316134385758926304F926",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 24", claim: "invalid" }],
    crc: true, ours: false, error: 25, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530488406304FEA6",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 25", claim: "invalid" }],
    crc: true, ours: false, error: 19, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb5204599954035.05802KH5916john smith actor6010Phnom Penh62150111Invoice#0699917001316134385758926304E7DF",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 26", claim: "invalid" }],
    crc: true, ours: false, error: 9, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05803KKH63042FD2",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 27", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05916john smith actor6010Phnom Penh62150111Invoice#06999170013161343857589263040023",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 28", claim: "invalid" }],
    crc: true, ours: false, error: 26, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH5916john smith actor60170123456789012345663040EF3",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 29", claim: "invalid" }],
    crc: true, ours: false, error: 21, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH5916john smith actor600062150111Invoice#0699917001316134385758926304389D",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 30", claim: "invalid" }],
    crc: true, ours: false, error: 27, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH5916john smith actor62150111Invoice#06999170013161343857589263043B26",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 31", claim: "invalid" }],
    crc: true, ours: false, error: 27, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH59307PL7EvxHpgpP4jT4uMgegaYqgv3Ehb6010Phnom Penh6304399D",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 32", claim: "invalid" }],
    crc: true, ours: false, error: 7, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH59006010Phnom Penh630414A7",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 33", claim: "invalid" }],
    crc: true, ours: false, error: 2, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384054035.05802KH6010Phnom Penh62150111Invoice#06999170013161343857589263043518",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 34", claim: "invalid" }],
    crc: true, ours: false, error: 2, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530311654065000.05802KH5910jonh smith6010Phnom Penh622701000313Coffee Klaing0702#29917001316130279727576304D219",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 35", claim: "invalid" }],
    crc: true, ours: false, error: 10, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530311654065000.05802KH5910jonh smith6010Phnom Penh62230109#INV-200303000702#299170013161302797275763049BD2",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 36", claim: "invalid" }],
    crc: true, ours: false, error: 11, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530311654065000.05802KH5910jonh smith6010Phnom Penh62340109#INV-20030313Coffee Klaing07009917001316130279727576304F593",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Invalid KHQR 37", claim: "invalid" }],
    crc: true, ours: false, error: 12, sdk: false,
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530384954035.05802KH5916john smith actor6010Phnom Penh9917001316134385758926304951E",
    sources: [{ ref: "ishinvin/ts-khqr src/__tests__/verify-khqr.test.ts", label: "Valid KHQR 38", claim: "invalid" }],
    crc: true, ours: false, error: 28, sdk: false,
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq52045999530384054031.05802KH5906កូរូណា6010Phnom Penh",
    build: "timestampsAndCrc",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "individual_usd_khmer_name", claim: "valid" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "62210117INV-2021-07-658226010PHNOM PENH5910Jonh Smith5802KH5401153038405204599929180014jonhsmith@nbcq010212000201",
    build: "timestampsAndCrc",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "individual_tags_reversed", claim: "valid" }],
    crc: true, ours: false, error: 36, sdk: true,
    disagree: "payloadFormatNotFirst",
    why: "Tags out of order: the payload format indicator (00) must come first (EMV). The SDK does not check the order.",
  },
  {
    qr: "00020101021129180014jonhsmith@nbcq5204599953031165802KH5910Jonh Smith6010Phnom Penh62290225012345678901234567890123499170013167766094781963040CC8",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "static_with_timestamps", claim: "valid" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021129180014jonhsmith@nbcq5204599953031165802KH5910Jonh Smith6009Siam Reap64280002km0108ចន ស្មីន0206សៀមរាប99170013168733740175863047488",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "static_with_language_template", claim: "valid" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "empty_string", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "ABC         ",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "too_short_with_spaces", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021230410015john_smith@devb01061234560208Dev Bank52055999153038405405100.05802KH5910John Smith6010PHNOM PENH62530106#123450211855122334550311Coffee Shop0709Cashier_19917001316262478678616304954C",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "mcc_too_long", claim: "invalid" }],
    crc: true, ours: false, error: 18, sdk: false,
  },
  {
    qr: "00020101021230410015john_smith@devb01061234560208Dev Bank5204599953038405405100.05802KH5910John Smith6010PHNOM PENH62740127#123456789012345678901234560211855122334550311Coffee Shop0709Cashier_199170013162624810862363040A18",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "bill_number_too_long", claim: "invalid" }],
    crc: true, ours: false, error: 10, sdk: false,
  },
  {
    qr: "00020101021230410015john_smith@devb01061234560208Dev Bank5204599953038405405100.05802KH5910John Smith6010PHNOM PENH62730106#123450211855122334550331Coffee Shop123456789012345678900709Cashier_199170013162624818838863046A71",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "store_label_too_long", claim: "invalid" }],
    crc: true, ours: false, error: 11, sdk: false,
  },
  {
    qr: "00020101021230410015john_smith@devb01061234560208Dev Bank5204599953038405405100.05802KH5910John Smith6010PHNOM PENH62760106#123450211855122334550311Coffee Shop0732Cashier_1234567890123456789012349917001316262482295746304F5E3",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "terminal_label_too_long", claim: "invalid" }],
    crc: true, ours: false, error: 12, sdk: false,
  },
  {
    qr: "00020101021229670014jonhsmith@nbcq01331234567890123456789012345678901230208Dev Bank520459995303116540750000.05802KH5910Jonh Smith6009Siam Reap62550117INV-2021-07-658220211855123456780305BKK-107060123459917001316304651886946304E82B",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "account_info_too_long", claim: "invalid" }],
    crc: true, ours: false, error: 35, sdk: false,
  },
  {
    qr: "00020101021229550014jonhsmith@nbcq0233123456789012345678901234567890123520459995303116540750000.05802KH5910Jonh Smith6009Siam Reap62550117INV-2021-07-658220211855123456780305BKK-107060123459917001316304670122756304AE3F",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "acquiring_bank_too_long", claim: "invalid" }],
    crc: true, ours: false, error: 33, sdk: false,
  },
  {
    qr: "0002010102111531197401160052044645410994011112530390010ii_rr@devb01090000123460208Dev Bank520459995303840540105802TH5906សួស្ដី6002PP621502118551234567899170013171221890231163042A5A",
    sources: [{ ref: "ishinvin/go-khqr verify_test.go", label: "upi_not_support_usd", claim: "invalid" }],
    crc: true, ours: false, error: 4, sdk: true,
    disagree: "amountZero",
    why: "Refused for its zero amount (error 4; it also names country TH). The SDK's verify accepts a zero amount and any country.",
  },
  {
    qr: "00020101021130580016cznbkhppxxx@cznb01061007310224KB Kookmin Bank Cambodia5204599953031165802KH6010PHNOM PENH5912Le Pure Cafe62400107#1007310312Le Pure Cafe0709KHM10073199170013163047617398663048FDD",
    sources: [{ ref: "ishinvin/go-khqr decode_test.go", label: "tags_not_in_order", claim: "decodes" }],
    crc: false, ours: false, error: 8, sdk: false,
    fields: {merchantType: "30", bankAccountID: "cznbkhppxxx@cznb", merchantID: "100731", acquiringBank: "KB Kookmin Bank Cambodia", merchantName: "Le Pure Cafe", merchantCity: "PHNOM PENH", billNumber: "#100731", terminalLabel: "KHM100731", creationTimestamp: "1630476173986"},
    why: "The source swapped tags 59 and 60 of a real QR and kept its CRC, so the CRC no longer matches. The restored QR is the next vector.",
  },
  {
    qr: "00020101021130640009khqr@aclb0111855124649060215ACLEDA Bank Plc051385500000019435204593153031165802KH5912KHQR TESTING6010Phnom Penh6102126213020901753577164360002KM0112KHQR TESTING0210Phnom Penh63045451",
    sources: [{ ref: "ishinvin/go-khqr decode_test.go", label: "acleda_khr_with_language", claim: "decodes" }],
    crc: true, ours: true, error: null, sdk: true,
    fields: {bankAccountID: "khqr@aclb", merchantID: "85512464906", acquiringBank: "ACLEDA Bank Plc", merchantCategoryCode: "5931", transactionCurrency: "116", mobileNumber: "017535771", languagePreference: "KM", merchantNameAlternateLanguage: "KHQR TESTING", merchantCityAlternateLanguage: "Phnom Penh"},
  },
  {
    qr: "00020101021129180014jonhsmith@nbcq5204599953031165802KH5910Jonh Smith6010Phnom Penh62260211855123456780807Testing99170013168733590258463047929",
    sources: [{ ref: "ishinvin/go-khqr decode_test.go", label: "individual_with_purpose", claim: "decodes" }],
    crc: true, ours: true, error: null, sdk: true,
    fields: {mobileNumber: "85512345678", purposeOfTransaction: "Testing", creationTimestamp: "1687335902584"},
  },
  {
    qr: "00020101021115231234567812345678901234529180014jonhsmith@nbcq5204599953031165802KH5910Jonh Smith6010Phnom Penh9917001316873161811616304E2DC",
    sources: [{ ref: "ishinvin/go-khqr decode_test.go", label: "individual_with_upi", claim: "decodes" }],
    crc: true, ours: true, error: null, sdk: true,
    fields: {bankAccountID: "jonhsmith@nbcq", merchantName: "Jonh Smith", creationTimestamp: "1687316181161"},
  },
  {
    qr: "00020101021229190015john_smith@devb52045999530311654065000.05802KH5910jonh smith6010Phnom Penh62360109#INV-20030313Coffee Klaing0702#29917001316130279727576304FFFF",
    sources: [{ ref: "ishinvin/go-khqr decode_test.go", label: "lenient_crc", claim: "decodes" }],
    crc: false, ours: false, error: 8, sdk: false,
    why: "Wrong CRC (FFFF): the source's decoder does not check it.",
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq52045999530311654035005802KH5910Jonh Smith6010PHNOM PENH99170013173949577872263046894",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/common/mod.rs", label: "INDIVIDUAL_KHR_500", claim: "valid" }],
    crc: true, ours: false, error: 45, sdk: false,
    fields: {transactionAmount: "500", creationTimestamp: "1739495778722"},
    why: "Old rule: a dynamic QR without an expiration (tag 99 sub 01). The current SDK refuses it too (error 45).",
  },
  {
    qr: "00020101021130400014jonhsmith@nbcq01061234560208Dev Bank5204599953031165802KH5910Jonh Smith6009Siem Reap6215021185512345678991700131739495778722630433E1",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/common/mod.rs", label: "MERCHANT_KHR", claim: "valid" }],
    crc: true, ours: true, error: null, sdk: true,
    fields: {merchantType: "30", merchantID: "123456", acquiringBank: "Dev Bank", mobileNumber: "85512345678", transactionAmount: null},
  },
  {
    qr: "00020101021230510016abaakhppxxx@abaa01151250212145328460208ABA Bank52045987530311654031005802KH5925OLD ME 25 CHAR WINNER IP26010Phnom Penh62570115MC-REF-KH-1500068340010PAYWAY@ABA0208104514230604A2279934001317598053453370113175980552533763049FBD",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/common/mod.rs", label: "ABA_MERCHANT", claim: "valid" }],
    crc: true, ours: false, error: null, sdk: false,
    fields: {bankAccountID: "abaakhppxxx@abaa", merchantID: "125021214532846", acquiringBank: "ABA Bank", merchantCategoryCode: "5987", merchantName: "OLD ME 25 CHAR WINNER IP2", billNumber: "MC-REF-KH-15000", creationTimestamp: "1759805345337", expirationTimestamp: "1759805525337"},
    why: "Expired: its expiration has passed since the source's test was written; decode still reads it.",
  },
  {
    qr: "00020101021229130009shop@aclb5204599953031165402105802KH5904Shop6010Phnom Penh5303840630447A5",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "DUPLICATE_CURRENCY", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021129150011victim@aclb30170013attacker@aclb5204599953031165802KH5904Shop6010Phnom Penh63048DE9",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "BOTH_ACCOUNT_TAGS", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: true,
    disagree: "bothAccountTemplates",
    why: "Both tag 29 and tag 30: which account is paid is ambiguous, so it is refused. The SDK accepts it.",
  },
  {
    qr: "00020101021229350014jonhsmith@nbcq0013attacker@aclb52045999530311654035005802KH5910Jonh Smith6010PHNOM PENH6304A0C8",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "DUPLICATE_ACCOUNT_SUBTAG", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq52045999530311654041.005802KH5910Jonh Smith6010PHNOM PENH6304CA0662160512SMUGGLED-REF1501X6304A4FD",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "TWO_CHECKSUMS", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "0002010102111510UPI-12345629130009shop@aclb5204599953031165802KH5904Shop6010Phnom Penh",
    build: "crc",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "a_unionpay_merchant_account_is_decoded", claim: "decodes" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021129130009shop@aclb5204599953031165802KH5904Shop6010Phnom Penh8004TEST",
    build: "crc",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "an_unknown_top_level_tag_is_kept", claim: "decodes" }],
    crc: true, ours: false, error: 8, sdk: true,
    disagree: "unreservedTemplateForm",
    why: "Tag 80 is an EMV unreserved template whose value must be data objects; \"TEST\" is not. The SDK skips it.",
  },
  {
    qr: "00020101021129130009shop@aclb5204599953031165802KH5904Shop6010Phnom Penh8004ONE18004TWO2",
    build: "crc",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "a_repeated_unknown_tag_is_still_tolerated", claim: "decodes" }],
    crc: true, ours: false, error: 8, sdk: false,
    why: "Tag 80 twice, and neither is a template of data objects: refused.",
  },
  {
    qr: "00020101021129130009shop@aclb5204599953031165802KH5904Shop6010Phnom Penh991700131739495778722",
    build: "crc",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "a_timestamp_must_be_digits (digits)", claim: "decodes" }],
    crc: true, ours: true, error: null, sdk: true,
  },
  {
    qr: "00020101021129130009shop@aclb5204599953031165802KH5904Shop6010Phnom Penh99170013+173949577872",
    build: "crc",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "a_timestamp_must_be_digits (signed)", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: true,
    disagree: "timestampNotDigits",
    why: "A timestamp template (tag 99, sub 00 only) whose creation time is not digits: refused. The SDK ignores tag 99 on a static QR.",
  },
  {
    qr: "0002010102115204599953031165802KH5904Shop6010Phnom Penh",
    build: "crc",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "a_payload_without_an_account_template_is_rejected", claim: "invalid" }],
    crc: true, ours: false, error: 5, sdk: false,
  },
  {
    qr: "00020101021229130009shop@aclb52045999530384054041.001508😀😀😀😀540420005802KH5904Shop6010Phnom Penh",
    build: "crc",
    sources: [{ ref: "tangheng05/khqr-rs khqr-core/tests/decoder.rs", label: "utf16_lengths_leave_no_room_for_a_second_reading", claim: "invalid" }],
    crc: true, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021229180014your_name@bank520459995303116540498005802KH5909Your Name6010Phnom Penh62510109TRX01234502090123456780311Phsar Thmei0706POS-01993400131773894603019011317738947758196304A5A3",
    sources: [{ ref: "Jumnert/kotlin-khqr src/test/kotlin/dev/khqr/Fixtures.kt", label: "GOLDEN_QR", claim: "valid" }],
    crc: true, ours: false, error: null, sdk: false,
    fields: {transactionAmount: "9800", billNumber: "TRX012345", mobileNumber: "012345678", storeLabel: "Phsar Thmei", terminalLabel: "POS-01", expirationTimestamp: "1773894775819"},
    why: "Expired: its expiration has passed since the source's test was written; decode still reads it.",
  },
  {
    qr: "00020101021129120008test@dev5204599953031165802KH5913Test Merchant6010Phnom Penh63048C7E",
    sources: [{ ref: "mrrhak/khqr_sdk test/khqr_sdk_test.dart", label: "verify individual qr code", claim: "valid" }],
    crc: true, ours: true, error: null, sdk: true,
    fields: {merchantType: "29", bankAccountID: "test@dev", merchantName: "Test Merchant", transactionAmount: null},
  },
  {
    qr: "00020101021130340008test@dev01061234560208Dev Bank5204599953031165802KH5913Test Merchant6010Phnom Penh6304BCB9",
    sources: [{ ref: "mrrhak/khqr_sdk test/khqr_sdk_test.dart", label: "verify merchant qr code", claim: "valid" }],
    crc: true, ours: true, error: null, sdk: true,
    fields: {merchantType: "30", merchantID: "123456", acquiringBank: "Dev Bank"},
  },
  {
    qr: "00020101021229180014jonhsmith@nbcq5204599953031165802KH5910Jonh Smith6010Phnom Penh6215021185512345678",
    sources: [{ ref: "VandyTheCoder/bakong-khqr-ruby spec/bakong/khqr/decode_spec.rb", label: "decode_non_khqr payload", claim: "emv" }],
    crc: false, ours: false, error: 24, sdk: false,
  },
  {
    qr: "INVALID_QR_FORMAT",
    sources: [{ ref: "Manethpak/khqr-sdk src/qr/core/tests/verify-string.spec.ts", label: "Verify detects invalid payload format", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00XX1234",
    sources: [{ ref: "Manethpak/khqr-sdk src/qr/core/tests/verify-string.spec.ts", label: "Verify detects QR with invalid length encoding", claim: "invalid" }],
    crc: false, ours: false, error: 8, sdk: false,
  },
  {
    qr: "00020101021130580016cznbkhppxxx@cznb01061007310224KB Kookmin Bank Cambodia5204599953031165802KH5912Le Pure Cafe6010PHNOM PENH62400107#1007310312Le Pure Cafe0709KHM10073199170013163047617398663048FDD",
    sources: [{ ref: "ishinvin/go-khqr decode_test.go", label: "tags_not_in_order, with tags 59/60 put back in order (the source's CRC 8FDD then matches)", claim: "decodes" }],
    crc: true, ours: true, error: null, sdk: true,
    fields: {merchantType: "30", bankAccountID: "cznbkhppxxx@cznb", merchantID: "100731", acquiringBank: "KB Kookmin Bank Cambodia", merchantName: "Le Pure Cafe", merchantCity: "PHNOM PENH", storeLabel: "Le Pure Cafe", creationTimestamp: "1630476173986"},
  },
];
