// What every fault scenario must end with, read from the database and the webhook receiver:
// every transaction terminal with the outcome the test drove, one terminal event per transaction and
// nothing after it, every event delivered (signed) at least once and acknowledged exactly once in the
// delivery log, and the service answering normally again.

import { expect } from "@jest/globals";
import { type ServiceProcess } from "./cluster.js";
import type { WebhookReceiver } from "./webhook-receiver.js";
import { dbClient, generateQr, settle, type Tracked } from "./traffic.js";
import { type Tenant } from "./app.js";
import type { Upstreams } from "./upstreams.js";
import { sleep } from "./wait.js";

const TERMINAL_EVENT: Record<string, string> = {
  SUCCESS: "payment.completed",
  FAILED: "payment.failed",
  EXPIRED: "payment.expired",
};
const TERMINAL_TYPES = new Set(Object.values(TERMINAL_EVENT));

export interface Summary {
  transactions: number;
  events: number;
  deliveries: number;
  /** Deliveries the receiver saw more than once (allowed: at least once). */
  redelivered: number;
  failedAttempts: number;
}

/** Waits until every tracked transaction is terminal (any terminal state); returns the statuses. */
export async function waitTerminal(dbUrl: string, txs: Tracked[], timeoutMs: number): Promise<Map<string, string>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const c = await dbClient(dbUrl).catch(() => null);
    if (c) {
      try {
        const { rows } = await c.query<{ id: string; status: string }>(
          `select id, status from "transaction" where id = any($1)`,
          [txs.map((t) => t.id)],
        );
        const m = new Map(rows.map((r) => [r.id, r.status]));
        if (txs.every((t) => ["SUCCESS", "FAILED", "EXPIRED"].includes(m.get(t.id) ?? ""))) return m;
        if (Date.now() > until) {
          const open = txs.filter((t) => !["SUCCESS", "FAILED", "EXPIRED"].includes(m.get(t.id) ?? ""));
          throw new Error(
            `${open.length} of ${txs.length} transactions not terminal after ${timeoutMs} ms: ${open
              .slice(0, 10)
              .map((t) => `${t.area}:${t.id}=${m.get(t.id)}`)
              .join(", ")}`,
          );
        }
      } finally {
        await c.end().catch(() => undefined);
      }
    } else if (Date.now() > until) throw new Error("database unreachable");
    await sleep(500);
  }
}

/** Waits until every webhook delivery of these keys is delivered, and the receiver has acknowledged each event. */
export async function waitDelivered(
  dbUrl: string,
  keyIds: string[],
  receiver: WebhookReceiver,
  timeoutMs: number,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const c = await dbClient(dbUrl);
    try {
      const { rows } = await c.query<{ id: string; state: string; event_ref: string }>(
        `select d.id, d.state, d.event_ref from webhook_delivery d join transaction_event e on e.id = d.event_ref where e.api_key_ref = any($1)`,
        [keyIds],
      );
      const acked = receiver.acknowledged();
      const open = rows.filter((r) => r.state !== "delivered" || !acked.has(r.event_ref));
      if (open.length === 0) return;
      if (Date.now() > until) {
        throw new Error(
          `${open.length} of ${rows.length} webhook deliveries not delivered after ${timeoutMs} ms: ${open
            .slice(0, 8)
            .map((r) => `${r.id}(${r.state}, acked=${acked.has(r.event_ref)})`)
            .join(", ")}`,
        );
      }
    } finally {
      await c.end();
    }
    await sleep(500);
  }
}

/**
 * The end-of-scenario check. `txs` must be every transaction of `tenants`' keys (the check also fails on
 * a transaction the test did not create).
 */
