// PayWay links through the real service (`serve`, production mode; the PayWay twin in the simulators' process,
// its API on a port of its own): (1) payments followed without a browser — N pending payments seeded with their
// sealed poll sessions, claimed by the service's sweep and polled every 3 s; PSS of the service's process tree
// and how late the polls arrive at the twin; (2) time to QR at 1 and 8 concurrent against the twin, beside
// Chromium alone doing the same job on the same page without the service (the link driver and pool in this
// process: the floor, decision 0165), plain puppeteer on that page, and a one-line page, all in the same run.
//   npx tsc -p tsconfig.build.json && node dist/bench/link-payway.js [--quick] [--monitors=2000]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { Browser } from "puppeteer-core";
import { SecretBox } from "../src/auth/secret-box.js";
import { BrowserPool, type PageResponse } from "../src/gateway-link/browser.js";
import { launchChromium, removeProfile } from "../src/gateway-link/chromium.js";
import { openLinkSession } from "../src/gateway-link/link-driver.js";
import { paywayLinkProtocol } from "../src/gateway-link/payway-protocol.js";
import type { LinkPollSession } from "../src/gateway-link/link-protocol.js";
import { sealPoll } from "../src/gateway-link/poll-store.js";
import { listProcs, memoryOf, processTree } from "../src/gateway-link/process-tree.js";
import { newId } from "../src/ids.js";
import { listOptionsHash, PAYWAY_PATHS } from "../src/upstreams/payway.js";
import { startServers, type Servers } from "./load.js";
import { cpuMs, createBenchDb, machineCpuMs, sleep, treeCpuMs } from "./proc.js";
import { ADMIN_TOKEN, SECRET_KEY } from "./support/service.js";
import { percentile, toMarkdown, type Section } from "./table.js";
import { adminClient, AUTH, createTenant, postJson, type BenchTenant } from "./tenant.js";

export interface PaywayBenchOptions {
  quick: boolean;
  /** Payments followed at once in phase 1. Default 2000 (quick: 200). */
  monitors?: number;
  log?: (line: string) => void;
}

const TARGETS = { monitors: 2000, pssMb: 1024, latenessP99Ms: 1000, floorShare: 0.8, p50At1Ms: 300 };
export const LINK = "/sim/payway/ABAPAYDEMO01";

