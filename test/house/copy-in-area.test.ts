import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { areasOf, MODULES, schemaSdl } from "../../src/app.js";
import { terminalModule } from "../fixtures/fourth-area/index.js";
import { areaFolders, demoViolations, layersWith, layerViolations, unplaced } from "../support/architecture.js";

/**
 * docs/architecture.md, "Adding a fourth area", made literal: a copy of src/ with the fixture fourth area copied in
 * as src/terminal/ (its imports of `../../../src/` become `../`, the one difference between the fixture's place and
 * its place in src/) and its module joined to MODULES in the copy's app.ts (its import and its entry) compiles,
 * keeps the import rule, and builds an app whose schema and OpenAPI document have the fourth area's operation and
 * path — from the copy's default module list, with nothing else of src/ touched.
 */
const ROOT = new URL("../../", import.meta.url).pathname;
const FIXTURE = join(ROOT, "test/fixtures/fourth-area");
const run = promisify(execFile);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p).map((f) => join(name, f)) : [name];
  });
}

/** The one line of the module list, and its import, added to a copy of app.ts. */
function joinModuleList(appTs: string): string {
  // Its entry last (after the transactions module, which the areas need before them).
  const listed = appTs.replace(
    /^(export const MODULES = \[\n(?:(?: {2}.*)?\n)*?)(\] as const;)$/m,
    "$1  terminalModule,\n$2",
  );
  const imported = listed.replace(
    /^(import \{ checkoutModule \} from "\.\/checkout\/index\.js";\n)/m,
    `$1import { terminalModule } from "./terminal/index.js";\n`,
  );
  if (imported === listed || listed === appTs) throw new Error("app.ts: MODULES or its imports not where expected");
  return imported;
}

describe("a fourth area is a copy-in folder plus its line in the module list", () => {
  let dir: string;
  let src: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "copy-in-area-"));
    src = join(dir, "src");
    cpSync(join(ROOT, "src"), src, { recursive: true });
    cpSync(FIXTURE, join(src, "terminal"), { recursive: true });
    for (const f of files(join(src, "terminal")).filter((f) => f.endsWith(".ts"))) {
      const p = join(src, "terminal", f);
      writeFileSync(p, readFileSync(p, "utf8").replaceAll(`"../../../src/`, `"../`));
    }
    writeFileSync(join(src, "app.ts"), joinModuleList(readFileSync(join(src, "app.ts"), "utf8")));
    // The project's compiler settings and packages, for the copy's src/ alone.
    const tsconfig = JSON.parse(readFileSync(join(ROOT, "tsconfig.json"), "utf8")) as Record<string, unknown>;
    const compilerOptions = { ...(tsconfig.compilerOptions as object), noEmit: false, sourceMap: false };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ ...tsconfig, compilerOptions, include: ["src"] }));
    cpSync(join(ROOT, "package.json"), join(dir, "package.json"));
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("touches nothing of src/ but app.ts, which gains the import and the entry of the new module", () => {
    const changed = files(src).filter((f) => {
      if (f.startsWith("terminal/")) return false;
      return readFileSync(join(src, f), "utf8") !== readFileSync(join(ROOT, "src", f), "utf8");
    });
    expect(changed).toEqual(["app.ts"]);
    const before = readFileSync(join(ROOT, "src/app.ts"), "utf8").split("\n");
    const after = readFileSync(join(src, "app.ts"), "utf8").split("\n");
    expect(after.filter((l) => !before.includes(l))).toEqual([
      `import { terminalModule } from "./terminal/index.js";`,
      "  terminalModule,",
    ]);
    expect(files(join(src, "terminal")).sort()).toEqual(files(FIXTURE).sort());
  });

  it("keeps the import rule, with the new folder in the areas' layer the module list derives", () => {
    const areas = areaFolders([...MODULES, terminalModule]);
    expect(areas).toContain("terminal");
    const layers = layersWith(areas);
    expect(unplaced({ src }, layers)).toEqual({ unlisted: [], missing: [] });
    expect(layerViolations({ src }, layers)).toEqual([]);
    expect(demoViolations({ src }, areas)).toEqual([]);
  });

  it("compiles (tsc on the copy), and its app, from the default MODULES, has the fourth area", async () => {
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    let started = Date.now();
    const out = await run(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")]).catch(
      (err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }),
    );
    expect(out.stdout).toBe("");
    console.log(`copy-in area: tsc on the copy took ${Date.now() - started} ms`);
    // The copy's own built app, in a process of its own (its modules are not this test's): what `npm run schema`
    // and /docs would show.
    started = Date.now();
    const script =
      "const app = await import(process.argv[1]);" +
      "const sdl = await app.schemaSdl(); const doc = await app.restOpenApi();" +
      "process.stdout.write(JSON.stringify({ sdl, paths: Object.keys(doc.paths), tags: doc.tags.map((t) => t.name) }));";
    const built = await run(process.execPath, ["--input-type=module", "-e", script, join(dir, "dist/src/app.js")]);
    const app = JSON.parse(built.stdout) as { sdl: string; paths: string[]; tags: string[] };
    console.log(`copy-in area: the copy's schema and OpenAPI document took ${Date.now() - started} ms`);
    expect(app.sdl).toMatch(/\n {2}terminalCharge\(input: TerminalChargeInput!\): /);
    expect(app.sdl).toMatch(/\nenum KeyKind \{[^}]*\bterminal\b/);
    expect(app.paths).toContain("/terminal/charge");
    expect(app.tags).toEqual([...areasOf(MODULES), terminalModule.area].map((a) => a?.openApiTag.name));
    // The original's app has none of it: the fourth area comes from the copy's MODULES line.
    expect(await schemaSdl()).not.toContain("terminalCharge");
  }, 180_000);
});
