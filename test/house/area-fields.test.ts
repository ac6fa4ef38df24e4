import { describe, it, expect } from "@jest/globals";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { areaViewsOf, MODULES, schemaSdl } from "../../src/app.js";
import { AreaViews } from "../../src/transactions/area-views.js";
import { terminalModule } from "../fixtures/fourth-area/index.js";
import type { AreaDefinition } from "../../src/module.js";

/**
 * Areas own their data (docs/decisions/0208-areas-own-their-data.md): the core — transactions, checkout, webhooks,
 * events — names no field an area declares (AreaDefinition.data), so an area's field is added, renamed or removed in
 * its own folder. The names come from the areas' declarations, not from a list here.
 */
const CORE = [
  "src/transactions",
  "src/checkout",
  "src/webhooks",
  "src/events",
  "src/graphql",
  "src/rest",
  "src/http",
  "src/app.ts",
  "src/module.ts",
];
/** The checkout page's own script is a client of the checkout view (its shape is the contract), not the core. */
const CLIENTS = ["src/checkout/public"];

const files = (dir: string): string[] =>
  !statSync(dir).isDirectory()
    ? [dir]
    : readdirSync(dir).flatMap((f) => {
        const p = join(dir, f);
        if (CLIENTS.includes(p)) return [];
        return statSync(p).isDirectory() ? files(p) : /\.(ts|js)$/.test(f) ? [p] : [];
      });

/**
 * Where a file names one of `names` in code: as an identifier or property, as a string that is the name, or, a
 * column's name (`order_id`), anywhere in a string (SQL). Comments and prose (a description that mentions one among
 * other words) do not count.
 */
export function namedFields(source: string, names: readonly string[], columns: readonly string[]): string[] {
  const file = ts.createSourceFile("x.ts", source, ts.ScriptTarget.Latest, true);
  const found = new Set<string>();
  const column = columns.map((c) => [c, new RegExp(`\\b${c}\\b`)] as const);
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      const name = node.text.replace(/^#/, "");
      if (names.includes(name)) found.add(name);
    } else if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateLiteralToken(node)
    ) {
      if (names.includes(node.text) || columns.includes(node.text)) found.add(node.text);
      for (const [c, re] of column) if (re.test(node.text)) found.add(c);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...found];
}

/**
 * The core's own keys of a transaction's `upstream` (transactions/transition.ts writes them: `late` for a late
 * payment, `mismatch` for a held one and its `resolution`; `failure`, why it failed, read by failure-reason.ts).
 * Every other key is an area's, read only through what its AreaDefinition.data declares.
 */
const CORE_KEYS = ["late", "mismatch", "resolution", "failure"];

const isUpstream = (e: ts.Expression): boolean =>
  (ts.isIdentifier(e) && e.text === "upstream") || (ts.isPropertyAccessExpression(e) && e.name.text === "upstream");

/**
 * The keys a file reads or writes of an `upstream` in code: `x.upstream.key`, `x.upstream?.key`,
 * `x.upstream["key"]`, `const { key } = x.upstream`, `upstream: { key }` and SQL's `upstream -> 'key'`.
 */
export function upstreamKeys(source: string): string[] {
  const file = ts.createSourceFile("x.ts", source, ts.ScriptTarget.Latest, true);
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && isUpstream(node.expression)) found.add(node.name.text);
    else if (ts.isElementAccessExpression(node) && isUpstream(node.expression)) {
      if (ts.isStringLiteralLike(node.argumentExpression)) found.add(node.argumentExpression.text);
    } else if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer) {
      if (isUpstream(node.initializer))
        for (const e of node.name.elements) found.add((e.propertyName ?? e.name).getText(file));
    } else if (ts.isPropertyAssignment(node) && node.name.getText(file) === "upstream") {
      if (ts.isObjectLiteralExpression(node.initializer))
        for (const p of node.initializer.properties) if (p.name !== undefined) found.add(p.name.getText(file));
    } else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) {
      for (const m of node.text.matchAll(/\bupstream\s*->>?\s*'(\w+)'/g)) found.add(m[1] as string);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...found];
}

