// How many payment-link monitors fit in one worker: opens N sessions against the simulated
// payment-link page through one BrowserPool, keeps them all polling, and measures the memory of
// this Node process plus the whole Chromium process tree (PSS is the honest sum; RSS counts
// shared pages once per process) and the median time to open a session (page → QR).
//
//   npx tsc -p tsconfig.build.json && node dist/bench/link-monitors.js [N] [--window] [--args="--flag --flag2"]

import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import express from "express";
import { BrowserPool } from "../src/gateway-link/browser.js";
import { simulatedLinkProtocol } from "../src/gateway-link/link-protocol.js";
import { openLinkSession, type LinkEvent, type LinkSession } from "../src/gateway-link/link-driver.js";
import { memoryOf, processTree } from "../src/gateway-link/process-tree.js";
import { createLinkSimulator } from "../src/simulators/link/index.js";
import type { Section } from "./table.js";

export interface LinkBenchResult {
  monitors: number;
  rssMb: number;
  pssMb: number;
  perMonitorMb: number;
  openMedianMs: number;
}

export interface LinkBenchOptions {
  /** Concurrent monitors to hold open. Default 100. */
  target?: number;
  /** Chromium flags added to the pool's defaults (for tuning runs). */
  chromiumArgs?: string[];
  /** The pool's page mode; "window" reproduces the windowed pages measured before tuning. */
  pageMode?: "hidden" | "window";
  /** Sessions being opened at the same time while ramping up. Default 4. */
  openConcurrency?: number;
  /** How long all monitors are held polling before memory is read. Default 10 s. */
  holdMs?: number;
  log?: (line: string) => void;
}

const MB = 1024;

export async function benchLinkMonitors(opts: LinkBenchOptions = {}): Promise<LinkBenchResult> {
  const target = opts.target ?? 100;
  const log = opts.log ?? (() => undefined);
  const sim = createLinkSimulator({
    makeQr: (amount, currency) => `KHQR-${amount}-${currency}-${randomBytes(4).toString("hex")}`,
  });
  const app = express();
  app.use(sim.router);
  app.use(sim.controls);
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pool = new BrowserPool({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    maxPages: target,
    extraArgs: opts.chromiumArgs,
    pageMode: opts.pageMode,
  });
  const sessions: LinkSession[] = [];
  const fatal: string[] = [];
  try {
    // Baseline: the browser running with no page of ours, so per-monitor cost is the increment.
    await (await pool.acquire({ url: "about:blank" })).release();
    await sleep(1_000);
    const baseline = measure(pool);
    log(`baseline: ${fmt(baseline.pssKb)} PSS, ${fmt(baseline.rssKb)} RSS, ${baseline.processes} processes`);

    const openTimes: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next < target) {
        const i = next++;
        const started = performance.now();
        const session = await openLinkSession(pool, {
          url: `${base}/sim/link/p/bench?currency=USD`,
          amount: `${1 + (i % 50)}.00`,
          currency: 840,
          timeoutMs: 60_000,
          protocol: simulatedLinkProtocol,
        });
        openTimes.push(performance.now() - started);
        sessions.push(session);
        void watchFatal(session, fatal);
        if (sessions.length % 20 === 0) log(`opened ${sessions.length}/${target}`);
      }
    };
    const rampStart = performance.now();
    await Promise.all(Array.from({ length: opts.openConcurrency ?? 4 }, worker));
    log(`opened ${target} in ${Math.round(performance.now() - rampStart)} ms`);

    const before = await pollCounts(base, sessions);
    const holdMs = opts.holdMs ?? 10_000;
    await sleep(holdMs);
    const total = measure(pool);
    const after = await pollCounts(base, sessions);
    const polling = sessions.filter((s) => (after.get(s.clientId) ?? 0) > (before.get(s.clientId) ?? 0)).length;
    const polls = [...after.values()].reduce((a, b) => a + b, 0) - [...before.values()].reduce((a, b) => a + b, 0);
    log(
      `polling: ${polling}/${target} monitors polled during the ${holdMs} ms hold (${(polls / (holdMs / 1000)).toFixed(0)} polls/s); fatal errors: ${fatal.length}`,
    );
    if (polling < target || fatal.length > 0)
      throw new Error(`not every monitor kept polling (${polling}/${target}, fatal: ${fatal.slice(0, 3).join("; ")})`);
    const node = memoryOf([process.pid]);
    log(
      `total: ${fmt(total.pssKb)} PSS, ${fmt(total.rssKb)} RSS, ${total.processes} processes (node ${fmt(node.pssKb)} PSS, chromium ${fmt(total.pssKb - node.pssKb)} PSS)`,
    );

    return {
      monitors: target,
      rssMb: round(total.rssKb / MB),
      pssMb: round(total.pssKb / MB),
      perMonitorMb: round((total.pssKb - baseline.pssKb) / MB / target),
      openMedianMs: Math.round(median(openTimes)),
    };
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
    await pool.close();
    server.closeAllConnections();
    server.close();
  }
}

