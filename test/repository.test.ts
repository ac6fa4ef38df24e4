import { describe, it, expect } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

/**
 * The repository stands alone: a fresh clone must not send its reader to files it does not have (planning notes,
 * style guides or contracts kept outside it), and every path its documents point at exists.
 */
const tracked = execFileSync("git", ["ls-files"], { encoding: "utf8" })
  .split("\n")
  .filter((f) => f !== "" && existsSync(f) && !/\.(png|jpg|ico)$|package-lock\.json$/.test(f));
const text = (f: string) => readFileSync(f, "utf8");
// Assembled from parts, so that this file names none of them either.
const OUTSIDE = new RegExp(
  [
    ...["DESIGN", "STYLE", "interface", "stack"].map((n) => `\\b${n}\\.md\\b`),
    "\\bresearch/",
    "\\bspec/interface",
    ["\\.\\.", "shared\\b"].join("/"),
    ["", "work", "shared"].join("/"),
  ].join("|"),
);

/** Paths the documents name that are not files of the repository on purpose. */
const NOT_FILES = [
  "test/artifacts/", // written by test runs (screenshots, logs), git-ignored
  "src/terminal", // docs/architecture.md's worked example of adding a fourth area
];

describe("the repository refers only to files it contains", () => {
  it("no file names a document kept outside the repository", () => {
    // This file spells the names out to look for them.
    const hits = tracked
      .filter((f) => f !== "test/repository.test.ts")
      .flatMap((f) =>
        text(f)
          .split("\n")
          .map((line, i) => ({ f, i, line }))
          .filter(({ line }) => OUTSIDE.test(line))
          .map(({ f, i, line }) => `${f}:${i + 1}: ${line.trim().slice(0, 120)}`),
      );
    expect(hits).toEqual([]);
  });

  it("every link and repository path in the Markdown documents exists", () => {
    const missing: string[] = [];
    for (const f of tracked.filter((x) => x.endsWith(".md"))) {
      const body = text(f);
      for (const m of body.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(normalize(join(dirname(f), target)))) missing.push(`${f}: link ${target}`);
      }
      // Paths in the text (`src/qr/qr-service.ts`); a leading "/" is a URL path of the service, not a file.
      for (const m of body.matchAll(/(?<![/\w.-])((?:src|test|docs|bench|deploy|\.ci)\/[\w./-]*\w)/g)) {
        const p = m[1] as string;
        if (NOT_FILES.some((prefix) => p.startsWith(prefix))) continue;
        const candidates = [p, p.replace(/\.js$/, ".ts")];
        if (!candidates.some((c) => existsSync(c))) missing.push(`${f}: ${p}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("every file the compose file mounts or builds from exists", () => {
    const compose = text("docker-compose.yml");
    const mounts = [...compose.matchAll(/^\s*- (\.\/[^:\s]+):/gm)].map((m) => m[1] as string);
    expect(mounts.length).toBeGreaterThan(0);
    for (const p of [...mounts, "Dockerfile"]) expect({ p, exists: existsSync(p) }).toEqual({ p, exists: true });
  });
});
