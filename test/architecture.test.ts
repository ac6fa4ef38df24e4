import { describe, it, expect } from "@jest/globals";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

/**
 * The import rule of docs/architecture.md: a file imports files of its own room (folder, or top-level
 * file) and rooms of lower layers, never a room of its own layer or above. app.ts is the only place where
 * modules meet. The layers, lowest first:
 */
const LAYERS: string[][] = [
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
  ["qr", "gateway", "gateway-link", "dashboard", "checkout"],
  ["app.ts", "index.ts"],
  ["demo"],
  ["main.ts"],
];

const SRC = new URL("../src/", import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === "public" ? [] : sources(p);
    return p.endsWith(".ts") ? [p] : [];
  });
}

/** The dashboard's browser code (plain JS, served as is). */
function jsSources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return jsSources(p);
    return p.endsWith(".js") ? [p] : [];
  });
}

const roomOf = (file: string) => relative(SRC, file).split("/")[0] as string;
const layerOf = (room: string) => LAYERS.findIndex((l) => l.includes(room));

function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
    out.push(normalize(join(dirname(file), (m[1] as string).replace(/\.js$/, ".ts"))));
  }
  return out;
}

describe("the module layering (docs/architecture.md)", () => {
  const files = sources(SRC);

  it("places every room of src/ in exactly one layer", () => {
    const rooms = [...new Set(files.map(roomOf))].sort();
    expect(rooms.filter((r) => layerOf(r) < 0)).toEqual([]);
    expect(LAYERS.flat().filter((r) => !rooms.includes(r))).toEqual([]);
  });

  it("has no import from a room of the same layer or above", () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = roomOf(file);
      for (const target of imports(file)) {
        const to = roomOf(target);
        if (to !== from && layerOf(to) >= layerOf(from))
          violations.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("keeps the simulators out of production code: only src/demo/ imports src/simulators/", () => {
    // The upstream twins stand in for real upstreams in demo mode and tests; an area's own folder must not carry them.
    const violations: string[] = [];
    for (const file of files) {
      const from = roomOf(file);
      if (from === "simulators" || from === "demo") continue;
      for (const target of imports(file))
        if (roomOf(target) === "simulators") violations.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
    expect(violations).toEqual([]);
  });

  it("main.ts reaches src/demo/ only by a dynamic import, where demo mode is on", () => {
    const text = readFileSync(join(SRC, "main.ts"), "utf8");
    const statics = [...text.matchAll(/^import\s[^;]*?from\s*"(\.\/demo\/[^"]+)"/gm)].map((m) => m[1]);
    expect(statics).toEqual([]);
    const dynamic = [...text.matchAll(/(.*)await import\("\.\/demo\/index\.js"\)/g)].map((m) => m[1] as string);
    expect(dynamic).toHaveLength(1);
    // The one dynamic import is guarded by the demo settings (SIMULATORS, or DEMO's seeding).
    expect(dynamic[0]).toMatch(/config\.simulators/);
  });

  it("reads imports the way the rule needs (a violation is caught)", () => {
    // The scanner must see type-only and re-exporting imports, or the rule above could pass unseen.
    const app = imports(join(SRC, "app.ts")).map((f) => relative(SRC, f));
    expect(app).toEqual(expect.arrayContaining(["config.ts", "module.ts", "qr/index.ts"]));
    const webhooks = imports(join(SRC, "webhooks/index.ts")).map((f) => relative(SRC, f));
    expect(webhooks).toContain("webhooks/outbox-fanout.ts");
  });

  it("has no line longer than 140 characters (Prettier wraps code at 120; strings and comments by hand)", () => {
    const long: string[] = [];
    const all = [...files, ...jsSources(join(SRC, "dashboard/public"))];
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
