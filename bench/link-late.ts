// The late watch's cost (issue 37): 10,000 expired PayWay payments watched for a late approval by one `serve`
// (production mode; the PayWay twin in the simulators' process, its API on a port of its own), against the same
// process watching none, measured in the same run. Each phase spreads the payments' next polls over their real
// cadence (one a minute in their first hour after expiry, one every 10 minutes after it), so a window of W seconds
// sees the real poll rate without waiting out a real hour: the service's sweep claims each when due, polls it once
// and parks it in the database again (docs/decisions/0188-link-late-watch-for-the-qrs-life.md).
//   npx tsc -p tsconfig.build.json && node dist/bench/link-late.js [--quick] [--payments=10000] [--window=30]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { SecretBox } from "../src/auth/secret-box.js";
import { sealPoll } from "../src/gateway-link/poll-store.js";
import { memoryOf } from "../src/gateway-link/process-tree.js";
import { newId } from "../src/ids.js";
import { cpuBetween, DbProbe } from "./db-probe.js";
import { inPool, LINK, pollSessionOf, twinClient } from "./link-payway.js";
import { startServers, type Servers } from "./load.js";
import { cpuMs, createBenchDb, sleep } from "./proc.js";
import { ADMIN_TOKEN, SECRET_KEY } from "./support/service.js";
import { median, toMarkdown, type Section } from "./table.js";
import { createTenant, type BenchTenant } from "./tenant.js";

export interface LateBenchOptions {
  quick: boolean;
  /** Expired payments in the late watch. Default 10,000 (quick: 1,000). */
  payments?: number;
  /** Seconds each phase is measured. Default 25 (quick: 8). */
  windowS?: number;
  log?: (line: string) => void;
}

/** Twin clients the payments' polls go to (each payment its own transaction and sealed session). */
const CLIENTS = 40;
const MINUTE = 60_000;

interface Phase {
  name: string;
  /** How long before now the payments expired, and the span their next polls are spread over (null: none due). */
  expiredAgoMs: number | null;
  spreadMs: number;
  /** Their late watch is ended first (next_check_at null): none watched. */
  unwatch?: boolean;
}

interface Measured {
  polls: number;
  serviceCpuMs: number;
  postgresCpuMs: number;
  twinCpuMs: number;
  pssMb: number;
  heapMb: number;
  heldMax: number;
  backlog: number;
}

/**
 * N expired PayWay payments with their sealed poll sessions, as generate and the watch write them; none due yet.
 * They share CLIENTS twin clients (what a poll costs does not depend on whose it is): the transaction's own client_id
 * column, unique per merchant, is a stand-in; the poll uses the one in its sealed session.
 */
async function seedExpired(
  s: Servers,
  db: pg.Pool,
  tenant: BenchTenant,
  n: number,
): Promise<{ ids: string[]; clientIds: string[] }> {
  const box = new SecretBox(SECRET_KEY);
  const clients: Awaited<ReturnType<typeof twinClient>>[] = [];
  await inPool(CLIENTS, 8, async (i) => void clients.push(await twinClient(s, i)));
  const ids: string[] = [];
  const now = new Date();
  for (let from = 0; from < n; from += 500) {
    const values: unknown[] = [];
    const rows: string[] = [];
    for (let i = from; i < Math.min(n, from + 500); i++) {
      const c = clients[i % clients.length];
      const id = newId("txn");
      ids.push(id);
      const poll = sealPoll(box, id, pollSessionOf(s, c));
      const upstream = JSON.stringify({ linkUrl: s.sim + LINK, protocol: "payway", poll });
      const request = JSON.stringify({ amount: c.amount, currency: 116, meta: {} });
      const k = values.length;
      rows.push(
        `($${k + 1}, 'gateway_link', $${k + 2}, $${k + 3}, 'EXPIRED', $${k + 4}, 'KHR', $${k + 5}, $${k + 6}, '{}', $${k + 7}, $${k + 8}, $${k + 9}, $${k + 9}, $${k + 9}, $${k + 9})`,
      );
      values.push(id, tenant.merchantId, tenant.keyIds.gatewayLink, c.amount, `bench-late-${i}`, c.qr_string, request);
      values.push(upstream, now);
    }
    await db.query(
      `insert into "transaction" (id, area, merchant_ref, api_key_ref, status, amount, currency, upstream_ref, qr, meta,
         request, upstream, expires_at, created_at, updated_at, completed_at) values ${rows.join(", ")}`,
      values,
    );
  }
  await db.query(`analyze "transaction"`);
  return { ids, clientIds: clients.map((c) => c.client_id) };
}

