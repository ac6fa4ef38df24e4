import { registerDecorator, ValidateNested } from "class-validator";
import { Extensions } from "type-graphql";
import { exactDecimal, MAX_AMOUNT } from "../money/money.js";
import { storableJson, storableText, UNSTORABLE } from "./storable.js";

/**
 * The one validation mechanism (docs/decisions/0224-one-validation-mechanism.md): field rules, each a `Check` that
 * returns null when the value is fine, else the field's message (the API's error detail), and every failure answered
 * by the one BAD_USER_INPUT of check.ts with all details. A rule is applied in one of two ways: as a decorator on an
 * input class, next to the field it guards (type-graphql runs them before the resolver: check.ts validateArgument),
 * or, where the rule depends on the operation or on stored state (the operator API's create-or-update inputs), by a
 * `Checker` (checker.ts) calling the same checks. Each rule also checks the value's type: REST bodies reach the same
 * classes as GraphQL variables.
 */
export type Check<T> = (value: unknown, input: T) => string | null;

/** A rule from a check. Several rules on one field report in the order they are written, top first. */
export function FieldRule<T extends object>(name: string, check: Check<T>): PropertyDecorator {
  return (target, property) => {
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value, args) => check(value, args?.object as T) === null,
        defaultMessage: (args) => check(args?.value, args?.object as T) ?? "",
      },
    });
  };
}

/** Applies decorators so that they report top first (TypeScript applies a field's decorators bottom up). */
function inOrder(...rules: PropertyDecorator[]): PropertyDecorator {
  return (target, property) => {
    for (const r of rules) r(target, property);
  };
}

/** One of `values`. */
export function oneOf(values: readonly unknown[], message: string): Check<object> {
  return (v) => (values.includes(v) ? null : message);
}

/** The currencies as ISO 4217 numbers: KHR and USD. */
export const CURRENCY_NUMBERS = [116, 840] as const;
/** A currency as the operator API takes it (merchants, payment-link configurations): its ISO 4217 number. */
export const CURRENCY_NUMBER = oneOf(CURRENCY_NUMBERS, "must be 116 (KHR) or 840 (USD)");

/**
 * The contract's words (an input class's Bounds) for an `amount` whose precision and bound its numeric `currency`
 * decides: when currency is `code`, the amount's extra keywords (a KHR amount is whole: multipleOf 1).
 */
export function amountWhen(code: number, amount: Record<string, unknown>): Record<string, unknown> {
  return {
    if: { properties: { currency: { const: code } }, required: ["currency"] },
    then: { properties: { amount } },
  };
}

/**
 * One of `values`; the contract lists them (enum), and a value of the wrong JSON type is answered with `message`
 * too (`currency: "USD"` hears "must be 840 (USD) or 116 (KHR)", not "must be a whole number").
 */
export function OneOf<T extends object>(values: readonly unknown[], message: string): PropertyDecorator {
  return inOrder(FieldRule<T>("oneOf", oneOf(values, message)), Bounds({ enum: [...values] }), TypeMessage(message));
}

/**
 * A money amount: a JSON number, positive, an exact decimal with at most `decimals(input)` places (the
 * currency decides), then `more` for what the area adds (a minimum, the QR's field width).
 */
export function ExactAmount<T extends object>(opts: {
  decimals(input: T): number;
  more?(decimal: string, input: T): string | null;
  /** The least amount `more` admits, whatever the currency (the contract's minimum instead of "greater than 0"). */
  minimum?: number;
}): PropertyDecorator {
  return inOrder(
    FieldRule<T>("exactAmount", (v, input) => {
      const d = exactDecimal(v, opts.decimals(input));
      if ("error" in d) return d.error;
      return opts.more?.(d.value, input) ?? null;
    }),
    Bounds({
      ...(opts.minimum === undefined ? { exclusiveMinimum: 0 } : { minimum: opts.minimum }),
      maximum: MAX_AMOUNT,
    }),
  );
}

/** A whole number from `min` to `max`; absent is fine when `optional`. */
export function wholeNumber(min: number, max: number, message: string, optional = false): Check<object> {
  return (v) => {
    if (optional && (v === undefined || v === null)) return null;
    return typeof v === "number" && Number.isInteger(v) && v >= min && v <= max ? null : message;
  };
}

export function WholeNumber<T extends object>(
  min: number,
  max: number,
  message: string,
  optional = false,
): PropertyDecorator {
  return inOrder(
    FieldRule<T>("wholeNumber", wholeNumber(min, max, message, optional)),
    Bounds({ type: "integer", minimum: min, maximum: max }),
  );
}

/** A string matching `pattern` (any string without one); `message` for anything else, a non-string too. */
export function matches(message: string, pattern = /^/): Check<object> {
  return (v) => (typeof v === "string" && pattern.test(v) ? null : message);
}

/** A check with the JSON Schema keywords that say the same (a route's scalar arguments: RouteDoc.argBounds). */
export type SchemaCheck = Check<object> & { schema: Record<string, unknown> };

/** A string matching `pattern` (no flags: its source is the contract's pattern), as a check and a schema. */
export function patterned(message: string, pattern: RegExp): SchemaCheck {
  if (pattern.flags !== "") throw new Error("a contract pattern takes no flags");
  return Object.assign(matches(message, pattern), { schema: { pattern: pattern.source } });
}

