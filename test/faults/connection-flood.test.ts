import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { reportingChild } from "../support/reporting-child.js";
import { readdirSync, readFileSync } from "node:fs";
import { startDemoService, type DemoService } from "../support/demo-service.js";
import { Client, statusOf } from "../support/http.js";
import { AUTH } from "../support/app.js";

/**
 * The review's flood (19,900 half-sent requests from one address used every file descriptor; /healthz and every
 * tenant's generate failed, nothing was logged) against `npm start`'s default (embedded database, demo tenant,
 * default caps and timers) as a child process: 20,000 connections from 127.0.0.1, each sending half a request and
 * holding it, opened at 1,000 a second, while 127.0.0.2 asks /healthz and generates a QR every 200 ms, until every
 * flood connection has ended. Figures: docs/faults.md.
 *
 * - The service may have 16,384 descriptors (prlimit), fewer than the flood: before the caps it ran out of them.
 *   Its defaults follow: 6,553 connections per listener, 1,000 per address.
 * - Two flooding processes of 10,000 each: a process here may have 20,000 descriptors (ulimit -n, hard limit too).
 * - The flood comes from the default source address: binding thousands of sockets to a chosen one (bind to port
 *   0) slows to a crawl (8,000 such connects did not finish in two minutes, against 3 s unbound). So the service's
 *   own loopback calls to its simulators share the flooded address while it lasts.
 * - Paced, because a burst of 20,000 connects overflows the kernel's accept queue (511): dropped handshakes come
 *   back on TCP's retransmission timers (1, 3, 7, 15 s …) whatever the service does. FLOOD_RATE changes the pace,
 *   FLOOD_REOPEN_MS makes the flooders reopen what is closed (then the flood lasts FLOOD_MAX_MS).
 */
const CONNECTIONS = Number(process.env.FLOOD_CONNECTIONS ?? 20_000);
const RATE = Number(process.env.FLOOD_RATE ?? 1000);
const REOPEN_MS = Number(process.env.FLOOD_REOPEN_MS ?? 0);
const MAX_MS = Number(process.env.FLOOD_MAX_MS ?? 180_000);
const FLOODERS = 2;
const SERVICE_OPEN_FILES = 16_384;
const FLOOD_ADDRESS = "127.0.0.1";
const PROBE_ADDRESS = "127.0.0.2";
/** The default the service runs with here (HTTP_MAX_CONNECTIONS_PER_ADDRESS). */
const PER_ADDRESS = 1000;

/**
 * One flooding process (CommonJS for `node -e`): opens its share at a steady pace, each connection sending half a
 * request and holding it; reopens what closes after reopenMs (0: never). Reports JSON every second, and a final
 * line once every connection has ended (reset, answered or failed) or maxMs has passed.
 */
const FLOODER = `
const net = require("node:net");
const [port, count, maxMs, reopenMs, perTick] = process.argv.slice(1).map(Number);
const started = Date.now();
const live = new Set();
const s = { started: 0, connected: 0, refused: 0, answered: 0, failed: 0, peakOpen: 0, refusedMs: [] };
let open = 0;
function one() {
  if (Date.now() - started > maxMs) return;
  s.started++;
  const sock = net.connect({ port, host: "127.0.0.1" });
  live.add(sock);
  let bytes = 0, at = 0;
  sock.on("connect", () => {
    at = Date.now(); s.connected++; open++; s.peakOpen = Math.max(s.peakOpen, open);
    sock.write("GET /healthz HTTP/1.1\\r\\nhost: x\\r\\nx-half: ");
  });
  sock.on("data", (c) => (bytes += c.length));
  sock.on("error", () => {});
  sock.on("close", () => {
    live.delete(sock);
    if (at > 0) open--;
    if (bytes > 0) s.answered++;
    else if (at > 0) { s.refused++; s.refusedMs.push(Date.now() - at); }
    else s.failed++;
    if (reopenMs > 0) setTimeout(one, reopenMs);
  });
}
let begun = 0;
const ramp = setInterval(() => {
  for (let k = 0; k < perTick && begun < count; k++, begun++) one();
  if (begun >= count) clearInterval(ramp);
}, 10);
const tick = setInterval(() => {
  process.stdout.write(JSON.stringify({ ...s, open, refusedMs: undefined }) + "\\n");
  const ended = s.refused + s.answered + s.failed;
  if ((reopenMs === 0 && begun >= count && ended >= count) || Date.now() - started > maxMs) finish();
}, 1000);
function finish() {
  clearInterval(tick);
  for (const sock of live) sock.destroy();
  const ms = s.refusedMs.sort((a, b) => a - b);
  const cpu = process.cpuUsage();
  process.stdout.write(JSON.stringify({ ...s, open, refusedMs: undefined, final: true, cpuMs: (cpu.user + cpu.system) / 1000,
    refusedP50: ms[Math.floor(ms.length / 2)] ?? null, refusedP99: ms[Math.floor(ms.length * 0.99)] ?? null }) + "\\n");
  process.exit(0);
}
`;

interface FloodReport {
  started: number;
  connected: number;
  refused: number;
  answered: number;
  failed: number;
  peakOpen: number;
  open: number;
  final?: boolean;
  refusedP50?: number | null;
  refusedP99?: number | null;
  cpuMs?: number;
}

function flooder(port: number, count: number): { reports: FloodReport[]; done: Promise<FloodReport> } {
  return reportingChild<FloodReport>(FLOODER, [port, count, MAX_MS, REOPEN_MS, RATE / FLOODERS / 100], "a flooder");
}

