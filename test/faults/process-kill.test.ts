import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { Cluster, withLogs, type ServiceProcess } from "../support/cluster.js";
import { startFaultRig, type FaultRig } from "../support/fault-rig.js";

import { type Upstreams } from "../support/upstreams.js";
import { type WebhookReceiver } from "../support/webhook-receiver.js";
import {
  dbClient,
  generateGateway,
  generateLink,
  generateQr,
  scan,
  settle,
  type Tracked,
  adminOf,
} from "../support/traffic.js";
import { createTenant, type Tenant } from "../support/app.js";
import { assertInvariants, probe, waitDelivered, waitTerminal } from "../support/invariants.js";
import { sleep, waitFor } from "../support/wait.js";

/**
 * Issues 5, 6 and 8: a worker killed with SIGKILL in the middle of its work. Simulators and the webhook
 * receiver live in this test process; the service runs as child processes (one api, workers).
 */
describe("kill -9 of a worker, of Chromium", () => {
  let rig: FaultRig;
  let db: FaultRig["db"];
  let ups: Upstreams;
  let receiver: WebhookReceiver;
  let cluster: Cluster;
  let api: ServiceProcess;
  let tenant: Tenant;
  const txs: Tracked[] = [];

  beforeAll(async () => {
    rig = await startFaultRig("worker-kill");
    ({ db, ups, receiver, cluster } = rig);
    api = await cluster.add("api", "api");
    tenant = await createTenant(adminOf(api.url), { ...ups.tenantOptions("Kill Shop"), webhooks: receiver });
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it("mid-monitoring in all three areas at once: a fresh worker finishes every payment, the link polls are taken over", () =>
    withLogs(cluster, async () => {
      const a = await cluster.add("worker-a", "worker");
      // Outcomes the test will drive: generic QR paid / failed / left to expire, gateway approved / declined, link approved / broken.
      const expiring = await Promise.all([1, 2, 3].map(() => generateQr(api.url, tenant, "EXPIRED", 45_000)));
      const qrs = await Promise.all(
        [...Array(6).fill("SUCCESS"), ...Array(3).fill("FAILED")].map((o) => generateQr(api.url, tenant, o)),
      );
      const gws = await Promise.all(
        [...Array(4).fill("SUCCESS"), ...Array(2).fill("FAILED")].map((o) => generateGateway(api.url, tenant, o)),
      );
      const links: Tracked[] = [];
      for (const o of ["SUCCESS", "SUCCESS", "FAILED"] as const) links.push(await generateLink(api.url, tenant, o));
      txs.push(...expiring, ...qrs, ...gws, ...links);
      await scan(ups, links[1]);

      // Worker A's sweep has claimed the link payments (the api process follows none): it polls each of them.
      await pollingOn(ups, links, 60_000);

      // The upstream answers now take 8 s; pay while A's next checks are on the wire, and kill A then.
      await ups.fault("network", "slow", 8000);
      await ups.fault("gateway", "slow", 8000);
      const qrCalls = ups.network.waitArrivals(1, 15_000);
      const gwCalls = ups.gateway.waitArrivals(gws.length, 15_000);
      for (const t of [...qrs, ...gws]) await settle(ups, t);
      await Promise.all([qrCalls, gwCalls]);
      await a.kill9();
      await ups.fault("network", "ok");
      await ups.fault("gateway", "ok");

      // Nothing was lost in the kill: the paid ones are not terminal yet (their answers died with A).
      const mid = await dbClient(db.url);
      const { rows } = await mid.query<{ n: string }>(
        `select count(*)::text as n from "transaction" where id = any($1) and status in ('SUCCESS','FAILED')`,
        [[...qrs, ...gws].map((t) => t.id)],
      );
      await mid.end();
      expect(Number(rows[0].n)).toBeLessThan(qrs.length + gws.length);

      // Approve one link payment while no worker runs at all; the worker that takes it over must read it.
      await settle(ups, links[0]);
      const killedAt = Date.now();
      await cluster.add("worker-b", "worker");
      // A's leases on the link payments (20 s) run out, and worker B's sweep claims and polls them.
      await pollingOn(ups, links, 90_000);
      const takeoverS = Math.round((Date.now() - killedAt) / 1000);
      await settle(ups, links[1]);
      await settle(ups, links[2]);

      await waitTerminal(db.url, txs, 180_000);
      txs.push(await probe(cluster.processes, api, ups, tenant, db.url));
      await waitDelivered(db.url, Object.values(tenant.keyIds), receiver, 90_000);
      const summary = await assertInvariants(db.url, [tenant], txs, receiver);
      console.log(
        `worker kill: link payments polled again ${takeoverS} s after the kill, all terminal ${Math.round((Date.now() - killedAt) / 1000)} s after it; ${JSON.stringify(summary)}`,
      );
    }));

  it("between a transition and its webhook delivery: the delivery is made after the restart (issue 6)", () =>
    withLogs(cluster, async () => {
      const b = cluster.get("worker-b");
      const tx = await generateQr(api.url, tenant, "SUCCESS");
      txs.push(tx);
      // The receiver takes the payment.completed delivery and never answers: the transition is committed,
      // the delivery is on the wire and not acknowledged when the worker dies.
      receiver.hold = (d) => d.transactionId === tx.id && d.type === "payment.completed";
      await settle(ups, tx);
      const until = Date.now() + 30_000;
      while (
        !receiver.deliveries.some((d) => d.transactionId === tx.id && d.type === "payment.completed") &&
        Date.now() < until
      )
        await sleep(50);
      await b.kill9();
      receiver.dropHeld();
      receiver.hold = null;

      const c = await dbClient(db.url);
      const { rows } = await c.query<{ status: string; state: string; attempts: number }>(
        `select t.status, d.state, d.attempts from "transaction" t join transaction_event e on e.transaction_ref = t.id and e.type = 'payment.completed'
       join webhook_delivery d on d.event_ref = e.id where t.id = $1`,
        [tx.id],
      );
      await c.end();
      expect(rows).toEqual([{ status: "SUCCESS", state: "pending", attempts: 0 }]);

      await b.start();
      await waitDelivered(db.url, Object.values(tenant.keyIds), receiver, 60_000);
      txs.push(await probe(cluster.processes, api, ups, tenant, db.url));
      await waitDelivered(db.url, Object.values(tenant.keyIds), receiver, 60_000);
      const summary = await assertInvariants(db.url, [tenant], txs, receiver);
      expect(
        receiver.deliveries.filter((d) => d.transactionId === tx.id && d.type === "payment.completed").length,
      ).toBe(2);
      console.log(`kill between transition and delivery: ${JSON.stringify(summary)}`);
    }));
});

/** Waits until every link payment has been polled again (by the worker that follows it). */
async function pollingOn(ups: Upstreams, links: Tracked[], timeoutMs: number): Promise<void> {
  const before = await fetchPolls(ups, links);
  await waitFor(
    async () => (await fetchPolls(ups, links)).every((n, i) => n > before[i]),
    timeoutMs,
    250,
    "a poll of every link payment",
  );
}

async function fetchPolls(ups: Upstreams, links: Tracked[]): Promise<number[]> {
  return Promise.all(
    links.map(async (l) => {
      const res = await fetch(`${ups.link.controlBase}/sim/link/clients/${l.clientId}`);
      return ((await res.json()) as { polls: number }).polls;
    }),
  );
}
