// Hostile JSON values for the fuzz suites. A value may hold raw JSON tokens (`{ $raw: "1e400" }`) that
// JSON.stringify cannot produce: number literals beyond double range, deep nesting written out as text.
import fc from "fast-check";

export interface Raw {
  $raw: string;
}
export type J = null | boolean | number | string | Raw | J[] | { [k: string]: J };

export const raw = (text: string): Raw => ({ $raw: text });
const isRaw = (v: unknown): v is Raw =>
  typeof v === "object" &&
  v !== null &&
  !Array.isArray(v) &&
  Object.keys(v).length === 1 &&
  typeof (v as Raw).$raw === "string";

/** JSON text of v; raw tokens are written as they are. */
export function toJson(v: J | undefined): string {
  if (v === undefined) return "null";
  if (isRaw(v)) return v.$raw;
  if (Array.isArray(v)) return `[${v.map(toJson).join(",")}]`;
  if (typeof v === "object" && v !== null)
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "null";
}

/** Number tokens a JSON parser accepts but a double or our rules may not like. */
export const NUMBER_TOKENS = [
  "1e400",
  "-1e400",
  "-0",
  "0",
  "0.0",
  "1E+2",
  "1e-400",
  "5e-324",
  "1.7976931348623157e308",
  "123456789012345678901234567890",
  "0.1",
  "0.001",
  "1.005",
  "9007199254740993",
  "-1",
  "-0.01",
  "1.0",
  "100.00",
  "1e2",
  "2.5e1",
  "0.000001e6",
  "10000000000000",
  "9999999999999.99",
  "1e13",
  "1e-7",
  "0.30000000000000004",
  "4.35",
  "1000000000000000000000",
];

/** Text that is hostile to storage, logs, terminals or parsers. */
export const NASTY_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udc00",
  "\udbff\udfff",
  "\ud83d",
  "\u202eRTL\u202c",
  "\u200f\u200e",
  "مرحبا بالعالم",
  "שלום",
  "😀👍🏽",
  "\ufeff",
  "\u2028\u2029",
  "ក្រុមហ៊ុន",
  "NaN",
  "Infinity",
  "-Infinity",
  "1",
  "1.5",
  "-1",
  "0x10",
  "1e3",
  "null",
  "true",
  "__proto__",
  "constructor",
  "' OR 1=1 --",
  "%s%s%n",
  "<script>alert(1)</script>",
  "../../etc/passwd",
  "\r\nx-injected: 1",
  "\u001b[31mred",
  "\\u0000",
  "${jndi:ldap://x}",
  "ｆｕｌｌｗｉｄｔｈ",
  "A\u030A",
];

export const numberish: fc.Arbitrary<J> = fc.oneof(
  fc.constantFrom(...NUMBER_TOKENS).map(raw),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom("1", "1.50", "-1", "NaN", "1e3", " 1", "1,5", "١٢٣"),
);

export const stringish: fc.Arbitrary<J> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("x", "é", "😀", "\u0000", "\ud800", "ក"), fc.integer({ min: 100, max: 30_000 }))
      .map(([c, n]) => c.repeat(n)),
  },
);

const deepArray = fc.integer({ min: 2, max: 9000 }).map((n) => raw("[".repeat(n) + "]".repeat(n)));
const deepObject = fc.integer({ min: 2, max: 6000 }).map((n) => raw('{"a":'.repeat(n) + "1" + "}".repeat(n)));

const key = fc.oneof(
  fc.string({ unit: "grapheme-ascii", maxLength: 12 }),
  fc.constantFrom(...NASTY_STRINGS),
  fc.string({ unit: "binary", maxLength: 8 }),
);
const leaf: fc.Arbitrary<J> = fc.oneof(stringish, numberish, fc.boolean(), fc.constant(null));

/** Objects where the contract expects key/value pairs (meta, metaData). */
export const objectish: fc.Arbitrary<J> = fc.oneof(
  { weight: 3, arbitrary: fc.dictionary(key, leaf, { maxKeys: 8 }) as fc.Arbitrary<J> },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 6 }), fc.integer(), {
      minKeys: 45,
      maxKeys: 70,
    }) as fc.Arbitrary<J>,
  },
  { weight: 1, arbitrary: fc.record({ a: deepArray }) as fc.Arbitrary<J> },
  { weight: 1, arbitrary: deepObject },
  { weight: 1, arbitrary: fc.integer({ min: 3000, max: 60_000 }).map((n) => ({ pad: "m".repeat(n) })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<J> },
);

/** Any hostile value, for fields of any type. */
export const anyValue: fc.Arbitrary<J> = fc.oneof(
  { weight: 3, arbitrary: leaf },
  { weight: 1, arbitrary: objectish },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 5 }) },
  { weight: 1, arbitrary: deepArray },
);

/** Well-formed, storable text (what a valid request would carry). */
export const safeText = (min: number, max: number) =>
  fc.string({ unit: "grapheme-ascii", minLength: min, maxLength: max }).filter((s) => !s.includes("\u0000"));

/** No unpaired surrogate halves (String.prototype.isWellFormed, without needing the ES2024 lib). */
export const wellFormed = (s: string): boolean =>
  !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

/** Small, valid meta objects. */
export const validMeta: fc.Arbitrary<Record<string, J>> = fc.dictionary(
  fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 10 }).filter((k) => k !== "__proto__"),
  fc.oneof(
    safeText(0, 20),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.string({ unit: "grapheme", maxLength: 10 }).filter((s) => wellFormed(s) && !s.includes("\u0000")),
  ),
  { maxKeys: 5 },
);

/** Broken JSON texts, generic and derived from a valid body's text. */
export function brokenJson(validText: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      "{",
      "}",
      "{'a':1}",
      '{"a":1,}',
      "NaN",
      "undefined",
      "\ufeff{}",
      '{"a":1}garbage',
      "[]]",
      '{"a":"\\x41"}',
      '{"a":"\u0000raw"}',
      '{"a" 1}',
      "{{}}",
      '{"a":01}',
      '{"a":+1}',
      '{"a":.5}',
      '{"a":1.}',
      '{"a":Infinity}',
      '{"a":-NaN}',
      '{"a":"\\ud800"',
      "\u0000",
      "nul",
      "tru",
      '"unterminated',
      '{"a":"\n"}',
    ),
    fc.tuple(validText, fc.nat()).map(([t, n]) => t.slice(0, t.length === 0 ? 0 : n % t.length)),
    fc.tuple(validText, fc.nat(), fc.constantFrom('"', "{", "}", ",", ":", "\\", "\u0000", "]")).map(([t, n, c]) => {
      const i = t.length === 0 ? 0 : n % t.length;
      return t.slice(0, i) + c + t.slice(i);
    }),
    fc.string({ unit: "binary", maxLength: 60 }),
  );
}
