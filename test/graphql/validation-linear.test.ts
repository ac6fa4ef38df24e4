// GraphQL validation costs time linear in the document: fragments that each spread the next one twice once cost
// 2^depth in the limits rule (depth 23: 10 s of CPU, /healthz waiting as long). The service runs as its own
// process, so /healthz is measured from outside while it validates.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startService, type FuzzService } from "../support/service.js";

type Gql = { data?: unknown; errors?: { message: string; extensions: { code: string; details: unknown[] } }[] };

/** `F0` spreads `F1` twice, `F1` spreads `F2` twice, …: 2^depth paths through `depth` fragments. */
function doubling(depth: number, end: "unknown" | "cycle"): string {
  const defs = Array.from({ length: depth }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`);
  if (end === "cycle") defs.push(`fragment F${depth} on Query { ...F0 }`);
  return `query { ...F0 } ${defs.join(" ")}`;
}

/** `/healthz` asked one request after another until stopped; the latency of each, in ms. */
function pollHealth(url: string): { samples: number[]; reached(n: number): Promise<void>; stop(): Promise<number[]> } {
  const samples: number[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      samples.push(performance.now() - started);
      for (const w of waiters.filter((x) => samples.length >= x.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  })();
  return {
    samples,
    reached: (n) => (samples.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    stop: async () => {
      running = false;
      await loop;
      return samples;
    },
  };
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

describe("GraphQL validation is linear in the document", () => {
  let svc: FuzzService;
  const gql = async (query: string, timeoutMs = 5000) => {
    const started = performance.now();
    const res = await fetch(`${svc.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await res.json()) as Gql;
    return { status: res.status, body, ms: performance.now() - started };
  };
  beforeAll(async () => {
    svc = await startService();
    // The first requests of a fresh process compile Apollo's and graphql-js's paths: not what is measured.
    for (let i = 0; i < 5; i++) await gql(doubling(3, "unknown"));
  }, 120_000);
  afterAll(async () => svc?.stop());

  /**
   * At least 10 answers to `query` while /healthz is polled, on until /healthz has been asked 50 times; before
   * that, /healthz's p99 over 50 requests alone: how slow this shared machine is right now.
   */
  const underLoad = async (query: string) => {
    const quiet = pollHealth(svc.url);
    await quiet.reached(50);
    const noise = p99(await quiet.stop());
    const health = pollHealth(svc.url);
    await health.reached(5); // the poller is running before the first document leaves
    const answers = [];
    while (answers.length < 10 || (health.samples.length < 50 && answers.length < 500)) answers.push(await gql(query));
    const latencies = await health.stop();
    return { answers, noise, slowest: Math.max(...answers.map((a) => a.ms)), healthP99: p99(latencies) };
  };

  // The bounds are 200 ms per answer and 100 ms for /healthz's p99. This machine is shared (2 cores, other suites
  // and benches; load averages of 9–11 were seen): /healthz's own p99 just before is added to both (twice over to
  // /healthz's: 264 ms against 100 + 146 failed all three tries on a slow machine running the whole suite), and a run
  // that misses them is repeated up to twice, so a busy neighbour does not fail the test. The exponential measure took
  // seconds per document (depth 23: 10 s; depth 30 would be ~20 minutes), far above either in every run.
  it.each<[string, "unknown" | "cycle", RegExp]>([
    ["an unknown fragment", "unknown", /Unknown fragment "F30"/],
    ["a cycle", "cycle", /Cannot spread fragment "F0" within itself/],
  ])(
    "30 doubling fragments ending in %s: 400 within 200 ms, /healthz p99 < 100 ms meanwhile",
    async (_w, end, message) => {
      const query = doubling(30, end);
      expect(query.length).toBeLessThan(1300);
      let run = await underLoad(query);
      for (
        let retry = 0;
        retry < 2 && (run.slowest >= 200 + run.noise || run.healthP99 >= 100 + 2 * run.noise);
        retry++
      )
        run = await underLoad(query);
      for (const a of run.answers) {
        expect(a.status).toBe(400);
        expect(a.body.data).toBeUndefined();
        expect(new Set(a.body.errors?.map((e) => e.extensions.code))).toEqual(new Set(["BAD_USER_INPUT"]));
        expect(a.body.errors?.some((e) => message.test(e.message))).toBe(true);
      }
      expect(run.slowest).toBeLessThan(200 + run.noise);
      expect(run.healthP99).toBeLessThan(100 + 2 * run.noise);
    },
  );

  // Measuring each fragment once must not weaken the limits: through fragments, 12 levels and 500 fields run,
  // one more is refused as before (400, BAD_USER_INPUT, the same messages).
  const ofTypes = (n: number) => `${"ofType { ".repeat(n)}name${" }".repeat(n)}`;
  const deep = (ofTypeLevels: number) =>
    `{ __type(name: "Query") { ...Fields } } fragment Fields on __Type { fields { type { ...Wrapped } } } ` +
    `fragment Wrapped on __Type { ${ofTypes(ofTypeLevels)} }`;
  const aliases = Array.from({ length: 100 }, (_, i) => `a${i}: __typename`).join(" ");
  const wide = (extra: string) => `{ ...A ...A ...A ...A ...A ${extra} } fragment A on Query { ${aliases} }`;

  it("through fragments, 12 levels deep and 500 fields still run", async () => {
    // __type 1, fields 2, type 3, eight ofType 4–11, name 12.
    const atDepth = await gql(deep(8));
    expect(atDepth.status).toBe(200);
    expect(atDepth.body.errors).toBeUndefined();
    const atWidth = await gql(wide(""));
    expect(atWidth.status).toBe(200);
    expect(Object.keys(atWidth.body.data as object)).toHaveLength(100);
  });

  it("through fragments, 501 fields are refused as before", async () => {
    // Depth: introspection's `ofType` chain no longer counts (standard clients' introspection is nine deep), and
    // graphql-js caps the other introspection nesting; the depth refusal is checked in test/graphql/explorer.test.ts.
    const tooWide = await gql(wide("__typename"));
    expect(tooWide.status).toBe(400);
    expect(tooWide.body.errors?.map((e) => [e.extensions.code, e.message])).toEqual([
      ["BAD_USER_INPUT", "Query selects more than 500 fields; the limit is 500"],
    ]);
    // A doubling chain over a real field: 2^30 fields, refused for it without expanding them.
    const doubled = await gql(`${doubling(30, "unknown")} fragment F30 on Query { __typename }`);
    expect(doubled.status).toBe(400);
    expect(doubled.body.errors?.map((e) => e.message)).toEqual([
      "Query selects more than 500 fields; the limit is 500",
    ]);
  });
});
