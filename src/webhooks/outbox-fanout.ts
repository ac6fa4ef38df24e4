import type { OutboxFanout } from "../transactions/outbox-sql.js";

/**
 * The webhooks side of every outbox write: a pending delivery row for each enabled endpoint of the event's
 * key whose filter takes the event type, in the same statement as the event (so a committed event always
 * has its deliveries). The transactions module runs it without knowing what it writes.
 */
export const WEBHOOK_OUTBOX: OutboxFanout = {
  name: "wd",
  sql: `insert into webhook_delivery (id, event_ref, endpoint_ref, state, attempts, next_attempt_at, created_at)
    select 'whd_' || replace(gen_random_uuid()::text, '-', ''), ev.id, e.id, 'pending', 0, ev.created_at, ev.created_at
    from ev join webhook_endpoint e on e.api_key_ref = ev.api_key_ref
    where e.enabled and (jsonb_array_length(e.events) = 0 or e.events @> to_jsonb(ev.type))
    returning event_ref`,
};
