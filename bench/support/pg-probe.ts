import pg from "pg";
import { spread, type Spread } from "./timing.js";

/**
 * How responsive PostgreSQL is while a figure is taken: `select 1` round trips on a dedicated connection,
 * every 50 ms. On a shared machine this tells a slow database (or a starved machine) from a slow service.
 */
export async function startPgProbe(url: string): Promise<{ stop(): Promise<Spread> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const samples: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      await client.query("select 1");
      samples.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop.catch(() => undefined);
      await client.end().catch(() => undefined);
      return spread(samples);
    },
  };
}
