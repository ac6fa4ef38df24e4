// Micro-bench of the fan-out's per-socket serialisation (issue 15, scenario B of the subscriptions section:
// one key's event to 100 listeners with the same selection). Before: graphql-ws stringified every frame
// with the exact-JSON replacer and each socket spliced it (6 µs a frame here); after: the shared result's
// data is serialised once per event and each frame only splices it in (src/graphql/frames.ts).
// Run: npx tsc -p tsconfig.build.json && node dist/bench/frames.js
import { pathToFileURL } from "node:url";
import { exactReplacer, parseExact, spliceExact } from "../src/exact-json.js";
import { SharedFrames } from "../src/graphql/frames.js";
import { median, toMarkdown, type Section } from "./table.js";

const SUBSCRIBERS = 100;
const EVENTS = 2000;

/** One event's result, as the subscriptions section's STREAM selection produces it (meta read exactly). */
function result(i: number): { data: Record<string, unknown> } {
  return {
    data: {
      transactionUpdates: {
        id: `evt_${i.toString(36).padStart(16, "0")}`,
        type: "transaction.updated",
        createdAt: "2026-11-24T15:00:00.000Z",
        transaction: {
          transactionId: `txn_${i.toString(36).padStart(16, "0")}`,
          status: "PENDING",
          amount: "1.50",
          currency: "USD",
          updatedAt: "2026-11-24T15:00:00.000Z",
        },
        meta: parseExact(`{"bench":true,"order":"A-${i}","items":[{"sku":"x","qty":2,"price":1.50}]}`),
      },
    },
  };
}

/** Microseconds per frame: `EVENTS` events × `SUBSCRIBERS` frames, as graphql-ws builds each frame. */
function run(
  results: { data: Record<string, unknown> }[],
  replacer: (this: unknown, k: string, v: unknown) => unknown,
  splice: (s: string) => string,
): number {
  let bytes = 0;
  const t0 = performance.now();
  for (const r of results)
    for (let s = 0; s < SUBSCRIBERS; s++) {
      // graphql-ws: { id, type, payload: { ...resultWithoutErrors } }, stringified with the replacer.
      bytes += splice(JSON.stringify({ id: `sub${s}`, type: "next", payload: { ...r } }, replacer)).length;
    }
  const us = ((performance.now() - t0) * 1000) / (EVENTS * SUBSCRIBERS);
  if (bytes === 0) throw new Error("nothing serialised");
  return us;
}

export function benchFrames(): Section {
  const before: number[] = [];
  const after: number[] = [];
  // Same output both ways (checked), then alternating timed runs.
  const shared = new WeakSet<object>();
  const frames = new SharedFrames((v) => shared.has(v));
  const r = result(1);
  shared.add(r.data);
  const a = spliceExact(JSON.stringify({ id: "x", type: "next", payload: { ...r } }, exactReplacer));
  const b = frames.splice(JSON.stringify({ id: "x", type: "next", payload: { ...r } }, frames.replacer));
  if (a !== b) throw new Error(`frames differ:\n${a}\n${b}`);
  for (let k = 0; k < 5; k++) {
    before.push(
      run(
        Array.from({ length: EVENTS }, (_, i) => result(i)),
        exactReplacer,
        spliceExact,
      ),
    );
    const f = new SharedFrames((v) => shared.has(v));
    const results = Array.from({ length: EVENTS }, (_, i) => result(i));
    // Every event's data is a shared result's (SharedExecution marks them as it executes).
    for (const x of results) shared.add(x.data);
    after.push(run(results, f.replacer, (s) => f.splice(s)));
  }
  const m = (xs: number[]) => Math.round(median(xs) * 100) / 100;
  return {
    title: `Fan-out frames: serialisation per subscriber frame (${SUBSCRIBERS} subscribers × ${EVENTS.toLocaleString("en")} events, median of 5)`,
    columns: ["frames", "µs per frame", "runs"],
    rows: [
      [
        "before: each frame stringified with the exact-JSON replacer, spliced per socket",
        m(before),
        before.map((x) => x.toFixed(2)).join(", "),
      ],
      [
        "after: the shared result's data serialised once per event (src/graphql/frames.ts)",
        m(after),
        after.map((x) => x.toFixed(2)).join(", "),
      ],
    ],
    notes: [
      `At the scale target's scenario B (100 transitions/s × 100 listeners = 10,000 frames/s) that is ${((m(before) * 10_000) / 1000).toFixed(0)} ms → ${((m(after) * 10_000) / 1000).toFixed(0)} ms of CPU per second in the api instance, before the websocket writes themselves.`,
    ],
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(toMarkdown(benchFrames()));
