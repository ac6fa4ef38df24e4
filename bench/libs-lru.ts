// Our read-through cache (src/cache/ttl-cache.ts) beside lru-cache, in the two ways lru-cache could take its place:
// as the store under our load-sharing and invalidation rule ("lru-cache store"), and whole, with its own
// `fetchMethod` doing the loads ("lru-cache fetch"). Behaviour: the rules test/cache/ttl-cache.test.ts asserts, on
// each. Speed: median ops/s of 5 CPU-timed runs, interleaved. docs/decisions/0228-ttl-cache-stays-ours.md reads
// the figures. `npm run bench -- --only=lru-cache`
import { LRUCache } from "lru-cache";
import { TtlCache } from "../src/cache/ttl-cache.js";
import { median, type Section } from "./table.js";
import { importMs } from "./support/import-cost.js";

interface Cache {
  get(key: string, load: () => Promise<string | null>): Promise<string | null>;
  delete(matches: (key: string, value: string) => boolean): void;
}
type Make = (ttlMs: number, now: () => number, max?: number) => Cache;

/** lru-cache holds the entries (its ttl, its clock, its eviction); loads in flight and the epoch stay ours. */
class LruStore implements Cache {
  private readonly entries: LRUCache<string, { value: string }>;
  private readonly loading = new Map<string, Promise<string | null>>();
  private epoch = 0;
  constructor(ttlMs: number, now: () => number, max = 10_000) {
    this.entries = new LRUCache({ max, ttl: ttlMs, ttlResolution: 0, perf: { now } });
  }
  async get(key: string, load: () => Promise<string | null>): Promise<string | null> {
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit.value;
    const pending = this.loading.get(key);
    if (pending !== undefined) return pending;
    const epoch = this.epoch;
    const loaded = load()
      .then((value) => {
        if (value !== null && epoch === this.epoch) this.entries.set(key, { value });
        return value;
      })
      .finally(() => {
        if (this.loading.get(key) === loaded) this.loading.delete(key);
      });
    this.loading.set(key, loaded);
    return loaded;
  }
  delete(matches: (key: string, value: string) => boolean): void {
    this.epoch++;
    this.loading.clear();
    for (const [key, e] of this.entries.entries()) if (matches(key, e.value)) this.entries.delete(key);
  }
}

/** lru-cache whole: `fetch` shares concurrent loads; a `null` load is not kept (undefined to lru-cache). */
class LruFetch implements Cache {
  private readonly entries: LRUCache<string, string, () => Promise<string | null>>;
  constructor(ttlMs: number, now: () => number, max = 10_000) {
    this.entries = new LRUCache({
      max,
      ttl: ttlMs,
      ttlResolution: 0,
      perf: { now },
      fetchMethod: async (_key, _stale, { context }) => (await context()) ?? undefined,
    });
  }
  async get(key: string, load: () => Promise<string | null>): Promise<string | null> {
    return (await this.entries.fetch(key, { context: load })) ?? null;
  }
  delete(matches: (key: string, value: string) => boolean): void {
    for (const [key, value] of this.entries.entries()) if (matches(key, value)) this.entries.delete(key);
  }
}

const MAKERS: [string, Make][] = [
  ["ours", (t, n, m) => new TtlCache<string>(t, n, m)],
  ["lru-cache store", (t, n, m) => new LruStore(t, n, m)],
  ["lru-cache fetch", (t, n, m) => new LruFetch(t, n, m)],
];

/** The rules of test/cache/ttl-cache.test.ts, each true when the cache keeps it. */
const RULES: [string, (make: Make) => Promise<boolean>][] = [
  ["expires at its time-to-live (clock from 0)", (make) => expiresAt(make, 0)],
  ["expires at its time-to-live (clock at the Unix time)", (make) => expiresAt(make, 1_767_225_600_000)],
  [
    "concurrent misses share one load; null is not kept",
    async (make) => {
      let loads = 0;
      const c = make(1000, () => 5);
      const slow = async () => (loads++, await new Promise((r) => setTimeout(r, 5)), "v");
      await Promise.all([c.get("k", slow), c.get("k", slow), c.get("k", slow)]);
      await c.get("x", async () => (loads++, null));
      await c.get("x", async () => (loads++, null));
      return loads === 3;
    },
  ],
  [
    "a value loaded across an invalidation is returned, not kept",
    async (make) => {
      let release: (v: string) => void = () => undefined;
      const c = make(60_000, () => 5);
      const inFlight = c.get("k", () => new Promise<string>((r) => (release = r)));
      c.delete((key) => key === "k");
      release("stale");
      const got = await inFlight.catch((err: Error) => `threw ${err.name}`);
      return got === "stale" && (await c.get("k", async () => "fresh")) === "fresh";
    },
  ],
  [
    "an invalidation also drops a load in flight it cannot see (a revoked key not yet read)",
    async (make) => {
      let release: (v: string) => void = () => undefined;
      const c = make(60_000, () => 5);
      const inFlight = c.get("k", () => new Promise<string>((r) => (release = r)));
      c.delete((_key, value) => value === "stale");
      release("stale");
      await inFlight.catch(() => null);
      return (await c.get("k", async () => "fresh")) === "fresh";
    },
  ],
];

