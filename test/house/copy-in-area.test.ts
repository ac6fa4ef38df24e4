import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { MODULES } from "../../src/app.js";
import { terminalModule } from "../fixtures/fourth-area/index.js";
import { areaFolders, demoViolations, layersWith, layerViolations, unplaced } from "../support/architecture.js";

/**
 * docs/architecture.md, "Adding a fourth area", made literal: a copy of src/ with the fixture fourth area copied in
 * as src/terminal/ (its imports of `../../../src/` become `../`, the one difference between the fixture's place and
 * its place in src/) and its module joined to MODULES in the copy's app.ts (its import and its entry) typechecks,
 * and keeps the import rule, with nothing else of src/ touched.
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
  const listed = appTs.replace(/^(export const MODULES = \[\n(?: {2}\w+,\n)*)/m, "$1  terminalModule,\n");
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
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ ...tsconfig, include: ["src"] }));
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

  it("typechecks (tsc --noEmit on the copy)", async () => {
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const started = Date.now();
    const out = await run(process.execPath, [tsc, "--noEmit", "-p", join(dir, "tsconfig.json")]).catch(
      (err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }),
    );
    expect(out.stdout).toBe("");
    console.log(`copy-in area: tsc --noEmit on the copy took ${Date.now() - started} ms`);
  }, 180_000);
});
