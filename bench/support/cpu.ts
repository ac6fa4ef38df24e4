import { readFileSync } from "node:fs";

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); null elsewhere. */
export function cpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields overall.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * Seconds the process's main thread (Node's event loop) has spent runnable but waiting for a CPU, from
 * /proc/<pid>/schedstat: on a shared machine, the part of a latency that is the machine's, not the code's.
 */
export function runQueueSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[1]) / 1e9;
  } catch {
    return null;
  }
}

/** CPU use and CPU wait of some processes over a measured phase, as % of the phase's wall time (summed). */
export class ProcessClock {
  private readonly cpu0: (number | null)[];
  private readonly wait0: (number | null)[];
  private readonly t0 = performance.now();

  constructor(private readonly pids: (number | undefined)[]) {
    this.cpu0 = pids.map(cpuSeconds);
    this.wait0 = pids.map(runQueueSeconds);
  }

  read(): { cpuPct: number | null; waitPct: number | null } {
    const secs = (performance.now() - this.t0) / 1000;
    const delta = (now: (number | null)[], then: (number | null)[]): number | null => {
      if (now.some((v) => v === null) || then.some((v) => v === null)) return null;
      return (now.reduce<number>((sum, v, i) => sum + (v as number) - (then[i] as number), 0) / secs) * 100;
    };
    return {
      cpuPct: delta(this.pids.map(cpuSeconds), this.cpu0),
      waitPct: delta(this.pids.map(runQueueSeconds), this.wait0),
    };
  }
}
