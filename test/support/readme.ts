// The README's runnable code blocks: each is marked by an HTML comment (invisible when rendered) right above it,
// `<!-- readme-test: NAME -->`, so a test runs exactly what a reader copies.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const README = join(process.cwd(), "README.md");

/** The marked blocks of README.md by name: the code between the fences, as written. */
export function readmeBlocks(): Map<string, { lang: string; code: string }> {
  const text = readFileSync(README, "utf8");
  const out = new Map<string, { lang: string; code: string }>();
  for (const m of text.matchAll(/<!-- readme-test: ([\w-]+) -->\n```(\w*)\n([\s\S]*?)\n```/g))
    out.set(m[1] as string, { lang: m[2] as string, code: m[3] as string });
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
