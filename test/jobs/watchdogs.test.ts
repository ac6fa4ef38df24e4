import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createTestDatabase } from "../support/db.js";
import { waitFor } from "../support/wait.js";
import { createLogger } from "../../src/logger.js";
import { Scheduler } from "../../src/jobs/scheduler.js";

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;

/**
 * Agenda 6 leaves a watchdog timer of half the job's lock lifetime (30 s for a 60 s lock) behind every run, and the
 * service does not patch timers to hide it: main.ts exits explicitly, and the test environment unrefs exactly that
 * timer (test/support/settling-environment.cjs). What it is for: a file whose scheduler ran jobs ends as soon as it
 * stopped, instead of holding its jest worker open until the last watchdog fires.
 */
describe("a stopped scheduler holds no process open", () => {
  let url: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ url, drop } = await createTestDatabase());
  });
  afterAll(async () => drop?.());

  it("leaves no timer of Agenda's ref'd once stopped, though its watchdog of the run is still armed", async () => {
    const before = timers();
    const metrics = { jobLag: { set: () => undefined }, jobRuns: { inc: () => undefined } };
    const scheduler = new Scheduler(url, { logger: createLogger({ logLevel: "silent" }), metrics, poolSize: 2 });
    let ran!: () => void;
    const done = new Promise<void>((resolve) => (ran = resolve));
    scheduler.define({ name: "probe", lockLifetimeMs: 60_000, run: async () => ran() });
    await scheduler.ready();
    await scheduler.start();
    await scheduler.now("probe", {});
    await done;
    const started = Date.now();
    await scheduler.stop();
    // The watchdog fires 30 s after the run began; everything else the scheduler held is gone within a moment.
    await waitFor(() => timers() <= before, 5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 30_000);
});
