import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { subscribe, type Sub } from "../support/ws.js";
import { Cluster, withLogs, type ServiceProcess } from "../support/cluster.js";
import { startFaultRig, type FaultRig } from "../support/fault-rig.js";
import { FULL } from "../support/db.js";
import { type Upstreams } from "../support/upstreams.js";
import { type WebhookReceiver } from "../support/webhook-receiver.js";
import {
  dbClient,
  generateGateway,
  generateLink,
  generateQr,
  settle,
  type Outcome,
  type Tracked,
  adminOf,
} from "../support/traffic.js";
import { AUTH, createTenant, type Tenant } from "../support/app.js";
import { assertInvariants, probe, waitDelivered, waitTerminal } from "../support/invariants.js";
import { sleep, waitFor } from "../support/wait.js";

const PER_TENANT = FULL ? { qr: 60, gateway: 20, link: 3 } : { qr: 24, gateway: 8, link: 2 };
const ALL = `subscription { transactionUpdates { id type transaction { transactionId status } } }`;
type Ev = { transactionUpdates: { id: string; type: string; transaction: { transactionId: string; status: string } } };

/**
 * Issue 8 "Scale-out": two api and two worker processes on one database. Clients generate through both
 * api processes, the payer settles on the simulators, and a graphql-ws subscriber per key on each api
 * process must see every event of its own key's transactions, exactly once, and nothing of any other
 * key's, wherever the event was committed (an api process, either worker).
 */
describe("scale-out: 2 api + 2 worker processes, subscribers on each api process", () => {
  let rig: FaultRig;
  let db: FaultRig["db"];
  let ups: Upstreams;
  let receiver: WebhookReceiver;
  let cluster: Cluster;
  let apis: ServiceProcess[];
  let tenants: Tenant[];

  beforeAll(async () => {
    rig = await startFaultRig("scale-out");
    ({ db, ups, receiver, cluster } = rig);
    apis = [await cluster.add("api-1", "api"), await cluster.add("api-2", "api")];
    await cluster.add("worker-1", "worker");
    await cluster.add("worker-2", "worker");
    tenants = [
      await createTenant(adminOf(apis[0].url), { ...ups.tenantOptions("Scale Shop A"), webhooks: receiver }),
      await createTenant(adminOf(apis[1].url), { ...ups.tenantOptions("Scale Shop B"), webhooks: receiver }),
    ];
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it("every client sees every event of its own transactions and none of others'; all end as the payer chose", () =>
    withLogs(cluster, async () => {
      const subs: { api: string; keyId: string; sub: Sub<Ev>; close(): void }[] = [];
      const connected: Promise<unknown>[] = [];
      for (const api of apis) {
        for (const t of tenants) {
          for (const kind of ["qr", "gateway", "gatewayLink"] as const) {
            const { sub, client } = subscribe<Ev>(api.url, AUTH[kind](t.keys[kind]), ALL);
            connected.push(new Promise((resolve) => client.on("connected", resolve)));
            subs.push({ api: api.name, keyId: t.keyIds[kind], sub, close: () => sub.close() });
          }
        }
      }
      // Every subscription is open before the first event: its socket acknowledged, then a moment for the
      // subscribe message that follows the acknowledgement.
      await Promise.all(connected);
      await sleep(750);

      const txs: Tracked[] = [];
      const started = Date.now();
      const outcome = (i: number): Outcome => (i % 4 === 3 ? "FAILED" : "SUCCESS");
      // Load through both api processes at once, alternating; the payer settles each right after issue.
      const lanes = tenants.flatMap((t) =>
        apis.map((api, ai) => async () => {
          const mine = (n: number) => (ai === 0 ? Math.ceil(n / 2) : Math.floor(n / 2)); // each tenant's count split over the two api processes
          for (let i = 0; i < mine(PER_TENANT.qr); i++) {
            const tx = await generateQr(api.url, t, outcome(i));
            txs.push(tx);
            await settle(ups, tx);
          }
          for (let i = 0; i < mine(PER_TENANT.gateway); i++) {
            const tx = await generateGateway(api.url, t, outcome(i));
            txs.push(tx);
            await settle(ups, tx);
          }
        }),
      );
      await Promise.all(lanes.map((f) => f()));
      const links: Tracked[] = [];
      const polls = ups.link.calls("check-payment-status");
      for (const [i, t] of tenants.entries()) {
        for (let j = 0; j < PER_TENANT.link; j++)
          links.push(await generateLink(apis[(i + j) % 2].url, t, j === 0 ? "SUCCESS" : "FAILED"));
      }
      txs.push(...links);
      // The workers' sweeps claim the payments (the api processes follow none) and poll PayWay's status call.
      await waitFor(
        () => ups.link.calls("check-payment-status") >= polls + links.length,
        60_000,
        100,
        "the workers' polls",
      );
      for (const l of links) await settle(ups, l);

      await waitTerminal(db.url, txs, 180_000);
      for (const [i, api] of apis.entries()) txs.push(await probe(cluster.processes, api, ups, tenants[i], db.url));
      await waitDelivered(
        db.url,
        tenants.flatMap((t) => Object.values(t.keyIds)),
        receiver,
        90_000,
      );
      const summary = await assertInvariants(db.url, tenants, txs, receiver);
      const loadS = Math.round((Date.now() - started) / 1000);

      // Fan-out: every subscriber has exactly its key's events, once each.
      const c = await dbClient(db.url);
      const { rows } = await c.query<{ id: string; api_key_ref: string }>(
        `select id, api_key_ref from transaction_event`,
      );
      await c.end();
      const byKey = new Map<string, Set<string>>();
      for (const r of rows) byKey.set(r.api_key_ref, (byKey.get(r.api_key_ref) ?? new Set()).add(r.id));
      const deadline = Date.now() + 15_000;
      const gaps = () =>
        subs
          .map((s) => {
            const got = s.sub.events.map((e) => e.transactionUpdates.id);
            const want = byKey.get(s.keyId) ?? new Set<string>();
            const missing = [...want].filter((id) => !got.includes(id));
            const foreign = got.filter((id) => !want.has(id));
            const dupes = got.length - new Set(got).size;
            return {
              who: `${s.api}/${s.keyId}`,
              missing: missing.length,
              foreign: foreign.length,
              dupes,
              error: s.sub.error ? JSON.stringify(s.sub.error).slice(0, 200) : null,
              sample: missing.slice(0, 3),
            };
          })
          .filter((g) => g.missing || g.foreign || g.dupes || g.error);
      while (gaps().length > 0 && Date.now() < deadline) await sleep(500);
      for (const s of subs) s.close();
      expect(gaps()).toEqual([]);
      const seen = subs.reduce((n, s) => n + s.sub.events.length, 0);
      console.log(
        `scale-out: ${txs.length} payments through 2 api processes in ${loadS} s, ${subs.length} subscribers received ${seen} events (each exactly its key's); ${JSON.stringify(summary)}`,
      );
    }));
});
