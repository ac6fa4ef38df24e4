import { registerDecorator, ValidateNested } from "class-validator";
import { Extensions } from "type-graphql";
import { exactDecimal } from "../money/money.js";
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

/** A currency as the operator API takes it (merchants, payment-link configurations): its ISO 4217 number. */
export const CURRENCY_NUMBER = oneOf([116, 840], "must be 116 (KHR) or 840 (USD)");

export function OneOf<T extends object>(values: readonly unknown[], message: string): PropertyDecorator {
  return FieldRule<T>("oneOf", oneOf(values, message));
}

/**
 * A money amount: a JSON number, positive, an exact decimal with at most `decimals(input)` places (the
 * currency decides), then `more` for what the area adds (a minimum, the QR's field width).
 */
export function ExactAmount<T extends object>(opts: {
  decimals(input: T): number;
  more?(decimal: string, input: T): string | null;
}): PropertyDecorator {
  return FieldRule<T>("exactAmount", (v, input) => {
    const d = exactDecimal(v, opts.decimals(input));
    if ("error" in d) return d.error;
    return opts.more?.(d.value, input) ?? null;
  });
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
  return FieldRule<T>("wholeNumber", wholeNumber(min, max, message, optional));
}

/** A string matching `pattern` (any string without one); `message` for anything else, a non-string too. */
export function matches(message: string, pattern = /^/): Check<object> {
  return (v) => (typeof v === "string" && pattern.test(v) ? null : message);
}

/** An identifier a caller sends to look a transaction up: 1 to 100 characters. */
export const IDENTIFIER = matches("must be a non-empty string", /^[\s\S]{1,100}$/);

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

export function Text<T extends object>(opts: TextOptions): PropertyDecorator {
  return FieldRule<T>("text", text(opts));
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

/**
 * JSON Schema keywords (maxLength, pattern, enum, minimum…) the REST contract shows for a field: the OpenAPI
 * document (src/rest/openapi.ts) adds them to the field's schema. Write them from the same constants as the
 * field's rule, so that the contract says what the code checks.
 */
export function Bounds(schema: Record<string, unknown>): PropertyDecorator {
  return Extensions({ jsonSchema: schema }) as PropertyDecorator;
}
