import { isInputObjectType, isListType, isNonNullType, type GraphQLInputType, type GraphQLResolveInfo } from "graphql";
import { AppError } from "../errors.js";
import { holdsNul, NUL_MESSAGE } from "../validation/storable.js";

/**
 * Operations that judge a string instead of storing or looking it up: any string gets an answer there
 * (docs/decisions/0017-qr-verify-and-decode-bodies.md).
 */
const JUDGED_TEXT = new Set(["verifyQr", "decodeQr"]);

/** Path of the first argument value holding U+0000, following input types down to their scalars (meta is one field). */
export function nulPath(value: unknown, type: GraphQLInputType, path: string): string | null {
  const t = isNonNullType(type) ? type.ofType : type;
  if (value === null || value === undefined) return null;
  if (isListType(t)) {
    if (!Array.isArray(value)) return null;
    for (let i = 0; i < value.length; i++) {
      const p = nulPath(value[i], t.ofType, `${path}.${i}`);
      if (p !== null) return p;
    }
    return null;
  }
  if (isInputObjectType(t)) {
    const fields = t.getFields();
    for (const [k, x] of Object.entries(value as Record<string, unknown>)) {
      const p = fields[k] ? nulPath(x, fields[k].type, `${path}.${k}`) : null;
      if (p !== null) return p;
    }
    return null;
  }
  return holdsNul(value) ? path : null;
}

/**
 * PostgreSQL cannot hold U+0000 in text, and the driver cannot even send it as a parameter: a NUL in an
 * argument of any root operation (an id, a name, a URL, meta) is refused here as BAD_USER_INPUT naming the
 * field, instead of failing in the database as INTERNAL. Field paths are relative to `input`, as REST bodies are.
 * Called for root fields only (graphql/field-gate.ts): it was a type-graphql global middleware, which made every
 * field of every answer asynchronous to look at the roots alone.
 */
export function refuseNul(args: Record<string, unknown>, info: GraphQLResolveInfo): void {
  if (JUDGED_TEXT.has(info.fieldName)) return;
  for (const def of info.parentType.getFields()[info.fieldName]?.args ?? []) {
    const path = nulPath(args[def.name], def.type, def.name);
    if (path === null) continue;
    const field = path.startsWith("input.") ? path.slice(6) : path;
    throw new AppError("BAD_USER_INPUT", `${field} ${NUL_MESSAGE}`, [{ field, message: NUL_MESSAGE }]);
  }
}
