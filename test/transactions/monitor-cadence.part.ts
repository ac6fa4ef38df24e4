import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, type TestApp, type Tenant } from "../support/app.js";
import { newId } from "../../src/ids.js";
import { monitorJob, type MonitorPort } from "../../src/transactions/monitor.js";

/**
 * How often a pending payment is looked at decides how long a payer waits for "paid": every interval, also
 * when the job's runs start a few milliseconds early or late (they do, under load). A transaction that fell due
 * just after a run's claim used to wait a whole interval more.
 */
describe("monitor cadence: a pending transaction is checked once per interval, whatever the runs' jitter", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" }); // no jobs of its own: only the runs below check anything
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  it("checked at each run one interval apart (even 10 ms early), not at the runs in between", async () => {
    const start = Date.now();
    const at = { ms: start };
    const checked: number[] = [];
    const { tx } = await t.app.core.store.create({
      id: newId("txn"),
      area: "qr",
      merchantRef: tenant.merchantId,
      apiKeyRef: tenant.keyIds.qr,
      status: "PENDING",
      amount: "2.00",
      currency: "USD",
      upstreamRef: newId("md5"),
      expiresAt: new Date(start + 600_000),
      nextCheckAt: new Date(start),
    });
    const port: MonitorPort = {
      async check(txs) {
        if (txs.some((x) => x.id === tx.id)) checked.push(at.ms - start);
        return new Map();
      },
    };
    const job = monitorJob(
      { clock: { now: () => new Date(at.ms) }, db: t.app.core.db, store: t.app.core.store, logger: t.app.core.logger },
      { name: "test.cadence", area: "qr", recheckMs: 3000, batch: 100, port },
    );
    const runAt = async (offsetMs: number) => {
      at.ms = start + offsetMs;
      await job.run({}, undefined as never);
    };
    // Runs a second apart, each starting a little off its second, as Agenda starts them under load.
    for (const offset of [0, 1004, 1998, 2990, 4003, 5001, 5992, 7010]) await runAt(offset);
    expect(checked).toEqual([0, 2990, 5992]);
  });
});
