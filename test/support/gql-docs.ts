// GraphQL documents for the fuzz suite, built from the checked-in schema.graphql (not from src): a
// recipe chosen by fast-check (family + PRNG seed + sizes) is turned into text deterministically, so a
// fast-check seed replays the same documents.
import { readFileSync } from "node:fs";
import {
  buildSchema,
  Lexer,
  Source,
  TokenKind,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  parse,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";

export const SCHEMA = buildSchema(readFileSync("schema.graphql", "utf8"));

/** Operations only the admin token may use (the dashboard's API). */
export const ADMIN_FIELDS = new Set([
  "merchants",
  "merchantRules",
  "gatewayConfigs",
  "linkConfigs",
  "apiKeys",
  "webhookEndpoints",
  "webhookDeliveries",
  "createMerchant",
  "updateMerchant",
  "createGatewayConfig",
  "updateGatewayConfig",
  "createLinkConfig",
  "updateLinkConfig",
  "createApiKey",
  "revokeApiKey",
  "createWebhookEndpoint",
  "updateWebhookEndpoint",
  "rotateWebhookSecret",
  "redeliverWebhook",
]);

/** mulberry32: a small deterministic PRNG. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
}

const WEIRD_STRINGS = [
  "",
  "x",
  "\\u0000",
  "a\\u0000b",
  "\\ud800",
  "\\udc00x",
  "\\u202eRTL",
  "😀",
  "ក្រុមហ៊ុន",
  "txn_nope",
  "' OR 1=1 --",
  "${x}",
  "%00",
  "\\\\",
  '\\"',
  "__proto__",
  "eyJ0eXAiOiJKV1QifQ",
  "ct_abc.def",
];
const WEIRD_NUMBERS = [
  "0",
  "-1",
  "1",
  "2147483647",
  "2147483648",
  "-2147483649",
  "1e400",
  "-1e400",
  "1.5",
  "100",
  "101",
  "99999999999999999999",
  "0.0",
  "1e-400",
  "5e-324",
];

/** A GraphQL literal: mostly of the right type, sometimes not. */
function literal(r: Rng, type: GraphQLInputType, depth = 0): string {
  if (r.chance(0.05) || depth > 4)
    return r.pick([
      `"${r.pick(WEIRD_STRINGS)}"`,
      r.pick(WEIRD_NUMBERS),
      "null",
      "true",
      "[]",
      "{}",
      `[${r.pick(WEIRD_NUMBERS)}]`,
      "ENUM_NOPE",
    ]);
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner))
    return `[${Array.from({ length: r.int(0, 3) }, () => literal(r, inner.ofType, depth + 1)).join(", ")}]`;
  if (isEnumType(inner)) return r.pick(inner.getValues()).name;
  if (isInputObjectType(inner)) {
    const fields = Object.values(inner.getFields()).filter((f) => isNonNullType(f.type) || r.chance(0.5));
    const extra = r.chance(0.1) ? [`nope: 1`] : [];
    return `{${[...fields.map((f) => `${f.name}: ${literal(r, f.type, depth + 1)}`), ...extra].join(", ")}}`;
  }
  if (isScalarType(inner)) {
    switch (inner.name) {
      case "Int":
        return r.pick(["1", "20", "100", "0", "-5", "101", "2147483648"]);
      case "Float":
        return r.pick(["1", "10.5", "0.01", "180000", "60000", "1e400", "-3", "1e13", "100000"]);
      case "Boolean":
        return r.pick(["true", "false"]);
      case "ID":
        return `"${r.pick(["txn_doesnotexist0", "txn_", "evt_x", "key_x", "whe_x", "mer_x", ...WEIRD_STRINGS])}"`;
      case "DateTimeISO":
        return `"${r.pick(["2026-01-01T00:00:00Z", "not a date", "2026-13-45T99:99:99Z", ""])}"`;
      case "JSONObject":
        return r.pick(["{}", "{a: 1}", `{k: "\\u0000"}`, "{a: {b: {c: [1, 2, {d: null}]}}}", "[]", "1", `"s"`]);
      default:
        return `"${r.pick(WEIRD_STRINGS)}"`;
    }
  }
  return "null";
}

interface Built {
  query: string;
  variables: Record<string, unknown>;
}

