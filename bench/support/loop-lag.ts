import { ADMIN_TOKEN } from "./service.js";

/**
 * Event-loop delay of a running service from its /metrics (prom-client resets the underlying histogram at
 * every scrape, so a scrape before a phase and one after it cover exactly that phase).
 */
export async function scrapeLoopLag(baseUrl: string): Promise<{ p99Ms: number; maxMs: number }> {
  const text = await (
    await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  ).text();
  const gauge = (name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? NaN) * 1000;
  return { p99Ms: gauge("nodejs_eventloop_lag_p99_seconds"), maxMs: gauge("nodejs_eventloop_lag_max_seconds") };
}