/** The link-monitor section of `npm run bench`: 100 monitors (quick mode: 10, held 3 s). */
export async function benchLinkMonitorsSection(opts: {
  quick: boolean;
  log?: (line: string) => void;
}): Promise<Section> {
  const target = opts.quick ? 10 : 100;
  const holdMs = opts.quick ? 3_000 : 10_000;
  const r = await benchLinkMonitors({ target, holdMs, log: opts.log });
  return {
    title: "Gateway-link monitors held by one worker",
    columns: ["monitors", "PSS MB (Node + Chromium)", "RSS MB (sum)", "PSS MB per monitor", "open median ms"],
    rows: [[r.monitors, r.pssMb, r.rssMb, r.perMonitorMb, r.openMedianMs]],
    notes: [
      `${target} payment-link sessions opened 4 at a time against the simulated page through one BrowserPool, all polling once a second, held ${holdMs / 1000} s; every one must keep polling with no fatal error.`,
      "PSS (proportional set size, /proc/<pid>/smaps_rollup) is the honest sum over this Node process and the whole Chromium tree; RSS counts shared pages once per process. Per monitor = PSS above the idle browser, divided by the monitors.",
      ...(opts.quick
        ? ["Quick mode: 10 monitors, so the per-monitor figure carries the fixed costs of a small sample."]
        : ["Target: 100 monitors under 2 GiB PSS per worker (docs/decisions/0044-link-monitor-memory.md)."]),
    ],
  };
}

/** This Node process plus every process of the browser tree. */
function measure(pool: BrowserPool) {
  const pid = pool.stats().pid;
  const pids = [process.pid, ...(pid === null ? [] : processTree(pid).map((p) => p.pid))];
  return memoryOf(pids);
}

async function watchFatal(session: LinkSession, fatal: string[]): Promise<void> {
  for await (const event of session.events as AsyncIterable<LinkEvent>) {
    if (event.type === "error" && event.fatal) fatal.push(event.message);
  }
}

async function pollCounts(base: string, sessions: LinkSession[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const s of sessions) {
    const res = await fetch(`${base}/sim/link/clients/${s.clientId}`);
    counts.set(s.clientId, ((await res.json()) as { polls: number }).polls);
  }
  return counts;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const round = (n: number) => Math.round(n * 10) / 10;
const fmt = (kb: number) => `${(kb / MB).toFixed(0)} MB`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const target = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 100);
  const argsFlag = process.argv.find((a) => a.startsWith("--args="));
  const chromiumArgs = argsFlag ? argsFlag.slice("--args=".length).split(/\s+/).filter(Boolean) : [];
  const pageMode = process.argv.includes("--window") ? "window" : "hidden";
  const result = await benchLinkMonitors({ target, chromiumArgs, pageMode, log: (line) => console.log(line) });
  console.table([
    { ...result, pageMode, chromiumArgs: chromiumArgs.join(" ") || "(defaults)", underTwoGiB: result.pssMb < 2048 },
  ]);
}