/** A random selection set on `type`, `levels` deep at most. */
function selection(
  r: Rng,
  type: GraphQLObjectType,
  levels: number,
  vars: Map<string, { type: string; value: unknown }>,
  isRoot: boolean,
): string {
  const fields = Object.values(type.getFields());
  const n = isRoot ? r.int(1, 4) : r.int(1, 5);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    if (r.chance(0.05)) {
      parts.push(r.pick(["nope", "__typename", "__schema { queryType { name } }", "password", "id"]));
      continue;
    }
    const f: GraphQLField<unknown, unknown> = r.pick(fields);
    const alias = r.chance(0.15) ? `a${r.int(0, 9999)}: ` : "";
    const args: string[] = [];
    for (const a of f.args) {
      if (!isNonNullType(a.type) && r.chance(0.5)) continue;
      if (r.chance(0.15)) {
        const name = `v${vars.size}`;
        const declared = r.chance(0.8) ? String(a.type) : r.pick(["String", "Int!", "[ID]", "Boolean!", "JSONObject"]);
        const value = r.chance(0.7)
          ? jsonFor(r, a.type)
          : r.pick([null, 1, "x", [1], { a: 1 }, true, "\u0000", "x".repeat(r.int(1, 3000))]);
        vars.set(name, { type: declared, value });
        args.push(`${a.name}: $${name}`);
      } else args.push(`${a.name}: ${literal(r, a.type)}`);
    }
    if (r.chance(0.05)) args.push(`nope: 1`);
    const named = getNamedType(f.type);
    const argText = args.length ? `(${args.join(", ")})` : "";
    if (isObjectType(named)) {
      const inner = levels > 1 ? selection(r, named, levels - 1, vars, false) : "__typename";
      const body = r.chance(0.1) ? `... on ${named.name} { ${inner} }` : inner;
      parts.push(`${alias}${f.name}${argText} { ${body} }`);
    } else parts.push(`${alias}${f.name}${argText}${r.chance(0.03) ? " { nope }" : ""}`);
  }
  return parts.join(" ");
}

/** A JSON variable value for an input type (mostly right). */
function jsonFor(r: Rng, type: GraphQLInputType, depth = 0): unknown {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (depth > 4) return null;
  if (isListType(inner)) return Array.from({ length: r.int(0, 3) }, () => jsonFor(r, inner.ofType, depth + 1));
  if (isEnumType(inner)) return r.chance(0.9) ? r.pick(inner.getValues()).name : "NOPE";
  if (isInputObjectType(inner)) {
    const out: Record<string, unknown> = {};
    for (const f of Object.values(inner.getFields()))
      if (isNonNullType(f.type) || r.chance(0.5)) out[f.name] = jsonFor(r, f.type, depth + 1);
    if (r.chance(0.1)) out.nope = 1;
    return out;
  }
  if (isScalarType(inner)) {
    switch (inner.name) {
      case "Int":
        return r.pick([1, 20, 100, 0, -1, 2 ** 31, 1.5, "1"]);
      case "Float":
        return r.pick([1, 10.5, 0.01, 60000, 180000, 1e13, -1, "1", 1e-300]);
      case "Boolean":
        return r.pick([true, false, "true"]);
      case "JSONObject":
        return r.pick([
          {},
          { a: 1 },
          { k: "\u0000" },
          { "\ud800": 1 },
          [],
          "s",
          { deep: JSON.parse("[".repeat(3000) + "]".repeat(3000)) },
        ]);
      default:
        return r.pick(["txn_doesnotexist0", "", "\u0000", "\ud800", "x".repeat(r.int(1, 100)), 5, null]);
    }
  }
  return null;
}

export type Family =
  | "walk"
  | "aliases"
  | "sameName"
  | "deepIntrospection"
  | "deepInvalid"
  | "deepInline"
  | "deepLiteral"
  | "fragments"
  | "ops"
  | "directives"
  | "strings"
  | "numbers";
export const FAMILIES: Family[] = [
  "walk",
  "aliases",
  "sameName",
  "deepIntrospection",
  "deepInvalid",
  "deepInline",
  "deepLiteral",
  "fragments",
  "ops",
  "directives",
  "strings",
  "numbers",
];