/** CPU time a process has used (utime + stime from /proc/<pid>/stat, in clock ticks of 10 ms), in ms. */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)] ?? NaN;
const summary = (xs: number[]) => ({
  n: xs.length,
  p50: Math.round(quantile(xs, 0.5)),
  p99: Math.round(quantile(xs, 0.99)),
  max: Math.round(quantile(xs, 1)),
});

describe(`${CONNECTIONS} half-open connections from one address against the default service`, () => {
  let svc: DemoService;
  beforeAll(async () => {
    svc = await startDemoService("connection-flood", { openFiles: SERVICE_OPEN_FILES });
  }, 120_000);
  afterAll(async () => svc?.dispose());

  /**
   * /healthz and a generate from PROBE_ADDRESS every 200 ms until `stop()` says so, each on a new connection (as
   * other clients arrive while the flood goes on): latencies of 200s, and the rest.
   */
  async function probeUntil(stop: () => boolean, onTick: () => void = () => undefined) {
    const probe = new Client(svc.url, 2, PROBE_ADDRESS);
    const latency = { healthz: [] as number[], generate: [] as number[] };
    const failures: string[] = [];
    const body = Buffer.from(JSON.stringify({ amount: 1.25, currency: 840, expiredAfter: 600_000 }));
    const generate = { "content-type": "application/json", connection: "close", ...AUTH.qr(svc.demo.keys.qr) };
    try {
      while (!stop()) {
        onTick();
        const [h, g] = await Promise.allSettled([
          probe.send({ method: "GET", path: "/healthz", headers: { connection: "close" } }, 30_000),
          probe.send({ method: "POST", path: "/qr/generate", headers: generate, body }, 30_000),
        ]);
        for (const [what, r] of [
          ["healthz", h],
          ["generate", g],
        ] as const) {
          if (r.status === "fulfilled" && r.value.status === 200) latency[what].push(r.value.ms);
          else failures.push(`${what}: ${r.status === "fulfilled" ? r.value.status : String(r.reason)}`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      probe.close();
    }
    return { failures, healthzMs: summary(latency.healthz), generateMs: summary(latency.generate) };
  }

  it("another address's /healthz and generate keep answering; the flood holds at most its cap, logged once", async () => {
    const pid = svc.service.pid as number;
    expect(readFileSync(`/proc/${pid}/limits`, "utf8")).toMatch(
      new RegExp(`Max open files\\s+${SERVICE_OPEN_FILES}\\s`),
    );
    const fds = () => readdirSync(`/proc/${pid}/fd`).length;
    const baselineUntil = Date.now() + 10_000;
    const before = await probeUntil(() => Date.now() > baselineUntil);
    const baselineFds = fds();
    const cpuBefore = cpuMsOf(pid);
    const started = Date.now();
    const port = Number(new URL(svc.url).port);
    const floods = Array.from({ length: FLOODERS }, () => flooder(port, CONNECTIONS / FLOODERS));
    let ended = 0;
    void Promise.allSettled(floods.map((f) => f.done)).then(() => (ended = Date.now()));
    let peakFds = baselineFds;
    const during = await probeUntil(
      () => ended > 0,
      () => (peakFds = Math.max(peakFds, fds())),
    );
    const finals = await Promise.all(floods.map((f) => f.done));
    const sum = (k: keyof FloodReport) => finals.reduce((n, f) => n + Number(f[k] ?? 0), 0);
    const figures = {
      connectsPerSecond: RATE,
      reopenMs: REOPEN_MS,
      floodSeconds: Math.round((ended - started) / 1000),
      attempts: sum("started"),
      resetWithoutAnswer: sum("refused"),
      answered408: sum("answered"),
      connectFailed: sum("failed"),
      stillOpenAtEnd: sum("open"),
      resetAfterConnectMs: {
        p50: Math.max(...finals.map((f) => f.refusedP50 ?? 0)),
        p99: Math.max(...finals.map((f) => f.refusedP99 ?? 0)),
      },
      serviceFds: { before: baselineFds, peak: peakFds },
      cpuMs: { service: cpuMsOf(pid) - cpuBefore, flooders: Math.round(sum("cpuMs")) },
      probeBefore: before,
      probeDuring: during,
    };
    console.log(JSON.stringify(figures, null, 2));

    expect(during.failures).toEqual([]);
    expect(during.generateMs.n).toBeGreaterThan(10);
    expect(figures.attempts).toBeGreaterThanOrEqual(CONNECTIONS);
    // Every flood connection ended: reset unanswered over the cap, or 408 once the headers timer ran out.
    if (REOPEN_MS === 0) expect(figures.stillOpenAtEnd).toBe(0);
    expect(figures.resetWithoutAnswer).toBeGreaterThan(figures.answered408);
    expect(figures.answered408).toBeGreaterThanOrEqual(PER_ADDRESS);
    // The service never held much more than the cap (the probe, the database and the simulators are in the rest).
    expect(peakFds - baselineFds).toBeLessThan(PER_ADDRESS + 200);
    const warned = svc.service.grep(/connection limit per address reached/);
    expect(warned.length).toBeGreaterThanOrEqual(1);
    expect(warned.length).toBeLessThanOrEqual(Math.ceil((ended - started) / 60_000));
    // The default service writes readable lines (`address=…`); JSON lines say `"address":"…"`.
    expect(warned[0]).toMatch(new RegExp(`"address":"${FLOOD_ADDRESS}"|address=${FLOOD_ADDRESS}(\\s|$)`));
    expect(svc.service.exit).toBeNull();
    expect(await statusOf(`${svc.url}/readyz`)).toBe(200);
  });
});
