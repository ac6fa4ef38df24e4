import {
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";

/** What a route's body may hold: field name → GraphQL input type. */
export type BodyFields = ReadonlyMap<string, GraphQLInputType>;

/**
 * The fields a REST body may carry, read from the route's GraphQL operation: the fields of the variable the
 * body fills (`bodyVariable`, e.g. `input`), or else the operation's variables themselves.
 */
export function bodyFields(schema: GraphQLSchema, document: DocumentNode, bodyVariable?: string): BodyFields {
  const op = document.definitions.find((d): d is OperationDefinitionNode => d.kind === "OperationDefinition");
  const vars = new Map<string, GraphQLInputType>();
  for (const def of op?.variableDefinitions ?? []) {
    const type = typeFromAST(schema, def.type) as GraphQLInputType | undefined;
    if (type !== undefined) vars.set(def.variable.name.value, type);
  }
  if (bodyVariable === undefined) return vars;
  const t = vars.get(bodyVariable);
  const inner = t !== undefined && isNonNullType(t) ? t.ofType : t;
  if (inner === undefined || !isInputObjectType(inner)) throw new Error(`$${bodyVariable} is not an input object`);
  return new Map(Object.values(inner.getFields()).map((f) => [f.name, f.type]));
}

/**
 * A copy of `body` without the fields the operation does not define, at any depth of input objects and
 * lists (meta and other JSON scalars are values, never looked into). Each dropped field's path is added
 * to `ignored`, with its value. Values the types cannot hold (a string where an object belongs) are left
 * for GraphQL to refuse.
 */
export function dropUnknown(
  body: Record<string, unknown>,
  fields: BodyFields,
  ignored: { path: string[]; value: unknown }[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    const type = fields.get(key);
    if (type === undefined) ignored.push({ path: [key], value: body[key] });
    else out[key] = keepKnown(body[key], type, [key], ignored);
  }
  return out;
}

function keepKnown(
  value: unknown,
  type: GraphQLInputType,
  path: string[],
  ignored: { path: string[]; value: unknown }[],
): unknown {
  const t = isNonNullType(type) ? type.ofType : type;
  if (isListType(t)) {
    return Array.isArray(value)
      ? value.map((v, i) => keepKnown(v, t.ofType, [...path, String(i)], ignored))
      : keepKnown(value, t.ofType, path, ignored);
  }
  if (!isInputObjectType(t) || value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const known = t.getFields();
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (Object.prototype.hasOwnProperty.call(known, key))
      out[key] = keepKnown(v, known[key].type, [...path, key], ignored);
    else ignored.push({ path: [...path, key], value: v });
  }
  return out;
}

/** Values a refusal scan looks at, at most: a body whose dropped fields hold more is refused whole. */
export const REFUSAL_SCAN_MAX_VALUES = 10_000;

/**
 * Paths of every key at or under the dropped fields that `refused` matches (a field naming a target, …), or null
 * when they hold more than REFUSAL_SCAN_MAX_VALUES values: too many to check, so the caller refuses the body
 * rather than let an unchecked rest through. Iterative at any depth; each value remembers only its parent.
 */
export function refusedFields(
  ignored: { path: string[]; value: unknown }[],
  refused: (key: string) => boolean,
): string[] | null {
  const nodes: { key: string; value: unknown; parent: number; root: string[] }[] = ignored.map((i) => ({
    key: i.path[i.path.length - 1],
    value: i.value,
    parent: -1,
    root: i.path,
  }));
  if (nodes.length > REFUSAL_SCAN_MAX_VALUES) return null;
  const hits: number[] = [];
  for (let at = 0; at < nodes.length; at++) {
    const { key, value } = nodes[at];
    if (refused(key)) {
      hits.push(at);
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    const keys = Object.keys(value);
    if (nodes.length + keys.length > REFUSAL_SCAN_MAX_VALUES) return null;
    for (const k of keys) nodes.push({ key: k, value: (value as Record<string, unknown>)[k], parent: at, root: [] });
  }
  return hits.map((at) => {
    const path: string[] = [];
    let i = at;
    for (; nodes[i].parent >= 0; i = nodes[i].parent) path.push(nodes[i].key);
    return [...nodes[i].root, ...path.reverse()].join(".");
  });
}

/**
 * The header names fields by dotted path; characters other than letters, digits, `_` and `-` are %-encoded.
 * A lone surrogate half (valid in a JSON key, not in UTF-8) is named as U+FFFD, as a decoder would show it.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const encodeSegment = (s: string) =>
  encodeURIComponent(s.replace(LONE_SURROGATE, "\ufffd")).replace(
    /[.!'()*~]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );

export const IGNORED_FIELDS_HEADER = "x-ignored-fields";
export const IGNORED_FIELDS_MAX = 1024;

/**
 * `x-ignored-fields`: the dropped paths, sorted and de-duplicated, comma-separated, at most 1 024 characters;
 * when some do not fit, the last item is `+N` (N more not listed). Null when nothing was ignored.
 */
export function ignoredFieldsHeader(paths: string[][]): string | null {
  if (paths.length === 0) return null;
  const names = [...new Set(paths.map((p) => p.map(encodeSegment).join(".")))].sort();
  let value = "";
  for (let i = 0; i < names.length; i++) {
    const next = value === "" ? names[i] : `${value},${names[i]}`;
    const rest = names.length - i - 1;
    // Room is kept for the "+N" item whenever more names follow.
    if (next.length + (rest > 0 ? `,+${rest}`.length : 0) > IGNORED_FIELDS_MAX)
      return value === "" ? `+${names.length}` : `${value},+${names.length - i}`;
    value = next;
  }
  return value;
}
