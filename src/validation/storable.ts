/**
 * The one rule for text the database must store: PostgreSQL text and json cannot hold U+0000, and a lone
 * UTF-16 surrogate half has no UTF-8 form. Every guard (GraphQL arguments, SQL parameters, meta) asks here.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const NUL_MESSAGE = "must not contain NUL characters (U+0000)";
export const UNSTORABLE = "must not contain NUL characters or unpaired surrogates (they cannot be stored)";

export function holdsNulText(s: string): boolean {
  return s.includes("\u0000");
}

export function storableText(s: string): boolean {
  return !holdsNulText(s) && !LONE_SURROGATE.test(s);
}

/** Whether `test` holds for every key and string of a JSON value (iterative: the value may be deep). */
function everyText(value: unknown, test: (s: string) => boolean): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (!test(v)) return false;
    } else if (Array.isArray(v)) stack.push(...v);
    else if (typeof v === "object" && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (!test(k)) return false;
        stack.push(x);
      }
    }
  }
  return true;
}

/** Some key or string of a JSON value holds U+0000. */
export function holdsNul(value: unknown): boolean {
  return !everyText(value, (s) => !holdsNulText(s));
}

/** Every key and string of a JSON value can be stored. */
export function storableJson(value: unknown): boolean {
  return everyText(value, storableText);
}
