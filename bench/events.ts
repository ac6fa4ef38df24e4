// Events: commit → subscriber latency over graphql-ws and commit → receiver latency of signed webhooks,
// each with real processes on a fresh PostgreSQL database (bench/events/*).
// Run alone: npx tsc -p tsconfig.build.json && node dist/bench/events.js [--quick]
import { pathToFileURL } from "node:url";
import { toMarkdown, type Section } from "./table.js";
import { benchSubscriptions } from "./events/subscriptions.js";

export async function benchEvents(opts: { quick: boolean; log?: (line: string) => void }): Promise<Section[]> {
  return [await benchSubscriptions(opts)];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.argv.includes("--quick") || process.env.BENCH_QUICK === "1";
  for (const s of await benchEvents({ quick, log: (line) => console.error(line) })) console.log(toMarkdown(s));
}
