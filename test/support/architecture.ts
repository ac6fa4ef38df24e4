import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, normalize, relative, sep } from "node:path";

/**
 * The import rule of docs/architecture.md, as a check any source tree can be given: src/ itself, src/ with a fixture
 * area beside it, or a copy of src/ with an area copied in (test/house/copy-in-area.test.ts). A file imports files of
 * its own room (folder, or top-level file) and rooms of lower layers, never a room of its own layer or above.
 */
export interface SourceTree {
  /** The src/ directory. */
  src: string;
  /** Rooms kept outside src/ and checked as if they were in it (a fixture area's folder), by room name. */
  extra?: Record<string, string>;
}

/**
 * The layers, lowest first, with the areas' layer made of the module list's areas (the modules that declare
 * `area`: their folder is their module's name) beside the two other modules of that layer.
 */
export function layersWith(areas: readonly string[]): string[][] {
  return [
    ["config.ts", "clock.ts", "errors.ts", "ids.ts", "exact-json.ts", "khqr", "money", "node-version.ts"],
    ["validation", "cache", "logger.ts"],
    ["db", "upstreams", "logs"],
    ["jobs", "auth", "startup.ts"],
    ["graphql"],
    ["rest"],
    ["module.ts"],
    ["transactions", "ops"],
    ["admin", "events", "simulators"],
    ["webhooks"],
    [...areas, "dashboard", "checkout"],
    ["http"],
    ["app.ts", "index.ts"],
    ["demo"],
    ["commands.ts"],
    ["main.ts"],
  ];
}

export interface SourceFile {
  path: string;
  /** Its room: the first part of its path under src/ (or its extra room's name). */
  room: string;
  /** Its path as a reader of src/ names it: `qr/demo.ts`. */
  rel: string;
}

function walk(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === "public" ? [] : walk(p, ext);
    return ext.test(p) ? [p] : [];
  });
}

/** Where a path is in the tree (null: outside it, e.g. a test's support). */
export function locate(tree: SourceTree, path: string): SourceFile | null {
  for (const [room, dir] of Object.entries(tree.extra ?? {}))
    if (path.startsWith(dir + sep)) return { path, room, rel: join(room, relative(dir, path)) };
  if (!path.startsWith(tree.src + sep)) return null;
  const rel = relative(tree.src, path);
  return { path, room: rel.split(sep)[0] as string, rel };
}

/** Every TypeScript file of the tree (the pages' browser code under public/ is not imported by the server's). */
export function sourcesOf(tree: SourceTree): SourceFile[] {
  const dirs = [tree.src, ...Object.values(tree.extra ?? {})];
  return dirs.flatMap((d) => walk(d, /\.ts$/)).map((p) => locate(tree, p) as SourceFile);
}

export interface Import {
  target: string;
  /** `import("…")`: loaded when the code runs that line, not when the file is. */
  dynamic: boolean;
}

/** Every relative import of a file, type-only and re-exporting ones too, resolved to the .ts file. */
export function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(from|import)\s*(\(?)\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => ({
    target: normalize(join(dirname(file), (m[3] as string).replace(/\.js$/, ".ts"))),
    dynamic: m[1] === "import" && m[2] === "(",
  }));
}

export const layerOf = (layers: string[][], room: string) => layers.findIndex((l) => l.includes(room));

/** Rooms of the tree in no layer, and layers' rooms the tree does not have. */
export function unplaced(tree: SourceTree, layers: string[][]): { unlisted: string[]; missing: string[] } {
  const rooms = [...new Set(sourcesOf(tree).map((f) => f.room))].sort();
  return {
    unlisted: rooms.filter((r) => layerOf(layers, r) < 0),
    missing: layers.flat().filter((r) => !rooms.includes(r)),
  };
}

/** Imports of a room of the same layer or above, as `from -> to`. */
export function layerViolations(tree: SourceTree, layers: string[][]): string[] {
  const violations: string[] = [];
  for (const file of sourcesOf(tree))
    for (const { target } of importsOf(file.path)) {
      const to = locate(tree, target);
      if (to !== null && to.room !== file.room && layerOf(layers, to.room) >= layerOf(layers, file.room))
        violations.push(`${file.rel} -> ${to.rel}`);
    }
  return violations;
}

/**
 * Demo code: src/demo/, src/simulators/, and in an area's folder its `demo.ts` and its own simulator (a
 * `simulator.ts` or a `simulator/` folder, for an area whose simulator ships in its folder).
 */
export function isDemoCode(file: SourceFile, areas: readonly string[]): boolean {
  if (file.room === "demo" || file.room === "simulators") return true;
  if (!areas.includes(file.room)) return false;
  const inArea = file.rel.split(sep).slice(1);
  return (
    (inArea.length === 1 && basename(file.rel) === "demo.ts") ||
    inArea[0] === "simulator" ||
    inArea[0] === "simulator.ts"
  );
}

/**
 * The simulators stay out of production code. Production code (everything but demo code) imports no demo code
 * statically; the only dynamic imports of it are an area's index.ts loading its own demo.ts and commands.ts loading
 * src/demo/index.ts. A simulator folder (src/simulators/<name>/) belongs to one area: the demo code of one area at
 * most imports it (src/demo/ imports only the shared files at the top of src/simulators/).
 */
export function demoViolations(tree: SourceTree, areas: readonly string[]): string[] {
  const violations: string[] = [];
  const owners = new Map<string, Set<string>>();
  for (const file of sourcesOf(tree))
    for (const { target, dynamic } of importsOf(file.path)) {
      const to = locate(tree, target);
      if (to === null) continue;
      if (isDemoCode(to, areas) && !isDemoCode(file, areas)) {
        const ownDemo = dynamic && file.rel === join(file.room, "index.ts") && to.rel === join(file.room, "demo.ts");
        const mainsDemo = dynamic && file.rel === "commands.ts" && to.rel === join("demo", "index.ts");
        if (!ownDemo && !mainsDemo) violations.push(`${file.rel} -> ${to.rel}${dynamic ? " (dynamic)" : ""}`);
      }
      const [, simulator, rest] = to.rel.split(sep);
      if (to.room !== "simulators" || file.room === "simulators" || rest === undefined) continue;
      if (file.room === "demo") violations.push(`${file.rel} -> ${to.rel} (an area's simulator)`);
      else owners.set(simulator as string, (owners.get(simulator as string) ?? new Set()).add(file.room));
    }
  for (const [simulator, rooms] of owners)
    if (rooms.size > 1)
      violations.push(`simulators/${simulator}/ is imported by the demo code of ${[...rooms].join(", ")}`);
  return violations;
}

/** The area folders of a module list: the folders of the modules that declare `area` (a module's folder is its name). */
export function areaFolders(modules: readonly { name: string; area?: unknown }[]): string[] {
  return modules.filter((m) => m.area !== undefined).map((m) => m.name);
}