async function expiresAt(make: Make, start: number): Promise<boolean> {
  let now = start;
  let loads = 0;
  const c = make(1000, () => now);
  const load = async () => `v${++loads}`;
  await c.get("k", load);
  now = start + 999;
  const kept = (await c.get("k", load)) === "v1";
  now = start + 1000;
  return kept && (await c.get("k", load)) === "v2";
}

/** CPU ms for `n` awaited operations. */
async function timeRun(op: (i: number) => Promise<unknown>, n: number): Promise<number> {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await op(i);
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / 1000;
}

const N = 50_000;

/** Ops/s of each maker on one workload: a warm-up, then 5 runs of each, interleaved; the median per maker. */
async function speeds(setup: (make: Make) => Promise<(i: number) => Promise<unknown>>): Promise<number[]> {
  const ops = await Promise.all(MAKERS.map(([, make]) => setup(make)));
  for (const op of ops) await timeRun(op, N);
  const runs: number[][] = ops.map(() => []);
  for (let r = 0; r < 5; r++) for (const [i, op] of ops.entries()) runs[i]!.push((N / (await timeRun(op, N))) * 1000);
  return runs.map((xs) => Math.round(median(xs)));
}

const value = async () => "value";

export async function benchLruSection(): Promise<Section[]> {
  const clock = () => performance.now();
  const workloads: [string, (make: Make) => Promise<(i: number) => Promise<unknown>>][] = [
    [
      "hit (1000 keys, all kept)",
      async (make) => {
        const c = make(3600_000, clock);
        for (let i = 0; i < 1000; i++) await c.get(`k${i}`, value);
        return (i) => c.get(`k${i % 1000}`, value);
      },
    ],
    [
      "miss, load, and evict (bound 1000, 10,000 keys in turn)",
      async (make) => {
        const c = make(3600_000, clock, 1000);
        return (i) => c.get(`k${i % 10_000}`, value);
      },
    ],
  ];
  const rows: (string | number)[][] = [];
  for (const [name, setup] of workloads) {
    const [ours, store, fetch] = await speeds(setup);
    rows.push([name, ours!, store!, fetch!, ratio(ours!, store!), ratio(ours!, fetch!)]);
  }
  // Invalidation: a revocation scans the entries (1000 here) for the ones it drops; it drops none, so every run is alike.
  const scan = await speeds(async (make) => {
    const c = make(3600_000, clock);
    for (let i = 0; i < 1000; i++) await c.get(`k${i}`, value);
    return async () => c.delete((key) => key === "none");
  });
  rows.push([
    "invalidation scan of 1000 entries",
    scan[0]!,
    scan[1]!,
    scan[2]!,
    ratio(scan[0]!, scan[1]!),
    ratio(scan[0]!, scan[2]!),
  ]);
  const behaviour: (string | number)[][] = [];
  for (const [rule, holds] of RULES) {
    const answers = await Promise.all(MAKERS.map(([, make]) => holds(make)));
    behaviour.push([rule, ...answers.map((ok) => (ok ? "yes" : "NO"))]);
  }
  return [
    {
      title: "Libraries: the TTL cache, ours beside lru-cache (speed, ops/s)",
      columns: ["workload", "ours", "lru-cache store", "lru-cache fetch", "ours ÷ store", "ours ÷ fetch"],
      rows,
      notes: [
        `Each op one awaited get (or one invalidation); ${N.toLocaleString("en-US")} ops per run, median of 5 CPU-timed runs, the three interleaved. lru-cache 11 with ttl, ttlResolution 0 and the cache's clock (perf) as ours is given.`,
        `Cold import of lru-cache: ${importMs("lru-cache")} ms; it is loaded anyway (@apollo/server depends on the same 11.x), so it would add nothing to a start.`,
      ],
    },
    {
      title: "Libraries: the TTL cache, ours beside lru-cache (the rules of test/cache/ttl-cache.test.ts)",
      columns: ["rule", ...MAKERS.map(([name]) => name)],
      rows: behaviour,
    },
  ];
}

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
