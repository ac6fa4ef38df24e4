// A child process's output kept for the failure message instead of written into the test run's own output (a
// warning a service logs, such as Chromium's sandbox note when run as root, is no result of the run).
import type { ChildProcess } from "node:child_process";

/** Starts keeping what `child` writes to stdout and stderr, in the order it arrives (spawned with both piped). */
export function keepOutput(child: ChildProcess): () => string {
  let kept = "";
  const take = (chunk: Buffer) => {
    kept += chunk.toString("utf8");
  };
  child.stdout?.on("data", take);
  child.stderr?.on("data", take);
  return () => kept;
}

/** Runs `work`; a failure carries what the child wrote meanwhile. */
export async function withOutput<T>(output: () => string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof Error) err.message += `\n--- the process's output:\n${output()}`;
    throw err;
  }
}
