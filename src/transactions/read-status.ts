import type { TransactionStore } from "./transition.js";
import { heldSql } from "./mismatch.js";

/**
 * When a row counts as due, as SQL with its parameters: its expiry plus its area's grace (during which only an
 * answering check expires it; the areas declare theirs), so a non-terminal row past it reads as EXPIRED. A held
 * row (a payment that differs from what was asked, waiting for an operator: 0183) is never due.
 */
export function dueSql(store: Pick<TransactionStore, "graces">): { sql: string; params: unknown[] } {
  const graces = store.graces();
  const graceCase =
    graces.length === 0 ? "0" : `(case area ${graces.map(() => "when ? then ?::float8").join(" ")} else 0 end)`;
  return {
    sql: `(case when ${heldSql()} then 'infinity'::timestamptz else expires_at + ${graceCase} * interval '1 millisecond' end)`,
    params: graces.flat(),
  };
}

/** A payment recorded late (paid after the expiry, or seen only after it): upstream.late = true. */
export const LATE_SQL = `upstream @> '{"late": true}'::jsonb`;

/**
 * A row's status as reads show it, as one SQL expression (the overview's counts; the filters use the same rule):
 * a non-terminal row past its due time is EXPIRED.
 */
export function statusAsReadSql(
  store: Pick<TransactionStore, "graces">,
  now: Date,
): { sql: string; params: unknown[] } {
  const due = dueSql(store);
  return {
    sql: `(case when status in ('PENDING','CHECKOUT') and ${due.sql} <= ? then 'EXPIRED' else status end)`,
    params: [...due.params, now],
  };
}
