import { describe, it, expect } from "@jest/globals";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/**
 * No god-functions: every function in src/, TypeScript and the browser's JavaScript alike (declarations, methods, constructors, accessors, arrow functions and
 * function expressions, nested ones too) fits in MAX_LINES, counted from its first line to its last. A nested
 * function's lines count inside its parent as well: the parent is what a reader scrolls through.
 */
const MAX_LINES = 120;

/** `file:function` entries excused for now, each with the reason (none today; a stale entry fails below). */
const ALLOWED: ReadonlyMap<string, string> = new Map<string, string>([]);

export interface FunctionLength {
  name: string;
  lines: number;
}

/** A readable name for a function-like node: its own, or the binding or property it is assigned to. */
function nameOf(node: ts.Node, sf: ts.SourceFile): string {
  const named = (n: ts.Node): string | null => {
    const name = (n as { name?: ts.Node }).name;
    return name !== undefined && (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name))
      ? name.text
      : name !== undefined
        ? name.getText(sf)
        : null;
  };
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const own = named(node);
  if (own !== null) return own;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return named(parent) ?? "<anonymous>";
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken)
    return parent.left.getText(sf);
  const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  return `<anonymous@${line}>`;
}

/** Every function-like node of one source text, named `Outer.inner` when nested in a class or function. */
export function measureFunctions(fileName: string, text: string): FunctionLength[] {
  const kind = fileName.endsWith(".js") ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  const out: FunctionLength[] = [];
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node, scope: string[]): void => {
    let inner = scope;
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      inner = [...scope, node.name?.text ?? "<class>"];
    } else if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body !== undefined) {
      const name = nameOf(node, sf);
      const lines = lineOf(node.getEnd()) - lineOf(node.getStart(sf)) + 1;
      inner = [...scope, name];
      out.push({ name: inner.join("."), lines });
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(sf, []);
  return out;
}

const ROOT = new URL("../../", import.meta.url).pathname;

/** The code a reader of src/ scrolls through: the server's TypeScript and the pages' JavaScript. */
const MEASURED = /\.(ts|js)$/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return MEASURED.test(p) ? [p] : [];
  });
}

/** The fixture fourth area (test/fixtures/fourth-area/), written as a folder of src/ would be, is held to it too. */
const FIXTURE_AREA = join(ROOT, "test/fixtures/fourth-area");

/** Every function of src/ (and of the fixture area) over `max` lines, as `file:function:lines`. */
function overLimit(max: number): string[] {
  return [...sources(join(ROOT, "src")), ...sources(FIXTURE_AREA)].flatMap((file) => {
    const rel = relative(ROOT, file);
    return measureFunctions(rel, readFileSync(file, "utf8"))
      .filter((f) => f.lines > max)
      .map((f) => `${rel}:${f.name}:${f.lines}`);
  });
}

/** `n` lines of a function's body. */
const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join("\n");

describe(`no function in src/ over ${MAX_LINES} lines`, () => {
  it("the measurer flags a 121-line function, nested ones inside their parent, and names methods and arrows", () => {
    // 1 opening line + 119 body lines + 1 closing line = 121.
    const long = `export function tooLong() {\n${body(119)}\n}\n`;
    expect(measureFunctions("long.ts", long)).toEqual([{ name: "tooLong", lines: 121 }]);
    const justRight = `function fits() {\n${body(118)}\n}\n`;
    expect(measureFunctions("fits.ts", justRight)).toEqual([{ name: "fits", lines: 120 }]);
    const nested = [
      "class Edge {",
      "  start() {",
      "    const onMessage = (m: string) => {",
      body(3),
      "    };",
      "    return function later() { return 1; };",
      "  }",
      "}",
    ].join("\n");
    expect(measureFunctions("nested.ts", nested)).toEqual([
      { name: "Edge.start", lines: 8 },
      { name: "Edge.start.onMessage", lines: 5 },
      { name: "Edge.start.later", lines: 1 },
    ]);
  });

  it("the scan reads the pages' JavaScript too (checkout, dashboard), measured as JavaScript", () => {
    const files = sources(join(ROOT, "src")).map((file) => relative(ROOT, file));
    expect(files).toEqual(
      expect.arrayContaining([
        "src/checkout/public/checkout.js",
        "src/dashboard/public/js/pages/overview.js",
        "src/checkout/checkout-view.ts",
      ]),
    );
    // The fixture fourth area, written as a folder of src/ would be, is measured with src/.
    expect(sources(FIXTURE_AREA).map((file) => relative(ROOT, file))).toContain("test/fixtures/fourth-area/index.ts");
    // A browser script's shapes: a custom element's method and a closure assigned to a property.
    const page = `class Page extends HTMLElement {\n  render(o) {\n    this.onClick = (ev) => {\n${body(119)}\n    };\n  }\n}\n`;
    expect(measureFunctions("page.js", page)).toEqual([
      { name: "Page.render", lines: 123 },
      { name: "Page.render.this.onClick", lines: 121 },
    ]);
  });

  it(`every function fits in ${MAX_LINES} lines (allowed for now: ${[...ALLOWED.keys()].join(", ")})`, () => {
    const offenders = overLimit(MAX_LINES).filter((entry) => !ALLOWED.has(entry.replace(/:\d+$/, "")));
    expect(offenders).toEqual([]);
  });

  it("every allowed entry still exists and is still over the limit (an entry that fits is removed)", () => {
    const over = new Set(overLimit(MAX_LINES).map((entry) => entry.replace(/:\d+$/, "")));
    expect([...ALLOWED.keys()].filter((key) => !over.has(key))).toEqual([]);
  });
});
