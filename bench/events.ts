// Events: commit → subscriber latency over graphql-ws and commit → receiver latency of signed webhooks,
// each with real processes on a fresh PostgreSQL database (bench/events/*).
// Run alone: npx tsc -p tsconfig.build.json && node dist/bench/events.js [--quick]
import { pathToFileURL } from "node:url";
import { toMarkdown, type Section } from "./table.js";
import { benchSubscriptions } from "./events/subscriptions.js";
import { benchWebhooks } from "./events/webhooks.js";

export async function benchEvents(opts: { quick: boolean; log?: (line: string) => void }): Promise<Section[]> {
  const only = process.env.BENCH_EVENTS_ONLY; // "subscriptions" | "webhooks", for tuning runs
  const sections: Section[] = [];
  if (only !== "webhooks") {
    sections.push(await benchSubscriptions(opts));
    // The scale target (issue 15): 10,000 subscribers on one api instance, 100 transitions/s for 60 s.
    if (!opts.quick) sections.push(await benchSubscriptions({ ...opts, subscribers: 10_000, seconds: 60 }));
  }
  if (only !== "subscriptions") sections.push(await benchWebhooks(opts));
  return sections;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.argv.includes("--quick") || process.env.BENCH_QUICK === "1";
  const t0 = Date.now();
  const log = (line: string) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}`);
  for (const s of await benchEvents({ quick, log })) console.log(toMarkdown(s));
}