export async function inPool(n: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

/** A twin client made as the page makes one (page visit, then list-payment-options), and what a poll needs. */
export async function twinClient(s: Servers, i: number) {
  const page = await fetch(s.sim + LINK);
  const html = await page.text();
  const cookies = page.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const abaData = JSON.parse(`"${/"aba_data":"([^"]+)"/.exec(html)?.[1] ?? ""}"`) as string;
  const requestTime = /"request_time":"(\d{14})"/.exec(html)?.[1] ?? "";
  const additional = JSON.stringify({ amount: `${1000 + i}.00` });
  const answer = await postJson<{ client_id: string; token: string; qr_string: string }>(
    s.paywayApi + PAYWAY_PATHS.listPaymentOptions,
    {
      additional_fields: additional,
      request_time: requestTime,
      aba_data: abaData,
      hash: listOptionsHash(requestTime, abaData, additional),
    },
    { origin: s.sim, referer: `${s.sim}/`, cookie: cookies, language: "en" },
  );
  return { amount: 1000 + i, cookies, requestTime, ...answer };
}

/** The poll session the service would store for a twin client (what the page's QR answer and request gave). */
export function pollSessionOf(s: Servers, c: Awaited<ReturnType<typeof twinClient>>): LinkPollSession {
  return {
    apiOrigin: s.paywayApi,
    token: c.token,
    clientId: c.client_id,
    requestTime: c.requestTime,
    cookies: c.cookies,
    origin: s.sim,
    referer: `${s.sim}/`,
    userAgent: null,
    language: "en",
    expireInSec: "180",
  };
}

/** Phase 1: N pending PayWay payments, written as generate writes them, due now for the service's sweep. */
async function seedFollowed(s: Servers, dbUrl: string, tenant: BenchTenant, n: number): Promise<string[]> {
  const box = new SecretBox(SECRET_KEY);
  const db = new pg.Pool({ connectionString: dbUrl, max: 8 });
  const clients: string[] = [];
  try {
    await inPool(n, 16, async (i) => {
      const c = await twinClient(s, i);
      const id = newId("txn");
      const now = new Date();
      const poll = sealPoll(box, id, pollSessionOf(s, c));
      await db.query(
        `insert into "transaction" (id, area, merchant_ref, api_key_ref, status, amount, currency, upstream_ref, qr, meta,
           request, upstream, expires_at, created_at, updated_at, next_check_at)
         values ($1, 'gateway_link', $2, $3, 'PENDING', $4, 'KHR', $5, $6, '{}', $7, $8, $9, $10, $10, $10)`,
        [
          id,
          tenant.merchantId,
          tenant.keyIds.gatewayLink,
          c.amount,
          c.client_id,
          c.qr_string,
          JSON.stringify({ amount: c.amount, currency: 116, meta: {} }),
          JSON.stringify({ linkUrl: s.sim + LINK, protocol: "payway", poll }),
          new Date(now.getTime() + 180_000),
          now,
        ],
      );
      clients.push(c.client_id);
    });
  } finally {
    await db.end();
  }
  return clients;
}

interface ClientPolls {
  polls: number;
  pollTimes: string[];
}

async function pollsOf(s: Servers, clients: string[]): Promise<Map<string, ClientPolls>> {
  const out = new Map<string, ClientPolls>();
  await inPool(clients.length, 16, async (i) => {
    const res = await fetch(`${s.sim}/sim/link/clients/${clients[i]}`);
    out.set(clients[i], (await res.json()) as ClientPolls);
  });
  return out;
}

async function followed(
  s: Servers,
  dbUrl: string,
  tenant: BenchTenant,
  n: number,
  holdMs: number,
  log: (l: string) => void,
) {
  const clients = await seedFollowed(s, dbUrl, tenant, n);
  log(`seeded ${clients.length} followed payments`);
  // Claimed by the sweep (≤ 500 a second) and polled from then on.
  const until = Date.now() + 30_000;
  for (;;) {
    const all = await pollsOf(s, clients);
    if ([...all.values()].every((c) => c.polls > 0) || Date.now() > until) break;
    await sleep(1000);
  }
  const holdStart = Date.now();
  await sleep(holdMs);
  const all = await pollsOf(s, clients);
  const gaps: number[] = [];
  for (const c of all.values()) {
    const times = c.pollTimes.map((t) => Date.parse(t)).filter((t) => t >= holdStart);
    for (let i = 1; i < times.length; i++) gaps.push(times[i] - times[i - 1] - 3000);
  }
  gaps.sort((a, b) => a - b);
  const polling = [...all.values()].filter((c) => c.pollTimes.some((t) => Date.parse(t) >= holdStart)).length;
  const mem = memoryOf(processTree(s.pids.service).map((p) => p.pid));
  const metrics = await (
    await fetch(`${s.service}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  ).text();
  const serviceP99 = Number(/^link_poll_lateness_p99_seconds (\S+)$/m.exec(metrics)?.[1] ?? NaN);
  return {
    serviceP99Ms: Math.round(serviceP99 * 1000),
    monitors: clients.length,
    polling,
    gaps: gaps.length,
    latenessP50Ms: Math.round(percentile(gaps, 50)),
    latenessP99Ms: Math.round(percentile(gaps, 99)),
    latenessMaxMs: Math.round(gaps[gaps.length - 1] ?? NaN),
    pssMb: Math.round(mem.pssKb / 1024),
    processes: mem.processes,
  };
}

interface Timing {
  concurrency: number;
  n: number;
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
  /** CPU of the process tree that did the work (the service and its Chromium; the floor's Chromium), per item. */
  cpuMs: number;
  /** Of which its root process (the service's Node; the floor's browser process), per item. */
  rootCpuMs: number;
  /** CPU of the whole machine per item (every process: PostgreSQL, the twin, this bench too). */
  machineCpuMs: number;
  /** Of the machine's, per item: the simulators' process (the twin's page and API) and PostgreSQL. */
  twinCpuMs: number;
  postgresCpuMs: number;
}

/** The PostgreSQL server's root process (its backends are its children), or null when it is not on this machine. */
function postgresRoot(): number | null {
  const procs = listProcs();
  const pg = procs.filter((p) => p.comm === "postgres");
  return pg.find((p) => !pg.some((q) => q.pid === p.ppid))?.pid ?? null;
}

async function timed(
  n: number,
  concurrency: number,
  cpuRoot: () => number | null,
  twinPid: number,
  one: (i: number) => Promise<void>,
): Promise<Timing> {
  const times: number[] = [];
  const pgRoot = postgresRoot();
  const [twinBefore, pgBefore] = [treeCpuMs(twinPid), treeCpuMs(pgRoot)];
  const cpuBefore = treeCpuMs(cpuRoot());
  const root = cpuRoot();
  const rootBefore = root === null ? 0 : cpuMs(root);
  const machineBefore = machineCpuMs();
  const started = performance.now();
  await inPool(n, concurrency, async (i) => {
    const t = performance.now();
    await one(i);
    times.push(performance.now() - t);
  });
  const elapsedS = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return {
    concurrency,
    n: times.length,
    p50Ms: Math.round(percentile(times, 50)),
    p99Ms: Math.round(percentile(times, 99)),
    perSecond: Math.round((times.length / elapsedS) * 10) / 10,
    cpuMs: Math.round((treeCpuMs(cpuRoot()) - cpuBefore) / Math.max(1, times.length)),
    rootCpuMs: Math.round(((root === null ? 0 : cpuMs(root)) - rootBefore) / Math.max(1, times.length)),
    machineCpuMs: Math.round((machineCpuMs() - machineBefore) / Math.max(1, times.length)),
    twinCpuMs: Math.round((treeCpuMs(twinPid) - twinBefore) / Math.max(1, times.length)),
    postgresCpuMs: Math.round((treeCpuMs(pgRoot) - pgBefore) / Math.max(1, times.length)),
  };
}

/** Chromium alone: a page of its own (context, renderer), a one-line page, its one API answer read, released. */
async function floorPage(pool: BrowserPool, url: string): Promise<void> {
  let settle!: () => void;
  const answered = new Promise<void>((resolve) => (settle = resolve));
  const lease = await pool.acquire({
    url,
    timeoutMs: 20_000,
    allowedOrigins: [new URL(url).origin],
    traffic: { wants: (u) => u.endsWith("/bench/floor/api"), onResponse: (_r: PageResponse) => settle() },
  });
  try {
    await lease.start();
    await answered;
  } finally {
    await lease.release();
  }
}

/**
 * The same job without the service: this process's pool drives the twin's page through the link driver (page,
 * amount, Continue, list-payment-options read) and closes it. What the service adds beyond it is its own cost.
 */
async function samePage(pool: BrowserPool, s: Servers, i: number): Promise<void> {
  await openLinkSession(pool, {
    url: s.sim + LINK,
    amount: String(3000 + i),
    currency: 116,
    timeoutMs: 20_000,
    protocol: paywayLinkProtocol(s.paywayApi),
  });
}

/**
 * Chromium alone on the twin's page, nothing of ours between: plain puppeteer in a browser of its own, a fresh
 * context per payment (as the pool isolates them), the page opened, the amount typed, Continue clicked, the
 * list-payment-options answer read, the context closed.
 */
async function plainPage(browser: Browser, s: Servers, i: number): Promise<void> {
  const context = await browser.createBrowserContext();
  try {
    const page = await context.newPage();
    await page.goto(s.sim + LINK, { waitUntil: "domcontentloaded", timeout: 20_000 });
    const answer = page.waitForResponse(
      (r) => r.url().endsWith(PAYWAY_PATHS.listPaymentOptions) && r.request().method() === "POST",
      { timeout: 20_000 },
    );
    await page.type("input[name=amount]", String(4000 + i));
    await page.click("#pw-continue");
    const body = (await (await answer).json()) as { qr_string?: string };
    if (typeof body.qr_string !== "string") throw new Error("the twin's page gave no QR");
  } finally {
    await context.close();
  }
}

async function timeToQr(s: Servers, tenant: BenchTenant, quick: boolean, log: (l: string) => void) {
  const admin = adminClient(s.service, ADMIN_TOKEN);
  const { createLinkConfig: l } = await admin<{ createLinkConfig: { id: string } }>(
    `mutation($i: LinkConfigInput!) { createLinkConfig(input: $i) { id } }`,
    { i: { merchantId: tenant.merchantId, name: "payway", url: s.sim + LINK, currency: 116, protocol: "payway" } },
  );
  const { createApiKey: k } = await admin<{ createApiKey: { apiKey: string } }>(
    `mutation($i: ApiKeyInput!) { createApiKey(input: $i) { apiKey } }`,
    { i: { merchantId: tenant.merchantId, kind: "gateway_link", linkConfigId: l.id } },
  );
  let failed = 0;
  const generate = async (i: number) => {
    try {
      const r = await postJson<{ data: { clientId: string } }>(
        `${s.service}/gateway-link/generate-qr`,
        { amount: 2000 + i, currency: 116 },
        AUTH.gatewayLink(k.apiKey),
      );
      // Declined at once, so its poll ends it and a few hundred followed payments do not pile up meanwhile.
      void postJson(`${s.sim}/sim/link/decline`, { clientId: r.data.clientId }).catch(() => undefined);
    } catch (err) {
      failed++;
      log(`generate failed: ${(err as Error).message.slice(0, 200)}`);
    }
  };
  const pool = new BrowserPool({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    maxPages: 8,
    extraArgs: ["--disable-features=LocalNetworkAccessChecks"],
  });
  const floorUrl = `${s.sim}/bench/floor`;
  const plain = await launchChromium(
    process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    ["--disable-features=LocalNetworkAccessChecks"],
    30_000,
  );
  try {
    for (let i = 0; i < 3; i++) await floorPage(pool, floorUrl);
    for (let i = 0; i < 3; i++) await samePage(pool, s, i);
    for (let i = 0; i < 3; i++) await plainPage(plain.browser, s, i);
    for (let i = 0; i < 3; i++) await generate(i);
    const [one, eight] = quick ? [8, 24] : [30, 120];
    // Alternated, so a slower moment of a shared machine falls on all of them.
    const floorCpu = () => pool.stats().pid;
    const plainCpu = () => plain.pid;
    const serviceCpu = () => s.pids.service;
    const twin = s.pids.sim;
    const floor1 = await timed(one, 1, floorCpu, twin, () => floorPage(pool, floorUrl));
    const plain1 = await timed(one, 1, plainCpu, twin, (i) => plainPage(plain.browser, s, i));
    const page1 = await timed(one, 1, floorCpu, twin, (i) => samePage(pool, s, i));
    const service1 = await timed(one, 1, serviceCpu, twin, generate);
    const floor8 = await timed(eight, 8, floorCpu, twin, () => floorPage(pool, floorUrl));
    const plain8 = await timed(eight, 8, plainCpu, twin, (i) => plainPage(plain.browser, s, i));
    const page8 = await timed(eight, 8, floorCpu, twin, (i) => samePage(pool, s, i));
    const service8 = await timed(eight, 8, serviceCpu, twin, generate);
    return { floor1, plain1, page1, service1, floor8, plain8, page8, service8, failed };
  } finally {
    await plain.browser.close().catch(() => undefined);
    await removeProfile(plain.userDataDir);
    await pool.close();
  }
}

export async function benchLinkPaywaySection(opts: PaywayBenchOptions): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const n = opts.monitors ?? (opts.quick ? 200 : TARGETS.monitors);
  const db = await createBenchDb();
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-bench-"));
  let servers: Servers | null = null;
  try {
    servers = await startServers(db.url, dataDir, { LINK_MAX_POLLS: String(n + 200) });
    const s = servers;
    const tenant = await createTenant(s.service, ADMIN_TOKEN, s.sim);
    // Time to QR first, on a service that follows nothing else yet.
    const q = await timeToQr(s, tenant, opts.quick, log);
    await sleep(5_000); // its declined payments end at their next poll
    const f = await followed(s, db.url, tenant, n, opts.quick ? 10_000 : 30_000, log);
    log(
      `${f.monitors} followed, ${f.polling} polling; lateness at the twin p50 ${f.latenessP50Ms} ms p99 ${f.latenessP99Ms} ms, in the service p99 ${f.serviceP99Ms} ms; ${f.pssMb} MB PSS`,
    );
    // The floor is Chromium alone doing the same job on the same page, without the service (decision 0165).
    const share = q.service8.perSecond / q.page8.perSecond;
    log(
      `time to QR: service p50 ${q.service1.p50Ms} ms @1, ${q.service8.perSecond}/s @8; floor ${q.page8.perSecond}/s @8`,
    );
    return section(f, q, share);
  } finally {
    for (const c of (servers?.children ?? []).reverse()) await c.stop();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function section(
  f: Awaited<ReturnType<typeof followed>>,
  q: Awaited<ReturnType<typeof timeToQr>>,
  share: number,
): Section {
  const mark = (ok: boolean) => (ok ? "met" : "NOT met");
  const t = (x: Timing) =>
    `p50 ${x.p50Ms} ms, p99 ${x.p99Ms} ms, ${x.perSecond}/s, ${x.cpuMs} ms CPU each (root ${x.rootCpuMs}); machine ${x.machineCpuMs} ms (twin ${x.twinCpuMs}, PostgreSQL ${x.postgresCpuMs})`;
  return {
    title: "PayWay links: payments followed without a browser, and time to QR against Chromium alone",
    columns: ["measure", "value", "target", ""],
    rows: [
      [
        `payments followed in one worker (polling)`,
        `${f.monitors} (${f.polling})`,
        `≥ ${TARGETS.monitors}`,
        mark(f.polling >= TARGETS.monitors),
      ],
      [`PSS of the worker's process tree`, `${f.pssMb} MB`, `< ${TARGETS.pssMb} MB`, mark(f.pssMb < TARGETS.pssMb)],
      [
        `poll lateness at the twin p50 / p99 / max`,
        `${f.latenessP50Ms} / ${f.latenessP99Ms} / ${f.latenessMaxMs} ms`,
        `p99 < ${TARGETS.latenessP99Ms} ms`,
        mark(f.latenessP99Ms < TARGETS.latenessP99Ms),
      ],
      [`poll lateness in the service (its timers) p99`, `${f.serviceP99Ms} ms`, "", ""],
      [
        `time to QR @1 (service)`,
        t(q.service1),
        `p50 ≤ ${TARGETS.p50At1Ms} ms`,
        mark(q.service1.p50Ms <= TARGETS.p50At1Ms),
      ],
      [`the twin's page, Chromium alone through our driver (no service) @1`, t(q.page1), "", ""],
      [`the twin's page, Chromium alone with plain puppeteer @1`, t(q.plain1), "", ""],
      [`a one-line page, Chromium alone @1`, t(q.floor1), "", ""],
      [
        `time to QR @8 (service)`,
        t(q.service8),
        `≥ ${TARGETS.floorShare * 100} % of the floor`,
        mark(share >= TARGETS.floorShare),
      ],
      [
        `the twin's page, Chromium alone through our driver (no service) @8: the floor`,
        t(q.page8),
        "",
        `${Math.round(share * 100)} %`,
      ],
      [
        `the twin's page, Chromium alone with plain puppeteer @8`,
        t(q.plain8),
        "",
        `service: ${Math.round((q.service8.perSecond / q.plain8.perSecond) * 100)} %`,
      ],
      [
        `a one-line page, Chromium alone @8 (no form, no cross-origin API)`,
        t(q.floor8),
        "",
        `service: ${Math.round((q.service8.perSecond / q.floor8.perSecond) * 100)} %`,
      ],
    ],
    notes: [
      `Followed: ${f.monitors} pending PayWay payments written as generate writes them (twin clients made through the twin's page and list-payment-options; poll sessions sealed), due at once: the service's sweep claims them and its watch polls each every 3 s. Lateness: the gap between two polls of one payment at the twin, minus 3 s (${f.gaps} gaps over the hold; the twin, in its own process, shares the machine's 2 cores); in the service: how late its timers fired the polls (its /metrics). PSS summed over the service process and its children (${f.processes} processes: no browser).`,
      `Time to QR (run first): POST /gateway-link/generate-qr against the twin (Chromium: page, amount, Continue, list-payment-options; each payment declined at once so it ends), alternated at the same concurrency with Chromium alone doing the same job on the same page without the service: through the link driver and browser pool in the bench process (page, amount, Continue, list-payment-options read, closed; the floor of the target, decision 0165), and with plain puppeteer in a browser of its own; and, for scale, Chromium alone on a one-line page that makes one same-origin call. CPU: the service process and its Chromium tree per generate (root: the service's Node); the bench's Chromium tree per page (root: its browser process); machine: every process on the machine per item (the bench's own included), of which the simulators' process (the twin) and PostgreSQL. Failed generates: ${q.failed}.`,
    ],
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const out = await benchLinkPaywaySection({
    quick: process.argv.includes("--quick"),
    monitors: arg("monitors") !== undefined ? Number(arg("monitors")) : undefined,
    log: (line) => console.error(line),
  });
  console.log(toMarkdown(out));
}