async function twinPolls(s: Servers, clientIds: string[]): Promise<number> {
  let sum = 0;
  for (const id of clientIds)
    sum += ((await (await fetch(`${s.sim}/sim/link/clients/${id}`)).json()) as { polls: number }).polls;
  return sum;
}

async function metric(s: Servers, name: string): Promise<number> {
  const text = await (
    await fetch(`${s.service}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  ).text();
  return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
}

/** One phase: the payments' expiry and next polls set, then W seconds measured (memory sampled every 2 s). */
async function measure(
  s: Servers,
  db: pg.Pool,
  dbUrl: string,
  run: { ids: string[]; clientIds: string[] },
  p: Phase,
  windowMs: number,
): Promise<Measured> {
  const { ids, clientIds } = run;
  if (p.unwatch) await db.query(`update "transaction" set next_check_at = null where id = any($1::text[])`, [ids]);
  if (p.expiredAgoMs !== null)
    await db.query(
      `update "transaction" set expires_at = now() - make_interval(secs => $2::float8 / 1000),
         completed_at = now() - make_interval(secs => $2::float8 / 1000),
         next_check_at = now() + make_interval(secs => random() * $3::float8 / 1000) where id = any($1::text[])`,
      [ids, p.expiredAgoMs, p.spreadMs],
    );
  // The first claims settle (a payment claimed polls within one interval).
  await sleep(3000);
  const probe = await DbProbe.open(dbUrl);
  try {
    const [cpu0, pg0, twin0, polls0] = [
      cpuMs(s.pids.service),
      await probe.backendCpu("service"),
      cpuMs(s.pids.sim),
      await twinPolls(s, clientIds),
    ];
    const pss: number[] = [];
    const heap: number[] = [];
    let heldMax = 0;
    for (let at = 0; at < windowMs; at += 2000) {
      await sleep(Math.min(2000, windowMs - at));
      pss.push(memoryOf([s.pids.service]).pssKb / 1024);
      heap.push((await metric(s, "nodejs_heap_size_used_bytes")) / 1024 / 1024);
      heldMax = Math.max(heldMax, await metric(s, "link_polls_followed"));
    }
    const [cpu1, pg1, twin1, polls1] = [
      cpuMs(s.pids.service),
      await probe.backendCpu("service"),
      cpuMs(s.pids.sim),
      await twinPolls(s, clientIds),
    ];
    const due = await db.query<{ n: string }>(
      `select count(*) as n from "transaction" where id = any($1::text[]) and next_check_at < now() - interval '2 seconds'`,
      [ids],
    );
    return {
      polls: polls1 - polls0,
      serviceCpuMs: cpu1 - cpu0,
      postgresCpuMs: cpuBetween(pg0, pg1),
      twinCpuMs: twin1 - twin0,
      pssMb: median(pss),
      heapMb: median(heap),
      heldMax,
      backlog: Number(due.rows[0]?.n ?? 0),
    };
  } finally {
    await probe.close();
  }
}

export async function benchLinkLateSection(opts: LateBenchOptions): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const n = opts.payments ?? (opts.quick ? 1000 : 10_000);
  const windowMs = (opts.windowS ?? (opts.quick ? 8 : 25)) * 1000;
  const bench = await createBenchDb();
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-bench-"));
  let servers: Servers | null = null;
  const db = new pg.Pool({ connectionString: bench.url, max: 4 });
  try {
    servers = await startServers(bench.url, dataDir);
    const s = servers;
    const tenant = await createTenant(s.service, ADMIN_TOKEN, s.sim);
    const { ids, clientIds } = await seedExpired(s, db, tenant, n);
    log(`seeded ${ids.length} expired payments over ${clientIds.length} twin clients`);
    const phases: Phase[] = [
      { name: "none watched (baseline)", expiredAgoMs: null, spreadMs: 0 },
      {
        name: `${n.toLocaleString("en-US")} late, first hour (1 poll/min each)`,
        expiredAgoMs: 30 * MINUTE,
        spreadMs: MINUTE,
      },
      {
        name: `${n.toLocaleString("en-US")} late, after it (1 poll/10 min each)`,
        expiredAgoMs: 3 * 60 * MINUTE,
        spreadMs: 10 * MINUTE,
      },
      // The same process once it has polled (its pools and code warm): memory to compare with, nothing watched.
      { name: "none watched again (baseline, warm)", expiredAgoMs: null, spreadMs: 0, unwatch: true },
    ];
    const out: Measured[] = [];
    for (const p of phases) {
      const m = await measure(s, db, bench.url, { ids, clientIds }, p, windowMs);
      log(
        `${p.name}: ${m.polls} polls, service ${m.serviceCpuMs} ms CPU, PostgreSQL ${m.postgresCpuMs} ms, PSS ${m.pssMb.toFixed(1)} MB, heap ${m.heapMb.toFixed(1)} MB, held ≤ ${m.heldMax}, backlog ${m.backlog}`,
      );
      out.push(m);
    }
    return section(phases, out, n, windowMs);
  } finally {
    await db.end();
    for (const c of (servers?.children ?? []).reverse()) await c.stop();
    await bench.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function section(phases: Phase[], m: Measured[], n: number, windowMs: number): Section {
  const pct = (ms: number) => `${((ms / windowMs) * 100).toFixed(1)} %`;
  // Beyond the mean of the two baselines (none watched, before and after).
  const bases = m.filter((_x, i) => phases[i].expiredAgoMs === null);
  const baseCpu = bases.reduce((a, x) => a + x.serviceCpuMs, 0) / bases.length;
  const perPoll = (i: number) =>
    m[i].polls === 0 ? "—" : `${((m[i].serviceCpuMs - baseCpu) / m[i].polls).toFixed(2)} ms`;
  const row = (label: string, f: (x: Measured, i: number) => string | number) => [label, ...m.map(f)];
  return {
    title: `PayWay late watch: CPU and memory of ${n.toLocaleString("en-US")} expired payments watched, beside none watched`,
    columns: ["measure", ...phases.map((p) => p.name)],
    rows: [
      row(
        "polls answered at the twin (per second)",
        (x) => `${x.polls} (${((x.polls * 1000) / windowMs).toFixed(1)}/s)`,
      ),
      row("service CPU (% of one core)", (x) => pct(x.serviceCpuMs)),
      row("PostgreSQL CPU for the service (% of one core)", (x) => pct(x.postgresCpuMs)),
      row("service CPU per poll beyond the baselines' mean", (_x, i) =>
        phases[i].expiredAgoMs === null ? "—" : perPoll(i),
      ),
      row("service PSS (median of samples)", (x) => `${x.pssMb.toFixed(1)} MB`),
      row("service JS heap used (median of samples)", (x) => `${x.heapMb.toFixed(1)} MB`),
      row("payments held in the worker's memory (max)", (x) => x.heldMax),
      row("polls overdue by > 2 s at the end", (x) => x.backlog),
      row("the twin's CPU (not ours)", (x) => pct(x.twinCpuMs)),
    ],
    notes: [
      `One \`serve\` (production mode) with ${n.toLocaleString("en-US")} EXPIRED PayWay payments written as the watch leaves them (sealed poll sessions over ${CLIENTS} twin clients); each phase sets their expiry and spreads their next polls over their real cadence, waits 3 s, then measures ${windowMs / 1000} s: the service process's CPU (its Node only; its idle Chromium is not charged), its PostgreSQL backends' CPU, its PSS and heap (sampled every 2 s). The baselines are the same process in the same run with the same rows in the table, none due: before any poll, and after the two phases (its connection pools and code warm; the one to compare memory with).`,
      "A late payment whose next poll is more than a lease (20 s) away is parked in the database and held by no worker: its cost is one claim, one poll and one update per poll, not memory (docs/decisions/0188-link-late-watch-for-the-qrs-life.md).",
    ],
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const out = await benchLinkLateSection({
    quick: process.argv.includes("--quick"),
    payments: arg("payments") !== undefined ? Number(arg("payments")) : undefined,
    windowS: arg("window") !== undefined ? Number(arg("window")) : undefined,
    log: (line) => console.error(line),
  });
  console.log(toMarkdown(out));
}
