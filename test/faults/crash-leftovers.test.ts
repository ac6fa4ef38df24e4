import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { Cluster, withLogs, type ServiceProcess } from "../support/cluster.js";
import { startFaultRig, type FaultRig } from "../support/fault-rig.js";

import { type Upstreams } from "../support/upstreams.js";
import { type WebhookReceiver } from "../support/webhook-receiver.js";
import { dbClient, generateLink, generateQr, postJson, settle, statuses, adminOf } from "../support/traffic.js";
import { AUTH, createTenant, type Tenant } from "../support/app.js";
import { sleep, waitFor } from "../support/wait.js";

/**
 * Issue 16, "what a crash leaves behind": an Idempotency-Key whose create committed in a process killed
 * before it stored the answer, and the link monitors of a worker stopped with SIGTERM.
 */
describe("crash leftovers", () => {
  let rig: FaultRig;
  let db: FaultRig["db"];
  let ups: Upstreams;
  let receiver: WebhookReceiver;
  let cluster: Cluster;
  let api: ServiceProcess;
  let tenant: Tenant;

  beforeAll(async () => {
    rig = await startFaultRig("crash-leftovers");
    ({ db, ups, receiver, cluster } = rig);
    api = await cluster.add("api", "api");
    tenant = await createTenant(adminOf(api.url), { ...ups.tenantOptions("Crash Shop"), webhooks: receiver });
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it("kill -9 after the create committed, before the key's answer was stored: the retry gets the first answer", () =>
    withLogs(cluster, async () => {
      const c = await dbClient(db.url);
      try {
        // Storing the answer hangs (as if the database stopped answering right after the create's commit).
        await c.query(`create or replace function pqr_test_hang() returns trigger language plpgsql as
          $$ begin perform pg_sleep(600); return new; end $$`);
        await c.query(`create trigger pqr_test_hang before update of response on idempotency_key
          for each row execute function pqr_test_hang()`);
        const body = { amount: 12.34, currency: 840, expiredAfter: 600_000, meta: { n: 1 } };
        const headers = { ...AUTH.qr(tenant.keys.qr), "idempotency-key": "crash-1" };
        const first = postJson(`${api.url}/qr/generate`, body, headers, 120_000).catch((e: unknown) => e);
        const count = async () =>
          Number(
            (
              await c.query<{ n: string }>(`select count(*)::text as n from "transaction" where api_key_ref = $1`, [
                tenant.keyIds.qr,
              ])
            ).rows[0].n,
          );
        const until = Date.now() + 30_000;
        while ((await count()) === 0 && Date.now() < until) await sleep(50);
        expect(await count()).toBe(1);
        // The create is committed; the process now waits on storing the answer (held by the trigger).
        await waitFor(
          async () =>
            Number(
              (
                await c.query<{ n: string }>(
                  `select count(*)::text as n from pg_stat_activity where state = 'active' and query like '%set response%' and pid <> pg_backend_pid()`,
                )
              ).rows[0].n,
            ) > 0,
          30_000,
          50,
          "the answer's update held",
        );
        await api.kill9();
        await first;
        // The dead client's session is ended (as a restarted database would have ended it).
        await c.query(
          `select pg_terminate_backend(pid) from pg_stat_activity where pid <> pg_backend_pid() and query like '%set response%'`,
        );
        await c.query(`drop trigger pqr_test_hang on idempotency_key`);
        await api.start();

        const retry = await postJson(`${api.url}/qr/generate`, body, headers, 60_000);
        expect(retry.status).toBe(200);
        const answer = retry.body as { transactionId: string; data: { md5: string; qr: string }; status: string };
        const { rows } = await c.query<{ id: string; md5: string; qr: string }>(
          `select id, upstream_ref as md5, qr from "transaction" where api_key_ref = $1`,
          [tenant.keyIds.qr],
        );
        expect(rows).toHaveLength(1);
        expect(answer.transactionId).toBe(rows[0].id);
        expect(answer.data).toEqual({ md5: rows[0].md5, qr: rows[0].qr });
        // And once more: now answered from the stored response.
        const again = await postJson(`${api.url}/qr/generate`, body, headers, 60_000);
        expect(again.status).toBe(200);
        expect((again.body as { transactionId: string }).transactionId).toBe(rows[0].id);
      } finally {
        await c.query(`drop trigger if exists pqr_test_hang on idempotency_key`).catch(() => undefined);
        await c.end();
      }
    }));

  it("SIGTERM of a worker polling a link payment: another worker polls it within 5 s", () =>
    withLogs(cluster, async () => {
      const a = await cluster.add("worker-a", "worker");
      const link = await generateLink(api.url, tenant, "SUCCESS");
      // Worker A's sweep claims the payment (the api process follows none) and polls PayWay's status call for it.
      const polledByA = ups.link.calls(STATUS_CALL);
      let until = Date.now() + 30_000;
      while (ups.link.calls(STATUS_CALL) === polledByA && Date.now() < until) await sleep(100);
      expect(ups.link.calls(STATUS_CALL)).toBeGreaterThan(polledByA);

      await cluster.add("worker-b", "worker");
      const stopping = Date.now();
      await a.stop();
      const stoppedS = (Date.now() - stopping) / 1000;
      // A stopped: every status call from now on is B's.
      const before = ups.link.calls(STATUS_CALL);
      until = Date.now() + 40_000;
      while (ups.link.calls(STATUS_CALL) === before && Date.now() < until) await sleep(100);
      const resumedS = (Date.now() - stopping) / 1000;
      console.log(
        `SIGTERM hand-over: worker A stopped in ${stoppedS.toFixed(1)} s, B polled the payment ${resumedS.toFixed(1)} s after the signal`,
      );
      expect(ups.link.calls(STATUS_CALL)).toBeGreaterThan(before);
      expect(resumedS).toBeLessThan(5 + stoppedS);
      expect(resumedS).toBeLessThan(10);

      // The payment is followed on: the approval is seen, the payment is not failed by the shutdown.
      await settle(ups, link);
      expect(await statusWithin(db.url, link.id, "SUCCESS", 30_000)).toBe("SUCCESS");
    }));

  it("SIGTERM of a worker waiting on a slow bank: the next worker follows payments at once, not after the job's lock", () =>
    withLogs(cluster, async () => {
      // Only the worker of this scenario runs jobs (the scenario above leaves worker B running).
      for (const p of cluster.processes) if (p.role === "worker") await p.stop();
      const c = await cluster.add("worker-c", "worker");
      await ups.fault("network", "slow", 4_000);
      const checks = () => ups.network.calls(CHECK_CALL) + ups.network.calls(CHECK_LIST_CALL);
      const before = checks();
      const tx = await generateQr(api.url, tenant, "SUCCESS");
      const until = Date.now() + 30_000;
      while (checks() === before && Date.now() < until) await sleep(20);
      expect(checks()).toBeGreaterThan(before);
      // C's network monitor run now waits 4 s on the bank's answer, holding the job's lock (60 s lifetime).
      const stopping = Date.now();
      await c.stop();
      const stoppedS = (Date.now() - stopping) / 1000;
      await ups.fault("network", "ok");
      await settle(ups, tx);

      // Before: C closed its job connections under the run, the lock stayed, and D's monitor did not run until it
      // lapsed (the payment stayed PENDING for about a minute).
      const d = await cluster.add("worker-d", "worker");
      const readyAt = Date.now();
      const status = await statusWithin(db.url, tx.id, "SUCCESS", 40_000);
      const followedS = (Date.now() - readyAt) / 1000;
      console.log(
        `SIGTERM mid-run: worker C stopped in ${stoppedS.toFixed(1)} s; worker D saw the payment ${followedS.toFixed(1)} s after it was ready`,
      );
      expect(status).toBe("SUCCESS");
      expect(followedS).toBeLessThan(10);
      expect(c.grep(/keep their locks until the locks lapse/)).toEqual([]);
      await d.stop();
    }));
});

/** The transaction's status once it is `want`, or as it stands after `ms` (read every 200 ms). */
async function statusWithin(url: string, id: string, want: string, ms: number): Promise<string | undefined> {
  const until = Date.now() + ms;
  for (;;) {
    const status = (await statuses(url, [id])).get(id);
    if (status === want || Date.now() >= until) return status;
    await sleep(200);
  }
}

/** The network's check calls (src/qr/network-client.ts), as the upstream counts their arrivals. */
const CHECK_CALL = "check_transaction_by_md5";
const CHECK_LIST_CALL = "check_transaction_by_md5_list";

/** The last segment of PayWay's status call (src/upstreams/payway.ts), as the upstream counts its arrivals. */
const STATUS_CALL = "check-payment-status";
