// Linux /proc readings for the browser's process tree: which processes it has, and how much
// memory they really use. RSS double-counts pages shared between Chromium's processes; PSS
// (proportional set size, from smaps_rollup) splits them, so a sum of PSS is the honest total.
// On other systems every function returns empty results.

import { readdirSync, readFileSync } from "node:fs";

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** One-letter state; "Z" is a zombie (exited, not yet reaped), which holds no memory. */
  state: string;
  comm: string;
}

export function readProc(pid: number): ProcInfo | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // "pid (comm) state ppid pgrp ..."; comm may itself contain spaces and parentheses.
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  return {
    pid,
    comm: stat.slice(stat.indexOf("(") + 1, close),
    state: fields[0] ?? "?",
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
  };
}

export function listProcs(): ProcInfo[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const procs: ProcInfo[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const info = readProc(Number(name));
    if (info) procs.push(info);
  }
  return procs;
}

/** The live (non-zombie) processes of the tree rooted at `rootPid`, root included. */
export function processTree(rootPid: number): ProcInfo[] {
  const procs = listProcs().filter((p) => p.state !== "Z");
  const children = new Map<number, ProcInfo[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const root = procs.find((p) => p.pid === rootPid);
  if (!root) return [];
  const tree: ProcInfo[] = [];
  const queue = [root];
  for (let p = queue.shift(); p; p = queue.shift()) {
    tree.push(p);
    queue.push(...(children.get(p.pid) ?? []));
  }
  return tree;
}

export interface MemoryUse {
  processes: number;
  rssKb: number;
  pssKb: number;
}

/** Sums RSS and PSS over the given processes; ones that exited meanwhile count as zero. */
export function memoryOf(pids: Iterable<number>): MemoryUse {
  const use: MemoryUse = { processes: 0, rssKb: 0, pssKb: 0 };
  for (const pid of pids) {
    let rollup: string;
    try {
      rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    } catch {
      continue;
    }
    use.processes += 1;
    use.rssKb += kbField(rollup, "Rss");
    use.pssKb += kbField(rollup, "Pss");
  }
  return use;
}

function kbField(rollup: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup);
  return match ? Number(match[1]) : 0;
}
