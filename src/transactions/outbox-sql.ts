import { toDate } from "../db/sql.js";
import type { StoredEvent } from "./stored-event.js";
import type { EventType } from "./transaction-event.entity.js";
import type { Json } from "./transaction.entity.js";

export const NOTIFY_CHANNEL = "pqr_events";

/**
 * Rows another module writes in the same statement as each event, so they commit with it or not at all.
 * The webhooks module owns the one there is (a delivery row per matching endpoint: webhooks/outbox-fanout.ts);
 * app.ts hands it to the store. `sql` reads the inserted events as `ev` and returns `event_ref` per row.
 */
export interface OutboxFanout {
  name: string;
  sql: string;
}

/**
 * The outbox write as common table expressions, so it rides in the same statement as the change it
 * records: the event rows (`ev`), the fan-out's rows (webhook deliveries), and one pg_notify carrying
 * every event id of the statement, comma-separated (`nt`, delivered on commit only).
 * `source` names a relation with, per event: id (the transaction's), api_key_ref, area, status, ev_id,
 * ev_type, payload (json: kept as written, so meta stays exact) and created_at. One statement is atomic: all
 * of it commits or none. The only parameter is the notify channel. A select CTE runs only when referenced,
 * so the final select must read `nt` (and reads the fan-out for the delivery counts: outboxCounts).
 */
export function outboxCtes(source: string, fanout: OutboxFanout | null): string {
  return `ev as (
    insert into transaction_event (id, transaction_ref, api_key_ref, area, type, status, payload, created_at)
    select s.ev_id, s.id, s.api_key_ref, s.area, s.ev_type, s.status, s.payload, s.created_at from ${source} s
    returning ${EVENT_COLUMNS}),
  ${fanout === null ? "" : `${fanout.name} as (${fanout.sql}),`}
  nt as (select pg_notify(?::text, string_agg(ev.id, ',' order by ev.seq)) from ev having count(*) > 0)`;
}

/** A NOTIFY payload of the events channel: one or more event ids, comma-separated (ids never contain commas). */
export function notifiedIds(payload: string): string[] {
  return payload.split(",").filter((id) => id.length > 0);
}

/** Columns the final select adds per event row: how many deliveries it got, and (to run it) the notify. */
export function outboxCounts(fanout: OutboxFanout | null): string {
  const deliveries = fanout === null ? "0" : `(select count(*) from ${fanout.name} f where f.event_ref = ev.id)::int`;
  return `${deliveries} as deliveries, (select count(*) from nt)::int as notified`;
}

/**
 * The transitions' outbox write on its own: one statement for a group's events, inside the group's database
 * transaction. Every column is an array (one element per event, in the order their sequence numbers follow).
 */
export function outboxManySql(fanout: OutboxFanout | null): string {
  return `with src as (
    select * from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::json[], ?::timestamptz[])
      with ordinality as s(id, api_key_ref, area, status, ev_id, ev_type, payload, created_at, ord) order by ord),
  ${outboxCtes("src", fanout)}
  select ev.seq, ev.id, ev.transaction_ref, ev.api_key_ref, ev.area, ev.type, ev.status, ev.payload, ev.created_at,
    ${outboxCounts(fanout)} from ev`;
}

/** Every column of an outbox row, named (prepared statements read them: a prepared `*` fails once one is added). */
export const EVENT_COLUMNS = "seq, id, transaction_ref, api_key_ref, area, type, status, payload, created_at";

/** An outbox row as read back (deliveries only where the statement that wrote it counted them). */
export function rowToEvent(r: Record<string, unknown>): StoredEvent {
  const event: StoredEvent = {
    seq: String(r.seq),
    id: r.id as string,
    transactionId: r.transaction_ref as string,
    apiKeyRef: r.api_key_ref as string,
    area: r.area as string,
    type: r.type as EventType,
    status: r.status as string,
    payload: r.payload as Json,
    createdAt: toDate(r.created_at),
  };
  if (r.deliveries !== undefined) event.deliveries = Number(r.deliveries);
  return event;
}