/** The longest identifier a caller may send to look a transaction up. */
export const IDENTIFIER_MAX = 100;
/** An identifier a caller sends to look a transaction up: 1 to 100 characters. */
export const IDENTIFIER: SchemaCheck = Object.assign(
  matches("must be a non-empty string", new RegExp(`^[\\s\\S]{1,${IDENTIFIER_MAX}}$`)),
  { schema: { minLength: 1, maxLength: IDENTIFIER_MAX } },
);

/** A Date that is a real instant. */
export const DATE_TIME: Check<object> = (v) =>
  v instanceof Date && !Number.isNaN(v.getTime()) ? null : "must be a date-time";

export interface TextOptions {
  max: number;
  required?: boolean;
  pattern?: RegExp;
  patternMessage?: string;
  /** Off where the pattern already admits only storable characters. */
  storable?: boolean;
  /** "" is no value (the operator API: "" clears an optional field), not text checked against the pattern. */
  emptyIsAbsent?: boolean;
}

const absentText = (v: unknown, opts: TextOptions): boolean =>
  v === undefined || v === null || (v === "" && (opts.required === true || opts.emptyIsAbsent === true));

/** Text the database can store, at most `max` characters, optionally matching `pattern`. */
export function text(opts: TextOptions): Check<object> {
  return (v) => {
    if (absentText(v, opts)) return opts.required ? "is required" : null;
    if (typeof v !== "string") return "must be a string";
    if (v.length > opts.max) return `must be at most ${opts.max} characters`;
    if (opts.storable !== false && !storableText(v)) return UNSTORABLE;
    if (opts.pattern && !opts.pattern.test(v)) return opts.patternMessage ?? "has an invalid format";
    return null;
  };
}

/** The text rule, and the contract's minLength (required), maxLength and pattern from the same options. */
export function Text<T extends object>(opts: TextOptions): PropertyDecorator {
  return inOrder(
    FieldRule<T>("text", text(opts)),
    Bounds({
      ...(opts.required ? { minLength: 1 } : {}),
      maxLength: opts.max,
      ...(opts.pattern ? { pattern: opts.pattern.source } : {}),
    }),
  );
}

/** The limits of `meta` and `metaData`. */
export const META_MAX_BYTES = 4096;
export const META_MAX_KEYS = 50;

function jsonBytes(v: object): number {
  try {
    return Buffer.byteLength(JSON.stringify(v));
  } catch {
    // Only nesting thousands of levels deep overflows the serializer, and each level costs ≥ 2 bytes: far over the limit.
    return Infinity;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Optional key/value pairs returned unchanged (meta): an object, at most 4 KiB as JSON and 50 keys, every
 * key and string storable. Size and key count are reported together, as two details.
 */
export function JsonObject<T extends object>(): PropertyDecorator {
  const absent = (v: unknown) => v === undefined || v === null;
  return inOrder(
    Bounds({ maxProperties: META_MAX_KEYS }),
    FieldRule<T>("jsonObject", (v) => {
      if (absent(v)) return null;
      if (!isObject(v)) return "must be an object of key/value pairs";
      return jsonBytes(v) > META_MAX_BYTES ? `must be at most ${META_MAX_BYTES} bytes as JSON` : null;
    }),
    FieldRule<T>("jsonObjectKeys", (v) =>
      isObject(v) && Object.keys(v).length > META_MAX_KEYS ? `must have at most ${META_MAX_KEYS} keys` : null,
    ),
    FieldRule<T>("jsonObjectStorable", (v) =>
      isObject(v) && jsonBytes(v) <= META_MAX_BYTES && !storableJson(v) ? UNSTORABLE : null,
    ),
  );
}

/** An input object inside this one (its own rules apply; details are named by path, `qrData.orderId`). */
export function Nested(): PropertyDecorator {
  return ValidateNested({ each: true });
}

/** Each field's (or input class's) JSON Schema keywords so far: several rules on one field add theirs to one object. */
const boundsOf = new WeakMap<object, Map<string | symbol, Record<string, unknown>>>();

/**
 * JSON Schema keywords (maxLength, pattern, enum, minimum…) the REST contract shows for a field (docs/decisions/
 * 0247-the-contract-states-every-input-rule.md): the OpenAPI
 * document (src/rest/openapi.ts) adds them to the field's schema. The rules above write theirs from the same
 * constants they check, so that the contract says what the code checks; write any other from the rule's constants
 * too. On an input class (a class decorator), keywords for the whole object: a rule that relates fields
 * (`if`/`then`: a KHR amount is whole). Several on one field are merged (type-graphql keeps only the last
 * extension of a name, so one object is registered per field and filled).
 */
export function Bounds(schema: Record<string, unknown>): PropertyDecorator & ClassDecorator {
  return ((target: object, property?: string | symbol) => {
    const owner = property === undefined ? target : target.constructor;
    const key = property ?? "";
    let fields = boundsOf.get(owner);
    if (fields === undefined) boundsOf.set(owner, (fields = new Map()));
    let bounds = fields.get(key);
    if (bounds === undefined) {
      fields.set(key, (bounds = {}));
      const ext = Extensions({ jsonSchema: bounds });
      if (property === undefined) (ext as ClassDecorator)(target as () => void);
      else (ext as PropertyDecorator)(target, property);
    }
    Object.assign(bounds, schema);
  }) as PropertyDecorator & ClassDecorator;
}

/**
 * What a REST body hears when a field's value is not even of the field's JSON type (rest/body-types.ts), where the
 * rule has better words than the type's ("must be 840 (USD) or 116 (KHR)" rather than "must be a whole number").
 */
export function TypeMessage(message: string): PropertyDecorator {
  return Extensions({ typeMessage: message }) as PropertyDecorator;
}
