// The runnable code blocks of the README and of its reference pages (docs/*.md): each is marked by an HTML comment
// (invisible when rendered) right above it, `<!-- readme-test: NAME -->`, so a test runs exactly what a reader copies.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The README and its reference pages, the files whose text the tests hold to the code. */
export const README = join(process.cwd(), "README.md");
export const DOCS = join(process.cwd(), "docs");
export function docsPages(): string[] {
  return readdirSync(DOCS)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => join(DOCS, f));
}

/** One reference page's text (`docs/NAME.md`). */
export function docsPage(name: string): string {
  return readFileSync(join(DOCS, `${name}.md`), "utf8");
}

/** The marked blocks of README.md and docs/*.md by name: the code between the fences, as written. */
export function readmeBlocks(): Map<string, { lang: string; code: string; file: string }> {
  const out = new Map<string, { lang: string; code: string; file: string }>();
  for (const file of [README, ...docsPages()]) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/<!-- readme-test: ([\w-]+) -->\n```(\w*)\n([\s\S]*?)\n```/g)) {
      const name = m[1] as string;
      if (out.has(name)) throw new Error(`two blocks marked readme-test: ${name} (${out.get(name)?.file}, ${file})`);
      out.set(name, { lang: m[2] as string, code: m[3] as string, file });
    }
  }
  return out;
}

/** Runs shell text with bash (-e: a failing command fails the block) in the project's directory. */
export function runShell(
  code: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn("bash", ["-e", "-o", "pipefail", "-c", code], {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve) =>
    child.once("exit", (exit) => {
      clearTimeout(timer);
      resolve({ code: exit, stdout, stderr });
    }),
  );
}
