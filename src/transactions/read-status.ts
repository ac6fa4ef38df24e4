import type { TransactionStore } from "./transition.js";

/**
 * Status as reads show it: a non-terminal row past its expiry (plus the generic QR area's grace, during which only
 * an answering check expires it) counts as EXPIRED (it is expired on read). Takes one parameter: the QR grace in ms.
 */
export const DUE_SQL = `expires_at + (case when area = 'qr' then ?::float8 else 0 end) * interval '1 millisecond'`;

/** A payment recorded late (paid after the expiry, or seen only after it): upstream.late = true. */
export const LATE_SQL = `upstream @> '{"late": true}'::jsonb`;

/**
 * A row's status as reads show it, as one SQL expression (the overview's counts; the filters use the same rule):
 * parameters, in order: the QR grace (ms) and now.
 */
export function statusAsReadSql(
  store: Pick<TransactionStore, "graceMs">,
  now: Date,
): { sql: string; params: unknown[] } {
  return {
    sql: `(case when status in ('PENDING','CHECKOUT') and ${DUE_SQL} <= ? then 'EXPIRED' else status end)`,
    params: [store.graceMs("qr"), now],
  };
}
