import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { linkModule } from "../../src/gateway-link/index.js";
import { memoryOf, processTree } from "../../src/gateway-link/process-tree.js";
import { createTenant, post, startTestApp, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { createFaultsDatabase } from "../support/db.js";
import { sleep, waitFor } from "../support/wait.js";

/**
 * The review's finding: a tenant's PayWay payments, each followed through a page held for it once PayWay refused
 * the worker's own polls (for its 180 s and then its late watch), took every page of the worker, and every other
 * tenant's generate failed with 502 for as long. Here one worker (the service in this process, its PayWay twin
 * refusing every poll that is not a browser's) with LINK_MAX_MONITORS=8 (28 pages before the shares) and a share
 * of 4 held pages per merchant: tenant A generates as fast as it can from 12 loops the whole time (a payment it is
 * refused, it asks again 200 ms later), and tenant B's generates are timed, each paid at once, in 3 runs of 20.
 * Asserted (with the shares): every B generate answered 200, p99 under 5 s in every run; A held at most its share.
 * The figures (and the memory of a held page) are printed; docs/faults.md has them, before and after.
 * POOL_SHARES_RUNS and POOL_SHARES_PER_RUN change the runs (the "before" run was shorter: each B generate took 20 s).
 */
const RUNS = Number(process.env.POOL_SHARES_RUNS ?? 3);
const PER_RUN = Number(process.env.POOL_SHARES_PER_RUN ?? 20);
const HAMMERS = 12;
const SHARE = 4;

interface LinkTx {
  transactionId: string;
  data: { qr: string; clientId: string };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}
const median = (xs: number[]) =>
  quantile(
    [...xs].sort((x, y) => x - y),
    0.5,
  );

describe("one tenant at its share of the browser pool, another tenant's generates timed", () => {
  let db: { url: string; drop(): Promise<void> };
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const gen = (tenant: Tenant, amount: number) =>
    post(`${t.url}/gateway-link/generate-qr`, { amount, currency: 116 }, AUTH.gatewayLink(tenant.keys.gatewayLink));
  const pool = () => t.app.module(linkModule).pool;
  // Read loosely, so that this file also runs against the pool before the shares (the "before" figures).
  const stats = () => pool().stats() as { pages: number; pid: number | null; held?: number; opening?: number };
  /** PSS and RSS (summed, so shared pages counted once per process) of the worker's Chromium process tree, MB. */
  const chromiumMb = () => {
    const pid = stats().pid;
    const use = memoryOf(pid === null ? [] : processTree(pid).map((p) => p.pid));
    return { pss: use.pssKb / 1024, rss: use.rssKb / 1024 };
  };

  beforeAll(async () => {
    db = await createFaultsDatabase();
    t = await startTestApp(
      { LINK_MAX_MONITORS: "8", LINK_HELD_PAGES_PER_MERCHANT: String(SHARE), LOG_LEVEL: "silent" },
      { dbUrl: db.url },
    );
    const link = async (merchant: string) =>
      ((await post(`${t.url}/sim/payway/links`, { currency: "KHR", merchant })).body as { code: string }).code;
    for (const [name, set] of [
      ["Busy Shop", (x: Tenant) => (a = x)],
      ["Quiet Shop", (x: Tenant) => (b = x)],
    ] as const)
      set(await createTenant(t, { name, linkUrl: `${t.url}/sim/payway/${await link(name)}`, linkProtocol: "payway" }));
  });
  afterAll(async () => {
    if (t) await post(`${t.url}/sim/payway/fault`, { mode: "ok" });
    await t?.stop();
    await db?.drop();
  });

  /** B's generate, timed, and its payment approved at once (polled through a page: its polls are refused too). */
  async function timedB(i: number): Promise<{ ms: number; status: number }> {
    const started = performance.now();
    const res = await gen(b, 5000 + i);
    const ms = performance.now() - started;
    if (res.status === 200) await post(`${t.url}/sim/link/approve`, { clientId: (res.body as LinkTx).data.clientId });
    return { ms, status: res.status };
  }

  it("B's generates: all answered, p99 < 5 s in every run; A holds at most its share", async () => {
    // The browser up and idle (one payment, paid and done), then every status poll refused as a bot.
    expect((await timedB(-1)).status).toBe(200);
    await waitFor(async () => stats().pages === 0, 20_000);
    await post(`${t.url}/sim/payway/fault`, { mode: "bot-check" });

    const statusesA = new Map<number, number>();
    let hammering = true;
    let maxPages = 0;
    let maxHeld = 0;
    const hammer = async (k: number) => {
      for (let i = 0; hammering; i++) {
        const res = await gen(a, 1000 + k * 1000 + i).catch(() => ({ status: 0 }));
        statusesA.set(res.status, (statusesA.get(res.status) ?? 0) + 1);
        if (res.status !== 200) await sleep(200);
      }
    };
    const watcher = (async () => {
      while (hammering) {
        maxPages = Math.max(maxPages, stats().pages);
        maxHeld = Math.max(maxHeld, stats().held ?? 0);
        await sleep(100);
      }
    })();
    const loops = Array.from({ length: HAMMERS }, (_, k) => hammer(k));
    // A fills what it can first: its share with the shares, every page of the worker without them.
    await sleep(20_000);

    const runs: { p50: number; p99: number; max: number; failed: number; statuses: Record<string, number> }[] = [];
    for (let r = 0; r < RUNS; r++) {
      const times: number[] = [];
      const statuses: Record<string, number> = {};
      for (let i = 0; i < PER_RUN; i++) {
        const { ms, status } = await timedB(r * PER_RUN + i);
        times.push(ms);
        statuses[status] = (statuses[status] ?? 0) + 1;
        await sleep(1000);
      }
      times.sort((x, y) => x - y);
      const failed = PER_RUN - (statuses[200] ?? 0);
      runs.push({
        p50: quantile(times, 0.5),
        p99: quantile(times, 0.99),
        max: times[times.length - 1],
        failed,
        statuses,
      });
    }
    hammering = false;
    await Promise.all([...loops, watcher]);
    // What stays is held pages only: A's payments (B's last one was paid, and lets its page go once it reads it).
    await waitFor(async () => stats().pages <= SHARE, 20_000).catch(() => undefined);
    const pages = stats().pages;
    const figures = {
      runs: runs.map((r) => ({ ...r, p50: Math.round(r.p50), p99: Math.round(r.p99), max: Math.round(r.max) })),
      medianP50Ms: Math.round(median(runs.map((r) => r.p50))),
      medianP99Ms: Math.round(median(runs.map((r) => r.p99))),
      tenantA: Object.fromEntries(statusesA),
      maxPages,
      maxHeld,
      heldPagesAtEnd: pages,
    };
    console.log(`pool shares: ${JSON.stringify(figures, null, 2)}`);

    for (const r of runs) {
      expect(r.failed).toBe(0);
      expect(r.p99).toBeLessThan(5000);
    }
    expect(statusesA.get(429) ?? 0).toBeGreaterThan(0);
    expect(maxHeld).toBeLessThanOrEqual(8);
    expect(pages).toBeLessThanOrEqual(SHARE);
  }, 600_000);

  it("the memory of a held page: the worker's Chromium with 8 held pages (both merchants' shares) and with none", async () => {
    // Every payment still followed is declined: each reads it through its page (or the page it gets next), and ends.
    await declineAll(a);
    await declineAll(b);
    await waitFor(async () => stats().pages === 0, 120_000);
    await sleep(5000);
    const none = chromiumMb();
    for (const tenant of [a, b]) for (let i = 0; i < SHARE; i++) expect((await gen(tenant, 9000 + i)).status).toBe(200);
    await waitFor(async () => stats().pages === 2 * SHARE && (stats().held ?? 2 * SHARE) === 2 * SHARE, 60_000);
    await sleep(5000);
    const held = chromiumMb();
    const perPage = (x: number, y: number) => Math.round((x - y) / (2 * SHARE));
    console.log(
      `pool shares, memory: ${JSON.stringify({
        noPagesMb: { pss: Math.round(none.pss), rss: Math.round(none.rss) },
        heldPagesMb: { pss: Math.round(held.pss), rss: Math.round(held.rss) },
        perHeldPageMb: { pss: perPage(held.pss, none.pss), rss: perPage(held.rss, none.rss) },
      })}`,
    );
    await declineAll(a);
    await declineAll(b);
    expect(held.pss).toBeGreaterThan(none.pss);
  }, 300_000);

  /** Declines every payment of `tenant` not ended yet (its payer says no on the page). */
  async function declineAll(tenant: Tenant): Promise<void> {
    const open = await t.app.core.db.query<{ client_id: string }>(
      `select upstream_ref as client_id from "transaction"
       where api_key_ref = ? and status in ('PENDING', 'EXPIRED') and upstream_ref is not null`,
      [tenant.keyIds.gatewayLink],
    );
    for (const { client_id } of open) await post(`${t.url}/sim/link/decline`, { clientId: client_id });
  }
});
