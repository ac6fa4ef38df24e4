import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { Cluster, withLogs, type ServiceProcess } from "../support/cluster.js";
import { startFaultRig, type FaultRig } from "../support/fault-rig.js";
import { FULL } from "../support/db.js";
import { type FaultKind, type Upstreams } from "../support/upstreams.js";
import { type WebhookReceiver } from "../support/webhook-receiver.js";
import {
  generateGateway,
  generateLink,
  generateQr,
  settle,
  statuses,
  type Tracked,
  adminOf,
} from "../support/traffic.js";
import { createTenant, type Tenant } from "../support/app.js";
import { assertInvariants, probe, waitDelivered, waitTerminal } from "../support/invariants.js";
import { sleep, waitFor } from "../support/wait.js";

/** How long each upstream stays faulty: 60 s in the full run, 15 s in CI's compressed run. */
const OUTAGE_MS = FULL ? 60_000 : 15_000;

/**
 * Issue 8 "Faults": the network md5 API, the gateway API and the payment-link page are each down
 * (port closed), slow (every answer after 5 s) or answering garbage, all three at once, for OUTAGE_MS.
 * Half of each area's payments are settled by the payer during the fault, half after it. During the
 * fault no transaction may reach a terminal state the payer did not cause (with the upstream unreadable,
 * none may end at all); after recovery each reaches exactly the outcome the payer chose.
 */
describe(`upstreams down, slow and answering garbage for ${OUTAGE_MS / 1000} s`, () => {
  let rig: FaultRig;
  let db: FaultRig["db"];
  let ups: Upstreams;
  let receiver: WebhookReceiver;
  let cluster: Cluster;
  let api: ServiceProcess;
  let worker: ServiceProcess;

  beforeAll(async () => {
    rig = await startFaultRig("upstream-faults");
    ({ db, ups, receiver, cluster } = rig);
    api = await cluster.add("api", "api");
    worker = await cluster.add("worker", "worker");
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  for (const kind of ["down", "slow", "garbage"] as FaultKind[]) {
    it(`${kind}: nothing ends during the fault that the payer did not end; every payment ends right after recovery`, () =>
      withLogs(cluster, async () => {
        // A tenant per round, so one round's outcome never leaks into the next one's checks.
        const tenant: Tenant = await createTenant(adminOf(api.url), {
          ...ups.tenantOptions(`Fault Shop ${kind}`),
          webhooks: receiver,
        });
        const txs: Tracked[] = [];
        const polls = ups.link.calls("check-payment-status");
        // Per area: [settled during the fault, settled after it] × outcomes.
        const during = [
          await generateQr(api.url, tenant, "SUCCESS"),
          await generateQr(api.url, tenant, "FAILED"),
          await generateGateway(api.url, tenant, "SUCCESS"),
          await generateGateway(api.url, tenant, "FAILED"),
          await generateLink(api.url, tenant, "SUCCESS"),
        ];
        const after = [
          await generateQr(api.url, tenant, "SUCCESS"),
          await generateGateway(api.url, tenant, "SUCCESS"),
          await generateLink(api.url, tenant, "SUCCESS"),
          await generateLink(api.url, tenant, "FAILED"),
        ];
        const round = [...during, ...after];
        txs.push(...round);
        // The worker's sweep claims the link payments (the api process follows none) and polls PayWay for them.
        await waitFor(() => ups.link.calls("check-payment-status") >= polls + 3, 60_000, 100, "the worker's polls");

        for (const which of ["network", "gateway", "link"] as const) await ups.fault(which, kind);
        const faultStart = Date.now();
        // The outage lasts OUTAGE_MS and at least 3 runs of each monitor of the worker (each asks its upstream).
        const runs = async () => Math.min(await worker.jobRuns("qr.monitor"), await worker.jobRuns("gateway.monitor"));
        const runsAtStart = await runs();
        for (const t of during) await settle(ups, t);
        const violations: string[] = [];
        const settledDuring = new Set(during.map((t) => t.id));
        while (Date.now() - faultStart < OUTAGE_MS || (await runs()) < runsAtStart + 3) {
          const now = await statuses(
            db.url,
            round.map((t) => t.id),
          );
          for (const t of round) {
            const s = now.get(t.id) ?? "?";
            if (s === "PENDING" || s === "CHECKOUT") continue;
            // A slow upstream still answers: a payment the payer ended may end, with the payer's outcome.
            const allowed = kind === "slow" && settledDuring.has(t.id) && s === t.expect;
            if (!allowed)
              violations.push(
                `${t.area}:${t.id} became ${s} ${Math.round((Date.now() - faultStart) / 1000)} s into the fault (payer: ${settledDuring.has(t.id) ? t.expect : "nothing yet"})`,
              );
          }
          if (violations.length > 0) break;
          await sleep(500);
        }
        for (const which of ["network", "gateway", "link"] as const) await ups.fault(which, "ok");
        expect(violations).toEqual([]);

        const recovered = Date.now();
        for (const t of after) await settle(ups, t);
        await waitTerminal(db.url, round, 120_000);
        const recoveryS = Math.round((Date.now() - recovered) / 1000);
        txs.push(await probe(cluster.processes, api, ups, tenant, db.url));
        await waitDelivered(db.url, Object.values(tenant.keyIds), receiver, 60_000);
        const summary = await assertInvariants(db.url, [tenant], txs, receiver);
        console.log(
          `upstreams ${kind} for ${OUTAGE_MS / 1000} s: all terminal ${recoveryS} s after recovery; ${JSON.stringify(summary)}`,
        );
      }));
  }
});
