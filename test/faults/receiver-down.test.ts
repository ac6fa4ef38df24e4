import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { moreJobRuns, startTestApp, type TestApp, createTenant, type Tenant } from "../support/app.js";
import { ADMIN_TOKEN } from "../support/cluster.js";
import { createFaultsDatabase, FULL } from "../support/db.js";
import { startUpstreams, type Upstreams } from "../support/upstreams.js";
import { startReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { dbClient, generateGateway, generateQr, settle, type Tracked, adminOf } from "../support/traffic.js";
import { assertInvariants, probe, waitDelivered, waitTerminal } from "../support/invariants.js";
import { sleep } from "../support/wait.js";

const DOWN_MS = 10 * 60_000;

/**
 * Issue 8 "Faults": the merchant's webhook endpoint is down (connection refused) for 10 minutes. The
 * service runs in this process with a movable clock (OffsetClock), so the compressed run moves the
 * clock through the 10 minutes and the retries' backoff (5 s × 2ⁿ) in about 30 s of real time; with
 * FAULTS_FULL=1 the clock is left alone and the receiver is really down for 10 minutes. Child
 * processes cannot take a moved clock, and no test-only knob was added for it.
 */
describe(`webhook receiver down for 10 minutes (${FULL ? "real time" : "compressed clock"})`, () => {
  let db: { url: string; drop(): Promise<void> };
  let ups: Upstreams;
  let receiver: WebhookReceiver;
  let t: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    db = await createFaultsDatabase();
    ups = await startUpstreams();
    receiver = await startReceiver();
    t = await startTestApp(
      { SIMULATORS: "false", ...ups.env, ADMIN_TOKEN, LOG_LEVEL: "silent", WEBHOOK_TIMEOUT_MS: "3000" },
      { role: "serve", dbUrl: db.url },
    );
    tenant = await createTenant(adminOf(t.url), { ...ups.tenantOptions("Hook Shop"), webhooks: receiver });
  });

  afterAll(async () => {
    await t?.stop();
    await receiver?.down();
    await ups?.close();
    await db?.drop();
  });

  /** Moves the service's clock by `ms` in steps, with a pass of the once-a-second dispatch job after each. */
  async function passTime(ms: number): Promise<void> {
    if (FULL) return sleep(ms);
    const step = 30_000;
    for (let done = 0; done < ms; done += step) {
      t.clock.advance(Math.min(step, ms - done));
      // Two completed runs: the second began after the move (the first may have been under way).
      await moreJobRuns(t, "webhooks.dispatch", 2);
    }
  }

  async function attemptLog(): Promise<
    { delivery: string; state: string; fails: number; oks: number; errors: string[] }[]
  > {
    const c = await dbClient(db.url);
    try {
      const { rows } = await c.query<{ id: string; state: string; fails: string; oks: string; errors: string[] }>(
        `select d.id, d.state,
           (select count(*) from webhook_attempt a where a.delivery_ref = d.id and (a.status_code is null or a.status_code not between 200 and 299))::text as fails,
           (select count(*) from webhook_attempt a where a.delivery_ref = d.id and a.status_code between 200 and 299)::text as oks,
           (select coalesce(array_agg(distinct a.error), '{}') from webhook_attempt a where a.delivery_ref = d.id and a.error is not null) as errors
         from webhook_delivery d`,
      );
      return rows.map((r) => ({
        delivery: r.id,
        state: r.state,
        fails: Number(r.fails),
        oks: Number(r.oks),
        errors: r.errors,
      }));
    } finally {
      await c.end();
    }
  }

  it(
    "every event is delivered after it comes back, every attempt is logged, none is acknowledged twice",
    async () => {
      await receiver.down();
      const txs: Tracked[] = [];
      for (const o of ["SUCCESS", "SUCCESS", "SUCCESS", "FAILED", "FAILED"] as const)
        txs.push(await generateQr(t.url, tenant, o));
      for (const o of ["SUCCESS", "FAILED"] as const) txs.push(await generateGateway(t.url, tenant, o));
      for (const tx of txs) await settle(ups, tx);
      await waitTerminal(db.url, txs, 30_000);

      const downSince = Date.now();
      await passTime(DOWN_MS);
      const during = await attemptLog();
      // One delivery per event (one endpoint per key): created and terminal (a gateway's PENDING before the payer
      // acts is no event: it is what CHECKOUT means).
      const c = await dbClient(db.url);
      const { rows } = await c.query<{ n: string }>(`select count(*)::text as n from transaction_event`);
      await c.end();
      expect(during.length).toBe(Number(rows[0].n));
      expect(during.length).toBeGreaterThanOrEqual(txs.length * 2);
      expect(receiver.deliveries).toHaveLength(0);
      // Backoff 5 s, 10 s, 20 s, … over 10 minutes: at least 6 failed attempts each, every one logged with its error.
      expect(
        during.filter(
          (d) => d.state !== "pending" || d.oks !== 0 || d.fails < 6 || !d.errors.every((e) => /ECONNREFUSED/.test(e)),
        ),
      ).toEqual([]);

      await receiver.up();
      const upAt = Date.now();
      // The next attempt of each delivery is at most one backoff step (≤ 640 s × 1.2) away.
      const until = Date.now() + (FULL ? 20 * 60_000 : 120_000);
      while ((await attemptLog()).some((d) => d.state !== "delivered") && Date.now() < until)
        await passTime(FULL ? 10_000 : 60_000);
      await waitDelivered(db.url, Object.values(tenant.keyIds), receiver, 10_000);
      // Answers normally again: a fresh payment end to end, its webhooks delivered at once.
      txs.push(await probe([], t, ups, tenant, db.url));
      await waitDelivered(db.url, Object.values(tenant.keyIds), receiver, 15_000);

      const summary = await assertInvariants(db.url, [tenant], txs, receiver);
      const after = await attemptLog();
      // At least once, and here (no crash) exactly once: one acknowledged attempt per delivery, each event received once.
      expect(after.filter((d) => d.oks !== 1)).toEqual([]);
      const counts = new Map<string, number>();
      for (const d of receiver.deliveries) counts.set(d.eventId, (counts.get(d.eventId) ?? 0) + 1);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
      console.log(
        `receiver down ${FULL ? `${Math.round((upAt - downSince) / 1000)} s real` : "10 min (clock)"}: delivered ${Math.round((Date.now() - upAt) / 1000)} s after it came back; ` +
          `failed attempts per delivery ${Math.min(...after.map((d) => d.fails))}–${Math.max(...after.map((d) => d.fails))}; ${JSON.stringify(summary)}`,
      );
    },
    FULL ? 40 * 60_000 : 10 * 60_000,
  );
});
