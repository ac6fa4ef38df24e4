import { describe, it, expect } from "@jest/globals";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { NODE_MAJOR_NEEDED, nodeVersionProblem } from "../../src/node-version.js";

/** The service's entry run by a given Node binary: exit code and every non-empty line it wrote. */
function runMain(node: string, nodeArgs: string[], args: string[]): { code: number | null; lines: string[] } {
  const r = spawnSync(node, [...nodeArgs, "dist/src/main.js", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NODE_OPTIONS: "" },
    encoding: "utf8",
    timeout: 30_000,
  });
  const lines = `${r.stdout}\n${r.stderr}`.split("\n").filter((l) => l.trim() !== "");
  return { code: r.status, lines };
}

/** The machine's own Node when it is older than the one we need (Debian ships 20), else null. */
function olderSystemNode(): string | null {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node"]) {
    try {
      const version = execFileSync(candidate, ["--version"], { encoding: "utf8" }).trim().replace(/^v/, "");
      if (Number(version.split(".")[0]) < NODE_MAJOR_NEEDED) return candidate;
    } catch {
      // not installed there
    }
  }
  return null;
}

const ONE_LINE = new RegExp(
  `^Start-up failed: this service needs Node\\.js ${NODE_MAJOR_NEEDED} or newer and this is Node\\.js [\\d.]+; ` +
    `.*npx node dist/src/main\\.js`,
);

describe("the Node version is checked before anything that needs it loads", () => {
  it("names the version needed and how to get it, for old versions only", () => {
    expect(nodeVersionProblem("20.20.2")).toMatch(/needs Node\.js 24 or newer and this is Node\.js 20\.20\.2/);
    expect(nodeVersionProblem("23.11.0")).not.toBeNull();
    expect(nodeVersionProblem("24.0.0")).toBeNull();
    expect(nodeVersionProblem("26.1.0")).toBeNull();
  });

  it.each([["serve"], ["api"], ["worker"], ["admin", "help"]])(
    "`node dist/src/main.js %s` on an older Node stops with one line and exit code 1",
    (...args) => {
      // Node reports the version it was asked to pretend; the check reads nothing else.
      const fake = `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.20.2"})`;
      const r = runMain(process.execPath, ["--import", fake], args);
      expect(r.code).toBe(1);
      expect(r.lines).toHaveLength(1);
      expect(r.lines[0]).toMatch(ONE_LINE);
    },
  );

  const oldNode = olderSystemNode();
  const oldNpm = oldNode === null ? null : join(dirname(oldNode), "npm");
  (oldNpm !== null && existsSync(oldNpm) ? it : it.skip)(
    "`npm ci` with the machine's older Node says one line, not a page of engine warnings (dry run of the lockfile)",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "pqr-npm-ci-"));
      try {
        for (const f of ["package.json", "package-lock.json", ".npmrc"]) copyFileSync(f, join(dir, f));
        const r = spawnSync(oldNpm as string, ["ci", "--dry-run", "--ignore-scripts"], {
          cwd: dir,
          env: { PATH: `${dirname(oldNode as string)}:/usr/bin:/bin`, HOME: process.env.HOME ?? "/tmp" },
          encoding: "utf8",
          timeout: 120_000,
        });
        expect(r.status).toBe(0);
        // A dry run lists each package it would add; everything else is what a newcomer reads.
        const said = `${r.stdout}\n${r.stderr}`.split("\n").filter((l) => l.trim() !== "" && !/^add /.test(l));
        expect(said).toEqual([expect.stringMatching(/^added \d+ packages in/)]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    150_000,
  );
  (oldNode === null ? it.skip : it)(
    "the machine's own older Node gets the same one line, not an error from inside a dependency",
    () => {
      const r = runMain(oldNode as string, [], ["serve"]);
      expect(r.code).toBe(1);
      expect(r.lines).toEqual([expect.stringMatching(ONE_LINE)]);
    },
  );
});
