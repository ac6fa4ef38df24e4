import { describe, it, expect } from "@jest/globals";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { MODULES } from "../src/app.js";
import { terminalModule } from "./fixtures/fourth-area/index.js";
import {
  areaFolders,
  demoViolations,
  importsOf,
  layersWith,
  layerViolations,
  sourcesOf,
  unplaced,
  type SourceTree,
} from "./support/architecture.js";

/**
 * The import rule of docs/architecture.md (the check itself: test/support/architecture.ts). The areas' layer is
 * derived from the module list: its areas are the modules that declare `area`, each in the folder of its name. The
 * fixture fourth area (test/fixtures/fourth-area/) is held to the same rules, as the room `terminal` of the areas'
 * layer: it is written as a folder of src/ would be.
 */
const SRC = new URL("../src/", import.meta.url).pathname.replace(/\/$/, "");
const FIXTURE = new URL("./fixtures/fourth-area", import.meta.url).pathname;
const TREE: SourceTree = { src: SRC, extra: { [terminalModule.name]: FIXTURE } };
const AREAS = areaFolders([...MODULES, terminalModule]);
const LAYERS = layersWith(AREAS);

/** The dashboard's browser code (plain JS, served as is). */
function jsSources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return jsSources(p);
    return p.endsWith(".js") ? [p] : [];
  });
}

/**
 * The import circles of src/ (and the fixture area): each as the files around it, the first file repeated at its end.
 * Static imports only (type-only ones included): a dynamic `import()` (an area's index.ts loading its demo.ts in demo
 * mode) runs when its line runs, after both files are loaded, so it closes no circle of loading order.
 */
function importCircles(tree: SourceTree): string[][] {
  const files = sourcesOf(tree);
  const rel = new Map(files.map((f) => [f.path, f.rel]));
  const graph = new Map(
    files.map((f) => [
      f.rel,
      importsOf(f.path).flatMap((i) => (rel.has(i.target) && !i.dynamic ? [rel.get(i.target) as string] : [])),
    ]),
  );
  return circlesOf(graph);
}

/** A depth-first walk of an import graph; every back edge is one circle (reported once, from where it was met). */
function circlesOf(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const circles: string[][] = [];
  const walk = (file: string): void => {
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      const seen = state.get(next);
      if (seen === "open") circles.push([...path.slice(path.indexOf(next)), next]);
      else if (seen === undefined) walk(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) walk(file);
  return circles;
}

describe("the module layering (docs/architecture.md)", () => {
  it("derives the areas' layer from the module list: each area is a folder of its module's name", () => {
    // The modules that declare `area`, in the list's order, the fixture's last: a new area's line in MODULES is all.
    const declaring = [...MODULES, terminalModule].filter((m) => m.area !== undefined).map((m) => m.name);
    expect(AREAS).toEqual(declaring);
    expect(AREAS).toEqual(expect.arrayContaining(["qr", "gateway", "gateway-link", "terminal"]));
    expect(areaFolders(MODULES).filter((a) => !existsSync(join(SRC, a, "index.ts")))).toEqual([]);
  });

  it("places every room of src/ (and the fixture area) in exactly one layer", () => {
    expect(unplaced(TREE, LAYERS)).toEqual({ unlisted: [], missing: [] });
  });

  it("has no import from a room of the same layer or above", () => {
    expect(layerViolations(TREE, LAYERS)).toEqual([]);
  });

  it("keeps the simulators out of production code: only demo code imports them, and an area's demo.ts its own", () => {
    // Demo code: src/demo/, src/simulators/, an area's demo.ts (and a simulator in its folder). Production code
    // reaches an area's demo.ts only through the dynamic import of its module definition's `demo`.
    expect(demoViolations(TREE, AREAS)).toEqual([]);
    for (const def of [...MODULES, terminalModule].filter((m) => m.demo !== undefined)) {
      const index = def.name === terminalModule.name ? join(FIXTURE, "index.ts") : join(SRC, def.name, "index.ts");
      expect(importsOf(index)).toContainEqual({ target: join(index, "../demo.ts"), dynamic: true });
    }
  });

  it("catches a production file importing an area's demo.ts, and two areas sharing a simulator", () => {
    const dir = mkdtempSync(join(tmpdir(), "layers-"));
    try {
      const put = (path: string, text: string) => {
        mkdirSync(join(dir, path, ".."), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      put("a/index.ts", `export const demo = () => import("./demo.js");`);
      put("a/service.ts", `import { part } from "./demo.js";`);
      put("a/demo.ts", `import { sim } from "../simulators/x/index.js";`);
      put("b/demo.ts", `import { sim } from "../simulators/x/index.js";`);
      put("demo/index.ts", `import { sim } from "../simulators/x/index.js";`);
      put("simulators/x/index.ts", `export const sim = 1;`);
      expect(demoViolations({ src: dir }, ["a", "b"]).sort()).toEqual([
        "a/service.ts -> a/demo.ts",
        "demo/index.ts -> simulators/x/index.ts (an area's simulator)",
        "simulators/x/ is imported by the demo code of a, b",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("commands.ts (the commands main.ts runs) reaches src/demo/ only by a dynamic import, where demo mode is on", () => {
    const text = readFileSync(join(SRC, "commands.ts"), "utf8");
    const statics = [...text.matchAll(/^import\s[^;]*?from\s*"(\.\/demo\/[^"]+)"/gm)].map((m) => m[1]);
    expect(statics).toEqual([]);
    const dynamic = [...text.matchAll(/(.*)await import\("\.\/demo\/index\.js"\)/g)].map((m) => m[1] as string);
    expect(dynamic).toHaveLength(1);
    // The one dynamic import is guarded by the demo settings (SIMULATORS, or DEMO's seeding).
    expect(dynamic[0]).toMatch(/config\.simulators/);
  });

  it("has no import circle between the files of src/ (type-only imports included)", () => {
    expect(importCircles(TREE)).toEqual([]);
  });

  it("finds an import circle where there is one (the detector can fail)", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "d.ts"]],
      ["d.ts", []],
    ]);
    expect(circlesOf(graph)).toEqual([["a.ts", "b.ts", "c.ts", "a.ts"]]);
    expect(
      circlesOf(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("reads imports the way the rule needs (a violation is caught)", () => {
    // The scanner must see type-only and re-exporting imports, or the rule above could pass unseen.
    const app = importsOf(join(SRC, "app.ts")).map((f) => relative(SRC, f.target));
    expect(app).toEqual(expect.arrayContaining(["config.ts", "module.ts", "qr/index.ts"]));
    const webhooks = importsOf(join(SRC, "webhooks/index.ts")).map((f) => relative(SRC, f.target));
    expect(webhooks).toContain("webhooks/outbox-fanout.ts");
  });

  it("has no line longer than 140 characters (Prettier wraps code at 120; strings and comments by hand)", () => {
    const long: string[] = [];
    const all = [...sourcesOf(TREE).map((f) => f.path), ...jsSources(join(SRC, "dashboard/public"))];
    for (const file of all) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (line.length > 140) long.push(`${relative(SRC, file)}:${i + 1} (${line.length})`);
        });
    }
    expect(long).toEqual([]);
  });
});
