import { describe, it, expect } from "@jest/globals";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MODULES } from "../../src/app.js";
import { terminalModule } from "../fixtures/fourth-area/index.js";

/**
 * An area's docs stanza is its folder's README.md (docs/architecture.md, "The module map"): held here to its module
 * definition, and docs/architecture.md's list of the areas is the module list's.
 */
const ROOT = new URL("../../", import.meta.url).pathname;
const folderOf = (name: string) =>
  name === terminalModule.name ? join(ROOT, "test/fixtures/fourth-area") : join(ROOT, "src", name);

describe("each area's docs stanza lives in its folder and agrees with its module definition", () => {
  const areas = [...MODULES, terminalModule].filter((m) => m.area !== undefined);

  it.each(areas.map((m) => [m.name, m] as const))("%s/README.md", (name, def) => {
    const file = join(folderOf(name), "README.md");
    expect(existsSync(file)).toBe(true);
    const text = readFileSync(file, "utf8").replace(/\s+/g, " ");
    const key = def.area?.key;
    expect(text.startsWith(`# ${name}: `)).toBe(true);
    expect(text).toContain(
      `Keys of kind \`${key?.kind}\` (\`pqr_${key?.tag}_…\`), sent with \`x-auth-type: ${key?.authType}\``,
    );
    if (key?.target !== undefined) expect(text).toContain(`(\`${key.target.field}\`)`);
    for (const route of def.routes ?? []) expect(text).toContain(`\`${route.path}\``);
    expect(text.includes("**Demo** (`demo.ts`")).toBe(def.demo !== undefined);
  });

  it("docs/architecture.md's module map links areas of the module list by their stanzas, in the list's order", () => {
    // An area is documented by its folder's README (checked above against its definition): the module map links the
    // built-in ones, and an area copied in later needs no edit of docs/ — but no link may name a folder that is not an
    // area of the module list, or list them out of its order.
    const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
    const listed = [...doc.matchAll(/\]\(\.\.\/src\/([\w-]+)\/README\.md\)/g)].map((m) => m[1]);
    const areas = MODULES.filter((m) => m.area !== undefined).map((m) => m.name);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed).toEqual(areas.filter((a) => listed.includes(a)));
    expect(new Set(listed).size).toBe(listed.length);
  });
});
