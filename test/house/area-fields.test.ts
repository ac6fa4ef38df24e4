import { describe, it, expect } from "@jest/globals";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { areaViewsOf, MODULES, schemaSdl } from "../../src/app.js";
import { terminalModule } from "../fixtures/fourth-area/index.js";
import type { AreaDefinition } from "../../src/module.js";

/**
 * Areas own their data (docs/decisions/0208-areas-own-their-data.md): the core — transactions, checkout, webhooks,
 * events — names no field an area declares (AreaDefinition.data), so an area's field is added, renamed or removed in
 * its own folder. The names come from the areas' declarations, not from a list here.
 */
const CORE = ["src/transactions", "src/checkout", "src/webhooks", "src/events"];
/** The checkout page's own script is a client of the checkout view (its shape is the contract), not the core. */
const CLIENTS = ["src/checkout/public"];

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
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

describe("areas own their data", () => {
  const views = areaViewsOf([...MODULES, terminalModule]);
  const names = views.names();
  const columns = views.fields.flatMap((f) =>
    f.csv !== undefined && f.csv.column.includes("_") ? [f.csv.column] : [],
  );

  it("knows the areas' fields from their declarations", () => {
    // Each of the three areas shows at least one field of its own; the check below is only as good as this list.
    for (const m of MODULES.filter((x) => "area" in x && x.area !== undefined))
      expect(m.area?.data?.fields.length ?? 0).toBeGreaterThan(0);
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
