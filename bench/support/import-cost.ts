import { spawnSync } from "node:child_process";
import { PROJECT_ROOT } from "./service.js";
import { median } from "../table.js";

/**
 * What importing `specifier` adds to a cold start: a fresh Node process imports `after` first (what the service
 * loads anyway, e.g. graphql), then `specifier`, and prints the milliseconds the second import took; the median of
 * `runs` processes.
 */
export function importMs(specifier: string, after: string | null = null, runs = 5): number {
  const first = after === null ? "" : `await import(${JSON.stringify(after)}); `;
  const script = `${first}const t = performance.now(); await import(${JSON.stringify(specifier)}); console.log(performance.now() - t);`;
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const out = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: PROJECT_ROOT,
      encoding: "utf8",
    });
    if (out.status !== 0) throw new Error(`importing ${specifier} failed: ${out.stderr}`);
    samples.push(Number(out.stdout.trim()));
  }
  return Math.round(median(samples) * 10) / 10;
}
