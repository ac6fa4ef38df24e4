import { spawn } from "node:child_process";

/** What a load child writes, one JSON line at a time; its last line is marked `final`. */
export interface ChildReport {
  final?: boolean;
}

/**
 * A load generator run as a child Node process (`script` given to `node -e` with `args`), which reports on its
 * standard output as JSON lines: every report as it arrives, and the final one once the child exits (a child that
 * exits without it fails `done`, naming `who`).
 */
export function reportingChild<R extends ChildReport>(
  script: string,
  args: (string | number)[],
  who: string,
): { reports: R[]; done: Promise<R> } {
  const child = spawn(process.execPath, ["-e", script, ...args.map(String)], { stdio: ["ignore", "pipe", "inherit"] });
  const reports: R[] = [];
  let partial = "";
  child.stdout.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    for (const l of lines) if (l.trim()) reports.push(JSON.parse(l) as R);
  });
  const done = new Promise<R>((resolve, reject) =>
    child.once("exit", () => {
      const last = reports.at(-1);
      if (last?.final) resolve(last);
      else reject(new Error(`${who} exited without the final report (${reports.length} reports)`));
    }),
  );
  return { reports, done };
}
