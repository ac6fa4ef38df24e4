import { describe, it, expect } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
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

/** Where code, tests, benches and documents may point at a decision record. */
const citing = tracked.filter((f) => /^(src|test|bench|docs)\//.test(f) || f === "README.md");
/** The decision records (`0141-one-admin-token-rule.md`), and the files that may name the index itself. */
const records = readdirSync("docs/decisions").filter((f) => /^\d{4}-.*\.md$/.test(f));
const INDEX_READERS = ["test/house/decisions.test.ts", "test/repository.test.ts"];

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

describe("citations of the decision records", () => {
  it("name records that exist, by a number that matches their file", () => {
    const bad = citing.flatMap((f) =>
      text(f)
        .split("\n")
        .flatMap((line, i) => {
          const at = `${f}:${i + 1}`;
          // `docs/decisions/0141-one-admin-token-rule.md`, or `decisions/…` relative to docs/; the index's
          // instructions name the pattern (`NNNN-short-title.md`), not a record.
          const files = [...line.matchAll(/(?<![\w-])decisions\/([\w.-]+\.md)\b/g)]
            .map((m) => m[1] as string)
            .filter((r) => !r.startsWith("NNNN-") && !existsSync(join("docs/decisions", r)))
            .map((r) => `${at}: no docs/decisions/${r}`);
          // "decision 0141" in prose: a record with that number.
          const ids = [...line.matchAll(/\bdecisions? (\d{4})\b/gi)]
            .map((m) => m[1] as string)
            .filter((id) => !records.some((r) => r.startsWith(`${id}-`)))
            .map((id) => `${at}: no record ${id}`);
          // [decision 0141](…/0141-….md) and [0141](0141-….md): the number shown is the file's.
          const links = [...line.matchAll(/\[(?:decision )?(\d{4})\]\([^)\s]*?(\d{4})-[\w-]*\.md\)/gi)]
            .filter((m) => m[1] !== m[2])
            .map((m) => `${at}: ${m[0]}`);
          return [...files, ...ids, ...links];
        }),
    );
    expect(bad).toEqual([]);
  });

  it("point code, tests and benches at a record's file, not at a section of the old single-file decisions.md", () => {
    // docs/decisions.md is an index now: a section title quoted after it (`docs/decisions.md "Connection caps"`)
    // leads nowhere. Only the index's own test names it.
    const stale = citing
      .filter((f) => /^(src|test|bench)\//.test(f) && !INDEX_READERS.includes(f))
      .flatMap((f) =>
        text(f)
          .split("\n")
          .map((line, i) => ({ i, line }))
          .filter(({ line }) => /\bdecisions\.md\b/.test(line))
          .map(({ i, line }) => `${f}:${i + 1}: ${line.trim().slice(0, 120)}`),
      );
    expect(stale).toEqual([]);
  });
});