/** The document of a recipe. `size` scales the families that repeat something. */
export function build(family: Family, seed: number, size: number): Built {
  const r = new Rng(seed);
  const vars = new Map<string, { type: string; value: unknown }>();
  let body: string;
  let opType = "query";
  let extraDefs = "";
  switch (family) {
    case "walk": {
      opType = r.chance(0.75) ? "query" : "mutation";
      const root = (opType === "query" ? SCHEMA.getQueryType() : SCHEMA.getMutationType()) as GraphQLObjectType;
      body = selection(r, root, r.int(1, 8), vars, true);
      break;
    }
    case "aliases":
      body = Array.from({ length: 100 + size * 20 }, (_, i) =>
        r.chance(0.5) ? `a${i}: __typename` : `a${i}: viewer { type keyKind }`,
      ).join(" ");
      break;
    case "sameName":
      body = Array.from({ length: 100 + size * 20 }, () =>
        r.pick(["viewer { type }", "__typename", "viewer { keyKind type }"]),
      ).join(" ");
      break;
    case "deepIntrospection": {
      const n = r.int(1, 20);
      body = `__type(name: "Query") { ${"fields { type { ".repeat(n)}name${" } }".repeat(n)} }`;
      break;
    }
    case "deepInvalid": {
      const n = 2 + size;
      body = `${"viewer { ".repeat(n)}type${" }".repeat(n)}`;
      break;
    }
    case "deepInline": {
      const n = 2 + size * 40;
      body = `${"... on Query { ".repeat(n)}viewer { type }${" }".repeat(n)}`;
      break;
    }
    case "deepLiteral": {
      const n = 2 + size * 40;
      body = `transactions(filter: { search: ${"[".repeat(n)}"x"${"]".repeat(n)} }) { edges { cursor } }`;
      break;
    }
    case "fragments": {
      const kind = r.int(0, 5);
      if (kind === 0) {
        body = "...A";
        extraDefs = "fragment A on Query { ...B viewer { type } } fragment B on Query { ...A }";
      } else if (kind === 1) {
        body = "...Self";
        extraDefs = "fragment Self on Query { ...Self }";
      } else if (kind === 2) {
        // A doubling chain: F_k spreads F_(k-1) twice (the "billion laughs" of GraphQL).
        const k = 2 + (size % 30);
        body = `...F${k}`;
        extraDefs = Array.from({ length: k + 1 }, (_, i) =>
          i === 0
            ? "fragment F0 on Query { __typename viewer { type } }"
            : `fragment F${i} on Query { ...F${i - 1} ...F${i - 1} }`,
        ).join(" ");
      } else if (kind === 3) {
        body = "...Missing viewer { type }";
      } else if (kind === 4) {
        body = "...OnViewer";
        extraDefs = "fragment OnViewer on Viewer { type }";
      } else {
        body = "viewer { ...V }";
        extraDefs = "fragment V on Viewer { type keyKind } fragment Unused on Query { __typename }";
      }
      break;
    }
    case "ops": {
      const kind = r.int(0, 6);
      const q = [
        "",
        "   ",
        "# only a comment",
        "query A { viewer { type } } query A { viewer { type } }",
        "query A { viewer { type } } query B { __typename }",
        "{ viewer { type } } query B { __typename }",
        "subscription { transactionUpdates { id } }",
        "fragment F on Query { __typename }",
        "query { viewer { type } }}",
        "query($a: Int, $a: Int) { viewer { type } }",
        "query Ünïcode { __typename }",
      ][kind + r.int(0, 4)];
      return { query: q, variables: {} };
    }
    case "directives":
      body = r.pick([
        "viewer @skip(if: true) { type }",
        "viewer @include(if: $c) { type }",
        "viewer @nope { type }",
        "viewer @skip(if: true) @skip(if: false) { type }",
        'viewer @skip(if: "yes") { type }',
        "viewer @deprecated { type }",
        "viewer @include { type }",
      ]);
      if (body.includes("$c"))
        vars.set("c", { type: r.pick(["Boolean!", "Boolean", "String"]), value: r.pick([true, false, null, "x", 1]) });
      break;
    case "strings":
      body = r.pick([
        `transaction(id: "${"x".repeat(100 + size * 1000)}") { id }`,
        `transaction(id: "\\u0000") { id }`,
        `transaction(id: "\\ud800") { id }`,
        `transactions(filter: { search: "\\u0000" }) { edges { cursor } }`,
        `transactions(after: "\\u0000") { edges { cursor } }`,
        `transactions(after: "${Buffer.from('["2026-01-01 00:00:00+00","\\u0000"]').toString("base64url")}") { edges { cursor } }`,
        `transaction(id: """block \\""" string""") { id }`,
        `verifyQr(qrData: "\\uD83D\\uDE00") decodeQr(qrData: "0002\\u0000") { status { code } }`,
        `gatewayLinkTransaction(transactionId: "\\u0000") { status }`,
        `qrTransaction(md5: "${"a".repeat(32)}") { status }`,
        `gatewayTransaction(orderId: "\\u0000") { status }`,
      ]);
      break;
    case "numbers":
      body = `transactions(first: ${r.pick(WEIRD_NUMBERS)}) { edges { cursor } } webhookDeliveries(first: ${r.pick(WEIRD_NUMBERS)}) { id }`;
      break;
  }
  const varDefs = vars.size ? `(${[...vars].map(([k, v]) => `$${k}: ${v.type}`).join(", ")})` : "";
  const variables = Object.fromEntries([...vars].map(([k, v]) => [k, v.value]));
  return { query: `${opType}${varDefs} { ${body} } ${extraDefs}`.trim(), variables };
}

