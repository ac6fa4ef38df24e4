// The load generator, run as its own process (so it never shares an event loop with a server):
// a warm-up, then one measured autocannon run, then one line of JSON on stdout.
//   node dist/bench/cannon.js <spec.json>
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import autocannon, { type RawRequest } from "autocannon";

export interface CannonSpec {
  url: string;
  path: string;
  headers: Record<string, string>;
  /** Request bodies, used in turn; `{{n}}` in a body becomes a value unique within this process. */
  bodies: string[];
  connections: number;
  /** Measured seconds (ignored when `amount` is set). */
  durationS: number;
  /** Fixed number of measured requests instead of a duration. */
  amount?: number;
  warmupS: number;
  /** How a 2xx body is checked: GraphQL bodies must carry data and no errors. */
  expect: "json" | "graphql";
}

export interface CannonResult {
  requests: number;
  /** Answers received during the warm-up (for per-request CPU figures over the whole run). */
  warmupRequests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** 2xx answers whose body failed the check (non-2xx ones are counted in non2xx only). */
  badBodies: number;
  statusCodes: Record<string, number>;
  /** One failing body (or status line), for the report. */
  sample?: string;
}

const prefix = `b${randomBytes(2).toString("hex")}`;
let counter = 0;
let next = 0;
let sample: string | undefined;
let badBodies = 0;

function fill(body: string): string {
  return body.includes("{{n}}") ? body.replaceAll("{{n}}", `${prefix}${(counter++).toString(36)}`) : body;
}

/** Counts 2xx answers with a failing body and keeps one failing answer for the report. */
function check(spec: CannonSpec) {
  return (status: number, body: string): void => {
    const ok2xx = status >= 200 && status < 300;
    const goodBody =
      spec.expect === "graphql"
        ? body.startsWith('{"data":{') && !body.includes('"errors":')
        : !body.startsWith('{"error":');
    if (ok2xx && !goodBody) badBodies++;
    if ((!ok2xx || !goodBody) && sample === undefined) sample = `${status} ${body.slice(0, 500)}`;
  };
}

async function run(spec: CannonSpec, measured: boolean) {
  return autocannon({
    url: spec.url,
    connections: spec.connections,
    ...(measured && spec.amount !== undefined
      ? { amount: spec.amount }
      : { duration: measured ? spec.durationS : spec.warmupS }),
    timeout: 30,
    requests: [
      {
        method: "POST",
        path: spec.path,
        headers: { "content-type": "application/json", ...spec.headers },
        setupRequest: (req: RawRequest) => ({ ...req, body: fill(spec.bodies[next++ % spec.bodies.length]) }),
        onResponse: check(spec),
      },
    ],
  });
}

async function main(): Promise<void> {
  const spec = JSON.parse(readFileSync(process.argv[2], "utf8")) as CannonSpec;
  const count = (r: { statusCodeStats: Record<string, { count: number }> }) =>
    Object.values(r.statusCodeStats).reduce((a, v) => a + Number(v.count), 0);
  const warmupRequests = spec.warmupS > 0 ? count(await run(spec, false)) : 0;
  sample = undefined;
  badBodies = 0;
  const r = await run(spec, true);
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, Number(v.count)]));
  const total = count(r);
  const out: CannonResult = {
    requests: total,
    warmupRequests,
    rps: total / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    badBodies,
    statusCodes,
    sample,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

await main();