describe("areas own their data", () => {
  const views = areaViewsOf([...MODULES, terminalModule]);
  const names = views.names();
  const columns = views.fields.flatMap((f) =>
    f.csv !== undefined && f.csv.column.includes("_") ? [f.csv.column] : [],
  );

  it("knows the areas' fields from their declarations", () => {
    // An area that declares data (it is optional: the fixture fourth area has none) shows at least one field of its
    // own; the check below is only as good as this list.
    const declaring = [...MODULES, terminalModule].flatMap((m) => (m.area?.data === undefined ? [] : [m.area.data]));
    expect(declaring.length).toBe(3);
    for (const d of declaring) expect(d.fields.length).toBeGreaterThan(0);
    expect(names.length).toBeGreaterThanOrEqual(3);
  });

  it("finds a field named in code, and not one in a comment or in prose", () => {
    const [one] = names;
    expect(namedFields(`const v = tx.${one};`, names, columns)).toEqual([one]);
    expect(namedFields(`const v = { ${one}: 1 };`, names, columns)).toEqual([one]);
    expect(namedFields(`const k = "${one}";`, names, columns)).toEqual([one]);
    expect(namedFields(`// ${one}\n/** ${one} */ const v = "the ${one} of it";`, names, columns)).toEqual([]);
    if (columns[0] !== undefined)
      expect(namedFields(`q(\`select ${columns[0]} from t\`);`, names, columns)).toEqual([columns[0]]);
  });

  it("the core names none of them", () => {
    const named = CORE.flatMap(files).flatMap((f) =>
      namedFields(readFileSync(f, "utf8"), names, columns).map((n) => `${f}: ${n}`),
    );
    expect(named).toEqual([]);
  });

  it("finds an upstream key read or written in code, and not one in a comment", () => {
    expect(upstreamKeys(`const h = tx.upstream.payment; const k = tx.upstream?.hash;`)).toEqual(["payment", "hash"]);
    expect(upstreamKeys(`const v = upstream["receiptUrl"]; const { scannedAt: s } = tx.upstream;`)).toEqual([
      "receiptUrl",
      "scannedAt",
    ]);
    expect(upstreamKeys(`f({ upstream: { payment, late: true } }); q("select upstream ->> 'deeplink'");`)).toEqual([
      "payment",
      "late",
      "deeplink",
    ]);
    expect(upstreamKeys(`// tx.upstream.payment\n/** upstream.hash */ const s = "the upstream payment";`)).toEqual([]);
  });

  it("the core reads and writes no key of upstream but its own", () => {
    const read = CORE.flatMap(files).flatMap((f) =>
      upstreamKeys(readFileSync(f, "utf8"))
        .filter((k) => !CORE_KEYS.includes(k))
        .map((k) => `${f}: upstream.${k}`),
    );
    expect(read).toEqual([]);
  });

  it("two areas' declarations of one field merge, and unalike ones stop the build", () => {
    const field = { name: "shared", type: () => String, nullable: true, none: null } as const;
    const area = (kind: string, f: object) => ({ kind, data: { fields: [{ ...field, ...f }], present: () => ({}) } });
    const alike = new AreaViews([area("a", { description: "Both areas" }), area("b", {})]);
    expect(alike.fields).toHaveLength(1);
    expect(alike.fields[0]?.description).toBe("Both areas");
    expect(() => new AreaViews([area("a", {}), area("b", { type: () => Boolean })])).toThrow(
      /area field "shared" is declared twice unalike \(again by the area b\)/,
    );
    expect(() => new AreaViews([area("a", { description: "A" }), area("b", { description: "B" })])).toThrow(/unalike/);
    expect(() => new AreaViews([area("a", {}), area("b", { checkout: { after: "qr" } })])).toThrow(/unalike/);
  });

  it("the dashboard's pages name none of them: they query and show the fields config.json lists", () => {
    const named = files("src/dashboard/public").flatMap((f) =>
      namedFields(readFileSync(f, "utf8"), names, columns).map((n) => `${f}: ${n}`),
    );
    expect(named).toEqual([]);
  });

  it("a new area's field joins the transaction types of its app's schema, and no other's", async () => {
    const area: AreaDefinition = {
      ...(terminalModule.area as AreaDefinition),
      data: {
        fields: [
          {
            name: "terminalSerial",
            type: () => String,
            nullable: true,
            description: "Card-terminal area",
            none: null,
            snapshot: { after: "updatedAt" },
          },
        ],
        present: (tx) => ({ terminalSerial: tx.upstreamRef }),
      },
    };
    const terminal = { ...terminalModule, area };
    const typeOf = (sdl: string, name: string) => new RegExp(`\\ntype ${name} \\{[^}]*\\}`).exec(sdl)?.[0] ?? "";
    const withIt = await schemaSdl([...MODULES, terminal]);
    expect(typeOf(withIt, "Transaction")).toContain('"""Card-terminal area"""\n  terminalSerial: String');
    expect(typeOf(withIt, "TransactionSnapshot")).toContain("terminalSerial: String");
    const without = await schemaSdl(MODULES);
    expect(without).not.toContain("terminalSerial");
    expect(typeOf(without, "Transaction")).toContain("orderId: String");
  });
});
