// A competing CPU load for a bench step (BENCH_CPU_HOG=N): N busy-loop processes (`node -e "for(;;){}"`), not
// pinned to a core, at the default priority, for the whole step. A busy machine made on purpose: the
// service, PostgreSQL and the bench's own processes share the cores with them.
import { spawn, type ChildProcess } from "node:child_process";
import { cpuSeconds } from "./cpu.js";

export class CpuHog {
  private readonly started = performance.now();

  private constructor(private readonly procs: ChildProcess[]) {}

  /** How many busy loops BENCH_CPU_HOG asks for (0: none). */
  static fromEnv(): number {
    const n = Number(process.env.BENCH_CPU_HOG ?? 0);
    return Number.isInteger(n) && n > 0 ? n : 0;
  }

  static start(n: number): CpuHog {
    const procs = Array.from({ length: n }, () =>
      spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore", env: { PATH: process.env.PATH ?? "" } }),
    );
    return new CpuHog(procs);
  }

  /** Stops the loops; returns the CPU they got, in % of one core over their life (summed over the loops). */
  async stop(): Promise<number> {
    const cpu = this.procs.reduce((sum, p) => sum + (cpuSeconds(p.pid) ?? 0), 0);
    const secs = (performance.now() - this.started) / 1000;
    await Promise.all(
      this.procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once("exit", () => resolve());
            p.kill("SIGKILL");
          }),
      ),
    );
    return (cpu / secs) * 100;
  }
}