/**
 * Independent measure of the limits of docs/decisions/0012-graphql-limits.md: field nesting depth (a root field
 * is 1) and fields selected, fragments expanded.
 */
export function measureDoc(doc: DocumentNode): { depth: number; fields: number }[] {
  const frags = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) frags.set(d.name.value, d);
  const walk = (set: SelectionSetNode, level: number, path: string[], acc: { depth: number; fields: number }) => {
    for (const s of set.selections) {
      if (acc.fields > 5000) return; // enough to know it is over the limit
      if (s.kind === Kind.FIELD) {
        acc.fields++;
        acc.depth = Math.max(acc.depth, level);
        if (s.selectionSet) walk(s.selectionSet, level + 1, path, acc);
      } else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet, level, path, acc);
      else {
        const f = frags.get(s.name.value);
        if (f && !path.includes(f.name.value)) walk(f.selectionSet, level, [...path, f.name.value], acc);
      }
    }
  };
  return doc.definitions
    .filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
    .map((op) => {
      const acc = { depth: 0, fields: 0 };
      walk(op.selectionSet, 1, [], acc);
      return acc;
    });
}

export function tryParse(query: string): DocumentNode | null {
  try {
    return parse(query);
  } catch {
    return null;
  }
}

/** Response keys of the admin fields an operation selects at its root (through inline fragments and spreads). */
export function adminKeysAtRoot(doc: DocumentNode, operationName?: string): string[] {
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const op = operationName ? ops.find((o) => o.name?.value === operationName) : ops.length === 1 ? ops[0] : undefined;
  if (!op) return [];
  const frags = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) frags.set(d.name.value, d);
  const out: string[] = [];
  const visit = (set: SelectionSetNode, seen: string[]) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        if (ADMIN_FIELDS.has(s.name.value)) out.push(s.alias?.value ?? s.name.value);
      } else if (s.kind === Kind.INLINE_FRAGMENT) visit(s.selectionSet, seen);
      else {
        const f = frags.get(s.name.value);
        if (f && !seen.includes(f.name.value)) visit(f.selectionSet, [...seen, f.name.value]);
      }
    }
  };
  visit(op.selectionSet, []);
  return out;
}

/** True when the document selects __schema or __type anywhere (introspection beyond __typename). */
export function usesIntrospection(doc: DocumentNode): boolean {
  let found = false;
  const visit = (set: SelectionSetNode | undefined) => {
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.FIELD) {
        if (s.name.value === "__schema" || s.name.value === "__type") found = true;
        visit(s.selectionSet);
      } else if (s.kind === Kind.INLINE_FRAGMENT) visit(s.selectionSet);
    }
  };
  for (const d of doc.definitions)
    if (d.kind === Kind.OPERATION_DEFINITION || d.kind === Kind.FRAGMENT_DEFINITION) visit(d.selectionSet);
  return found;
}

/** Deepest nesting of { [ ( tokens, by graphql-js's own lexer (strings and comments are tokens, not text); null when it cannot lex. */
export function lexNesting(query: string): number | null {
  try {
    const lexer = new Lexer(new Source(query));
    let depth = 0;
    let max = 0;
    for (let t = lexer.advance(); t.kind !== TokenKind.EOF; t = lexer.advance()) {
      if (t.kind === TokenKind.BRACE_L || t.kind === TokenKind.BRACKET_L || t.kind === TokenKind.PAREN_L)
        max = Math.max(max, ++depth);
      else if (t.kind === TokenKind.BRACE_R || t.kind === TokenKind.BRACKET_R || t.kind === TokenKind.PAREN_R) depth--;
    }
    return max;
  } catch {
    return null;
  }
}
