// Our GraphQL limits (src/graphql/limits.ts: depth 12, 500 fields; src/graphql/cost.ts: budget 5000) beside
// graphql-armor's max-depth, max-aliases and cost-limit rules at the same limits, on the same parsed documents and
// schema. Speed: median ops/s of 5 CPU-timed runs, interleaved (bench/codec.ts `compare`). Behaviour: what each
// side answers to documents where the two differ. docs/decisions/0227-graphql-limits-stay-ours.md reads the figures.
// `npm run bench -- --only=graphql-armor`
import { readFileSync } from "node:fs";
import { buildSchema, parse, validate, type DocumentNode, type ValidationRule } from "graphql";
import { costLimitRule } from "@escape.tech/graphql-armor-cost-limit";
import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { maxDepthRule } from "@escape.tech/graphql-armor-max-depth";
import { costError, operationCost } from "../src/graphql/cost.js";
import { limitsRule } from "../src/graphql/limits.js";
import { compare } from "./codec.js";
import { PROJECT_ROOT } from "./support/service.js";
import { importMs } from "./support/import-cost.js";
import type { Section } from "./table.js";

const schema = buildSchema(readFileSync(`${PROJECT_ROOT}/schema.graphql`, "utf8"));
const OURS: ValidationRule[] = [limitsRule(12, 500)];
const ARMOR: ValidationRule[] = [maxDepthRule({ n: 12 }), maxAliasesRule({ n: 500 }), costLimitRule({ maxCost: 5000 })];

type Vars = Record<string, unknown>;

/** Ours as the edge runs it: the limits rule in validation, then the cost of the operation. */
function ours(doc: DocumentNode, vars: Vars): string | null {
  const errors = validate(schema, doc, OURS);
  if (errors.length > 0) return errors[0]!.message;
  return costError(operationCost(schema, doc, vars), 5000)?.message ?? null;
}