export async function assertInvariants(
  dbUrl: string,
  tenants: Tenant[],
  txs: Tracked[],
  receiver: WebhookReceiver,
): Promise<Summary> {
  const keyIds = tenants.flatMap((t) => Object.values(t.keyIds));
  const c = await dbClient(dbUrl);
  try {
    const { rows: txRows } = await c.query<{ id: string; status: string; area: string; api_key_ref: string }>(
      `select id, status, area, api_key_ref from "transaction" where api_key_ref = any($1)`,
      [keyIds],
    );
    const { rows: events } = await c.query<{
      id: string;
      transaction_ref: string;
      type: string;
      status: string;
      api_key_ref: string;
      seq_text: string;
    }>(
      `select id, transaction_ref, type, status, api_key_ref, seq::text as seq_text from transaction_event where api_key_ref = any($1) order by transaction_event.seq`,
      [keyIds],
    );
    const { rows: deliveries } = await c.query<{
      id: string;
      event_ref: string;
      state: string;
      oks: string;
      fails: string;
    }>(
      `select d.id, d.event_ref, d.state,
         (select count(*) from webhook_attempt a where a.delivery_ref = d.id and a.status_code between 200 and 299)::text as oks,
         (select count(*) from webhook_attempt a where a.delivery_ref = d.id and (a.status_code is null or a.status_code not between 200 and 299))::text as fails
       from webhook_delivery d join transaction_event e on e.id = d.event_ref where e.api_key_ref = any($1)`,
      [keyIds],
    );

    // 1. Every transaction is one the test made, terminal, with the outcome the test drove.
    const tracked = new Map(txs.map((t) => [t.id, t]));
    const wrong = txRows
      .filter((r) => tracked.get(r.id)?.expect !== r.status)
      .map(
        (r) => `${r.area}:${r.id} is ${r.status}, expected ${tracked.get(r.id)?.expect ?? "(not created by the test)"}`,
      );
    const missing = txs.filter((t) => !txRows.some((r) => r.id === t.id)).map((t) => `${t.area}:${t.id} missing`);
    expect([...wrong, ...missing]).toEqual([]);

    // 2. Per transaction: created first, exactly one terminal event, matching the status, and it is the last.
    const byTx = new Map<string, typeof events>();
    for (const e of events) byTx.set(e.transaction_ref, [...(byTx.get(e.transaction_ref) ?? []), e]);
    const badSeq: string[] = [];
    for (const r of txRows) {
      const es = byTx.get(r.id) ?? [];
      const types = es.map((e) => e.type);
      // A late payment (generic QR, docs/decisions/0107-late-payments.md): payment.expired, then
      // payment.completed (SUCCESS).
      const latePayment =
        r.area === "qr" &&
        r.status === "SUCCESS" &&
        types.slice(-2).join(",") === "payment.expired,payment.completed" &&
        types.filter((t) => TERMINAL_TYPES.has(t)).length === 2;
      const terminal = es.filter((e) => TERMINAL_TYPES.has(e.type) && !(latePayment && e.type === "payment.expired"));
      if (types[0] !== "payment.created" || types.filter((t) => t === "payment.created").length !== 1)
        badSeq.push(`${r.id}: ${types.join(",")} (created must come first, once)`);
      // The one event a terminal transaction may still take: a gateway-link SUCCESS whose receipt came after the
      // approval gets one transaction.updated (docs/decisions/0097-gateway-link-events-and-the-late-receipt.md).
      const at = terminal.length === 1 ? es.indexOf(terminal[0]) : -1;
      const after = at < 0 ? [] : es.slice(at + 1);
      const lateReceipt =
        after.length === 1 &&
        after[0].type === "transaction.updated" &&
        after[0].status === "SUCCESS" &&
        r.status === "SUCCESS" &&
        r.area === "gateway_link";
      if (terminal.length !== 1) badSeq.push(`${r.id}: ${terminal.length} terminal events (${types.join(",")})`);
      else if (after.length > 0 && !lateReceipt)
        badSeq.push(`${r.id}: events after the terminal one (${types.join(",")})`);
      else if (terminal[0].type !== TERMINAL_EVENT[r.status] || terminal[0].status !== r.status)
        badSeq.push(`${r.id}: terminal event ${terminal[0].type}/${terminal[0].status} but status ${r.status}`);
      const before = es.slice(0, Math.max(0, at)).filter((e) => !(latePayment && e.type === "payment.expired"));
      if (before.some((e) => e.status !== "PENDING" && e.status !== "CHECKOUT"))
        badSeq.push(`${r.id}: a non-last event carries a terminal status`);
    }
    expect(badSeq).toEqual([]);

    // 3. Every event has one delivery row per endpoint (one endpoint per key here), delivered, with exactly one 2xx attempt.
    const eventIds = new Set(events.map((e) => e.id));
    const deliveredRows = deliveries.filter((d) => d.state === "delivered" && d.oks === "1");
    const badDeliveries = deliveries
      .filter((d) => !(d.state === "delivered" && d.oks === "1"))
      .map((d) => `${d.id} state=${d.state} 2xx-attempts=${d.oks}`);
    expect(badDeliveries).toEqual([]);
    const rowsPerEvent = new Map<string, number>();
    for (const d of deliveries) rowsPerEvent.set(d.event_ref, (rowsPerEvent.get(d.event_ref) ?? 0) + 1);
    expect(
      events
        .filter((e) => rowsPerEvent.get(e.id) !== 1)
        .map((e) => `${e.id} (${e.type}) has ${rowsPerEvent.get(e.id) ?? 0} delivery rows`),
    ).toEqual([]);

    // 4. The receiver: every event arrived signed and acknowledged; nothing unsigned, malformed, or unknown.
    const mine = receiver.deliveries.filter((d) => keyIds.includes(d.keyId));
    expect(receiver.malformed).toEqual([]);
    expect(
      mine
        .filter((d) => !d.signatureOk || !d.headersOk)
        .map((d) => `${d.eventId} signatureOk=${d.signatureOk} headersOk=${d.headersOk}`),
    ).toEqual([]);
    const acked = receiver.acknowledged();
    expect(
      events
        .filter((e) => !acked.has(e.id))
        .map((e) => `${e.id} ${e.type} of ${e.transaction_ref} never acknowledged by the receiver`),
    ).toEqual([]);
    expect(mine.filter((d) => !eventIds.has(d.eventId)).map((d) => `unknown event ${d.eventId}`)).toEqual([]);
    const eventOf = new Map(events.map((e) => [e.id, e]));
    expect(
      mine
        .filter(
          (d) =>
            eventOf.get(d.eventId)?.type !== d.type ||
            eventOf.get(d.eventId)?.transaction_ref !== d.transactionId ||
            eventOf.get(d.eventId)?.api_key_ref !== d.keyId,
        )
        .map((d) => `delivery of ${d.eventId} does not match its event`),
    ).toEqual([]);

    const seen = new Map<string, number>();
    for (const d of mine) seen.set(d.eventId, (seen.get(d.eventId) ?? 0) + 1);
    return {
      transactions: txRows.length,
      events: events.length,
      deliveries: deliveredRows.length,
      redelivered: [...seen.values()].filter((n) => n > 1).length,
      failedAttempts: deliveries.reduce((n, d) => n + Number(d.fails), 0),
    };
  } finally {
    await c.end();
  }
}

/**
 * "The service answers normally again": every process is ready, and a fresh payment goes end to end
 * (generate on the first api process, pay, SUCCESS, webhooks). Returns the probe transaction to track.
 */
export async function probe(
  processes: ServiceProcess[],
  api: { url: string },
  ups: Upstreams,
  tenant: Tenant,
  dbUrl: string,
): Promise<Tracked> {
  for (const p of processes.filter((x) => x.running)) await p.waitReady(30_000);
  const tx = await generateQr(api.url, tenant, "SUCCESS");
  await settle(ups, tx);
  await waitTerminal(dbUrl, [tx], 30_000);
  return tx;
}
