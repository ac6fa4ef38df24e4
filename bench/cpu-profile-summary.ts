// Self time of a .cpuprofile (node --cpu-prof), in shares of the busy time (idle and GC named apart), by where the
// time goes on a GraphQL request. Each sample goes to the innermost frame of its stack that is not Node's own
// (node:*, natives): Node's work (a socket write, a hash) is charged to the code that asked for it, so graphql-js's
// parser called from Apollo counts as parsing, and a response's write counts for whoever wrote it. Samples with no
// such frame are Node's own (the HTTP parser, timers, socket reads). Start-up (the samples up to the last module
// load in the first half of the profile) is left out.
//   node dist/bench/cpu-profile-summary.js a.cpuprofile [b.cpuprofile …] [--top=15]
import { readFileSync } from "node:fs";
import { basename } from "node:path";

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Categories, first match wins, judged on a frame and then on its callers outwards. */
const RULES: [string, (f: CallFrame) => boolean][] = [
  ["parse", (f) => /graphql\/language\/(parser|lexer)/.test(f.url)],
  [
    "validation and admission",
    (f) =>
      /graphql\/validation\//.test(f.url) ||
      /src\/graphql\/(admission|cost|limits|nesting|checkout-view|document-cache)\.js/.test(f.url),
  ],
  ["SQL (pg driver, ORM)", (f) => /node_modules\/(pg|pg-protocol|pg-pool|@mikro-orm|knex)\//.test(f.url)],
  [
    "serialisation",
    (f) => /src\/exact-json\.js/.test(f.url) || (f.url === "" && /^(stringify|JSONStringify)$/.test(f.functionName)),
  ],
  [
    "context and auth",
    (f) => /src\/auth\//.test(f.url) || /src\/graphql\/context\.js/.test(f.url) || /src\/rest\/rate-limit/.test(f.url),
  ],
  [
    "resolver middleware (type-graphql, class-validator)",
    (f) => /node_modules\/(type-graphql|class-validator|class-transformer)\//.test(f.url),
  ],
  // graphql-jit's runtime too (its generated code has no file: it counts where it is charged, mostly resolvers).
  [
    "graphql-js execution",
    (f) => /graphql\/(execution|jsutils|type|utilities)\//.test(f.url) || /node_modules\/graphql-jit\//.test(f.url),
  ],
  ["Apollo pipeline", (f) => /node_modules\/@apollo\/|node_modules\/@as-integrations\//.test(f.url)],
  ["service code (resolvers, services, SQL edge)", (f) => /\/dist\/src\//.test(f.url)],
  [
    "express, body parsing",
    (f) =>
      /node_modules\/(express|body-parser|router|raw-body|iconv-lite|qs|on-finished|finalhandler|send)\//.test(f.url),
  ],
];

const nodeOwn = (f: CallFrame) => f.url === "" || f.url.startsWith("node:");

function summarise(file: string, top: number): void {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackHas = (id: number, test: (f: CallFrame) => boolean): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      if (test((byId.get(at) as ProfileNode).callFrame)) return true;
    return false;
  };
  const loading = (f: CallFrame) => f.url.startsWith("node:internal/modules");
  let t = 0;
  let startUpEnd = 0;
  const times = p.timeDeltas.map((d) => (t += d));
  for (let i = 0; i < p.samples.length && times[i] < t / 2; i++) if (stackHas(p.samples[i], loading)) startUpEnd = i;
  const self = new Map<number, number>();
  for (let i = startUpEnd + 1; i < p.samples.length; i++)
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  const cats = new Map<string, number>();
  const fns = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const node = byId.get(id) as ProfileNode;
    const name = node.callFrame.functionName;
    if (name === "(idle)" || name === "(program)") {
      idle += us;
      continue;
    }
    busy += us;
    const fn = `${name || "(anonymous)"} ${node.callFrame.url.replace(/^.*\/(node_modules|dist)\//, "$1/")}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
    let cat = name === "(garbage collector)" ? "garbage collector" : undefined;
    let at: number | undefined = id;
    while (cat === undefined && at !== undefined && nodeOwn((byId.get(at) as ProfileNode).callFrame))
      at = parent.get(at);
    if (cat === undefined && at !== undefined)
      cat = RULES.find(([, rule]) => rule((byId.get(at as number) as ProfileNode).callFrame))?.[0] ?? "other libraries";
    cat ??= "Node's own (HTTP parser, sockets, timers)";
    cats.set(cat, (cats.get(cat) ?? 0) + us);
  }
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1)}%`;
  console.log(
    `\n### ${basename(file)}: busy ${(busy / 1e6).toFixed(1)} s (idle ${(idle / 1e6).toFixed(1)} s), start-up left out\n`,
  );
  console.log("| where | share of busy self time |\n| --- | ---: |");
  for (const [c, us] of [...cats].sort((a, b) => b[1] - a[1])) console.log(`| ${c} | ${pct(us)} |`);
  console.log(`\nTop ${top} functions by self time:\n\n| function | share |\n| --- | ---: |`);
  for (const [f, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`| \`${f}\` | ${pct(us)} |`);
}

const top = Number(process.argv.find((a) => a.startsWith("--top="))?.slice(6) ?? 15);
for (const f of process.argv.slice(2).filter((a) => !a.startsWith("--"))) summarise(f, top);