/** graphql-armor's rules: a refusal is thrown from the rule (propagateOnRejection, their default). */
function armor(doc: DocumentNode, rules = ARMOR): string | null {
  try {
    const errors = validate(schema, doc, rules);
    return errors[0]?.message ?? null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** `F0` spreads `F1` twice, … `F<depth-1>` spreads `F<depth>` twice; `F<depth>` selects __typename. */
function doubling(depth: number): string {
  const defs = Array.from({ length: depth }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`);
  return `query { ...F0 } ${defs.join(" ")} fragment F${depth} on Query { __typename }`;
}

/** `field { field { … leaf … } }`, `n` times; `field` may itself open levels (`fields { type`). */
const nested = (field: string, n: number, leaf: string) =>
  `${`${field} { `.repeat(n)}${leaf}${" }".repeat(n * field.split("{").length)}`;
const aliases = Array.from({ length: 100 }, (_, i) => `a${i}: __typename`).join(" ");
const LIST = "{ transactions(first: 20) { edges { node { id amount currency status createdAt } } } }";

/** `{ ...G0 }`, `G0` spreads `G1`, …, `G<n-1>` selects __typename: one field at depth 1, through n fragments. */
const chain = (n: number) =>
  `{ ...G0 } ${Array.from({ length: n }, (_, i) => `fragment G${i} on Query { ${i === n - 1 ? "__typename" : `...G${i + 1}`} }`).join(" ")}`;

/** Documents on which the two sides answer differently (each answer is printed beside the other). */
const BEHAVIOUR: [string, string, Vars][] = [
  [
    "`first` from a variable ($n = 100000), 2 fields a row",
    "query($n: Int!) { transactions(first: $n) { edges { node { id amount } } } }",
    { n: 100_000 },
  ],
  ["qrImage (a PNG render) for 50 rows", "{ transactions(first: 50) { edges { node { id qrImage } } } }", {}],
  [
    "events (a list without `first`, 20 assumed) for 100 rows",
    "{ transactions(first: 100) { edges { node { id events { id type createdAt } } } } }",
    {},
  ],
  [
    "__type with 10 `ofType` levels (a client's type reference)",
    `{ __type(name: "Query") { fields { type { ${nested("ofType", 10, "name")} } } } }`,
    {},
  ],
  ["__schema nested 20 levels", `{ __schema { ${nested("types { fields { type", 6, "name")} } }`, {}],
  [
    "600 fields through fragments, no alias over 100",
    `{ ...A ...A ...A ...A ...A ...A } fragment A on Query { ${aliases} }`,
    {},
  ],
  ["one field at depth 1 through 12 nested fragments (components' fragments)", chain(12), {}],
  ["14 levels deep", `{ __type(name: "Query") { ${nested("fields { type", 6, "name")} } }`, {}],
  ["30 doubling fragments (2^30 fields)", doubling(30), {}],
];

const answer = (m: string | null) => (m === null ? "accepted" : `refused: ${m.length > 90 ? `${m.slice(0, 87)}…` : m}`);

export async function benchArmorSection(): Promise<Section[]> {
  const { OVERVIEW_QUERY } = (await import(`${PROJECT_ROOT}/src/dashboard/public/js/overview-query.js`)) as {
    OVERVIEW_QUERY: string;
  };
  const docs: [string, string, Vars][] = [
    ["30 doubling fragments (the linear-validation test's document)", doubling(30), {}],
    ["10 doubling fragments", doubling(10), {}],
    ["the dashboard's overview query", OVERVIEW_QUERY, { from: "2026-01-01T00:00:00Z", to: "2026-01-31T00:00:00Z" }],
    ["a transactions page (20 rows, 5 fields)", LIST, {}],
  ];
  const rows = docs.map(([name, text, vars]) => {
    const doc = parse(text);
    const r = compare(
      name,
      () => (ours(doc, vars) === null ? 1 : 0),
      () => (armor(doc) === null ? 1 : 0),
    );
    return [name, r.ours, r.baseline, Math.round((r.ours / r.baseline) * 100) / 100];
  });
  // Linear or not: one validation at 10, 20 and 30 doubling fragments; armor's cost rule also alone (with all three,
  // its depth rule refuses first).
  const costAlone: ValidationRule[] = [costLimitRule({ maxCost: 5000 })];
  const scaling = [10, 20, 30].map((d) => {
    const doc = parse(doubling(d));
    const r = compare(
      `${d}`,
      () => (ours(doc, {}) === null ? 1 : 0),
      () => (armor(doc) === null ? 1 : 0),
    );
    const alone = compare(
      `${d}`,
      () => (armor(doc, costAlone) === null ? 1 : 0),
      () => 0,
    );
    return [d, round(1e6 / r.ours), round(1e6 / r.baseline), round(1e6 / alone.ours)];
  });
  const behaviour = BEHAVIOUR.map(([name, text, vars]) => {
    const doc = parse(text);
    return [name, answer(ours(doc, vars)), answer(armor(doc))];
  });
  const imports = [
    "@escape.tech/graphql-armor-cost-limit",
    "@escape.tech/graphql-armor-max-depth",
    "@escape.tech/graphql-armor-max-aliases",
  ].map((p) => importMs(p, "graphql"));
  return [
    {
      title: "Libraries: GraphQL limits, ours beside graphql-armor (speed)",
      columns: ["document", "ours ops/s", "graphql-armor ops/s", "ours ÷ armor"],
      rows,
      notes: [
        "Ours: limitsRule(12, 500) in graphql-js validate, then operationCost + costError (budget 5000). graphql-armor 2.x: maxDepthRule(12), maxAliasesRule(500), costLimitRule(5000), in one validate. Same parsed document; graphql-js's own rules run on neither side.",
        "Median of 5 runs of CPU time each, ours and theirs interleaved.",
        `Cold import of the three armor rules (median of 5 fresh processes, each with graphql already loaded, as it is in the service): ${imports.map((m) => `${m} ms`).join(", ")}.`,
      ],
    },
    {
      title: "Libraries: GraphQL limits on doubling fragments, µs per validation (linear or not)",
      columns: ["fragments", "ours µs", "graphql-armor µs", "graphql-armor cost-limit alone µs"],
      rows: scaling,
      notes: [
        "`F0` spreads `F1` twice, … up to `F<n>` { __typename }: 2^n fields. Linear: each 10 fragments add the same time; exponential: each would multiply it by ~1000. µs = 1e6 ÷ the median ops/s.",
      ],
    },
    {
      title: "Libraries: GraphQL limits, ours beside graphql-armor (what each answers)",
      columns: ["document", "ours", "graphql-armor"],
      rows: behaviour,
      notes: [
        "Both at the limits above; graphql-armor's options at their defaults otherwise (ignoreIntrospection on).",
      ],
    },
  ];
}

const round = (x: number) => Math.round(x * 10) / 10;
