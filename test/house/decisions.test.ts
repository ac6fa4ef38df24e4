import { describe, it, expect } from "@jest/globals";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * docs/decisions.md is the index of the decision records in docs/decisions/: a reader finds every decision from
 * it, every record it names exists, each record has the same four parts, and a record that no longer holds
 * points at one that does.
 */
const INDEX = "docs/decisions.md";
const DIR = "docs/decisions";
const index = readFileSync(INDEX, "utf8");
const records = readdirSync(DIR)
  .filter((f) => f.endsWith(".md") && f !== "TEMPLATE.md")
  .sort();
const text = (f: string) => readFileSync(join(DIR, f), "utf8");
/** Links from the index into the records' folder, as written (`decisions/0001-one-table-for-three-areas.md`). */
const indexLinks = [...index.matchAll(/\]\((decisions\/[^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1] as string);
const idOf = (f: string) => f.slice(0, 4);
const SECTIONS = ["Context", "Decision", "Consequences", "Measured"];
/** "superseded by 0042", "superseded in part by [0042](0042-x.md)": the id it names. */
const supersededBy = (s: string) =>
  [...s.matchAll(/superseded (?:in part )?by \[?(\d{4})\b/gi)].map((m) => m[1] as string);
/** A status as the index writes it: record links reduced to their ids. */
const plainStatus = (s: string) => s.replace(/\[(\d{4})\]\([^)]*\)/g, "$1").trim();

describe("the decision records and their index", () => {
  it("has records, each named NNNN-words.md with a unique number", () => {
    expect(records.length).toBeGreaterThan(0);
    expect(records.filter((f) => !/^\d{4}-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/.test(f))).toEqual([]);
    const ids = records.map(idOf);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it("links every record from the index exactly once", () => {
    const counts = records.map((f) => ({ f, links: indexLinks.filter((l) => l === `decisions/${f}`).length }));
    expect(counts.filter((c) => c.links !== 1)).toEqual([]);
  });

  it("links only files that exist", () => {
    expect(indexLinks.filter((l) => !existsSync(join("docs", l)))).toEqual([]);
  });

  it("gives every record a title with its number and the four sections, in order", () => {
    const bad = records.flatMap((f) => {
      const body = text(f);
      const problems: string[] = [];
      if (!body.startsWith(`# ${idOf(f)}. `)) problems.push(`${f}: title is not "# ${idOf(f)}. …"`);
      const at = SECTIONS.map((s) => body.search(new RegExp(`^## ${s}\\s*$`, "m")));
      SECTIONS.forEach((s, i) => {
        if (at[i] === -1) problems.push(`${f}: no "## ${s}"`);
      });
      if (at.every((p) => p !== -1) && at.some((p, i) => i > 0 && p < at[i - 1]!))
        problems.push(`${f}: sections out of order`);
      return problems;
    });
    expect(bad).toEqual([]);
  });

  it('names an existing record wherever it says "superseded by NNNN"', () => {
    const ids = new Set(records.map(idOf));
    const sources = [{ f: INDEX, body: index }, ...records.map((f) => ({ f, body: text(f) }))];
    const dangling = sources.flatMap(({ f, body }) =>
      supersededBy(body)
        .filter((id) => !ids.has(id))
        .map((id) => `${f}: ${id}`),
    );
    expect(dangling).toEqual([]);
  });

  it("shows each record's status in the index as the record states it", () => {
    const rowStatus = new Map(
      [...index.matchAll(/^\| (\d{4}) \| \[.*?\]\(decisions\/[^)]+\) \| (.*) \|$/gm)].map((m) => [m[1], m[2]!.trim()]),
    );
    const differ = records.flatMap((f) => {
      const own = /^- Status: (.*)$/m.exec(text(f))?.[1];
      const listed = rowStatus.get(idOf(f));
      return own !== undefined && listed !== undefined && plainStatus(own) === listed ? [] : [{ f, own, listed }];
    });
    expect(differ).toEqual([]);
  });
});
