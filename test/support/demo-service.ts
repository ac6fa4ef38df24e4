// `npm start` as a newcomer runs it: `node dist/src/main.js serve` with nothing configured (embedded
// database, demo tenant, simulators), plus the admin CLI run against it the way the README says.

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ServiceProcess } from "./cluster.js";
import type { DemoFile } from "../../src/demo/seed.js";
import { copyDemoTemplate, demoProcess } from "./demo-template.js";

const MAIN = join(process.cwd(), "dist", "src", "main.js");

export interface DemoService {
  service: ServiceProcess;
  url: string;
  demo: DemoFile;
  dispose(): Promise<void>;
}

/**
 * `openFiles`: the service's descriptor limit (see ServiceProcess). `fresh`: the first start on an empty DATA_DIR;
 * otherwise the service starts on a copy of the run's demo data directory (test/support/demo-template.ts).
 */
export async function startDemoService(
  name: string,
  options: { openFiles?: number; fresh?: boolean } = {},
): Promise<DemoService> {
  const service = await demoProcess(name, { openFiles: options.openFiles });
  if (options.fresh !== true) await copyDemoTemplate(service.dataDir);
  await service.start();
  const demo = JSON.parse(readFileSync(join(service.dataDir, "demo.json"), "utf8")) as DemoFile;
  return { service, url: service.url, demo, dispose: () => service.dispose() };
}

/** `npm run admin -- <args>` as a child process next to the demo's DATA_DIR; every output line kept. */
export class AdminCli {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, [MAIN, "admin", ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let partial = "";
    const take = (chunk: Buffer) => {
      const parts = (partial + chunk.toString("utf8")).split("\n");
      partial = parts.pop() ?? "";
      this.lines.push(...parts.filter((l) => l.trim()));
    };
    this.child.stdout?.on("data", take);
    this.child.stderr?.on("data", take);
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  /** Resolves with the first line matching `re` (rejects if the process exits first or after timeoutMs). */
  async line(re: RegExp, timeoutMs = 20_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      const hit = this.lines.find((l) => re.test(l));
      if (hit) return hit;
      if (exited || Date.now() > until)
        throw new Error(`no line matching ${re} (${exited ? "exited" : "timeout"}):\n${this.lines.join("\n")}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGINT");
    return this.exited;
  }
}
