import type { Logger } from "../logger.js";

/** What a state-change line needs of a committed event (the events' outbox row). */
export interface StateChange {
  transactionId: string;
  area: string;
  type: string;
  status: string;
  payload: unknown;
}

function amountOf(payload: unknown): string {
  const tx = (payload as { transaction?: { amount?: unknown; currency?: unknown } } | null)?.transaction;
  return tx?.amount !== undefined && tx.currency !== undefined ? ` ${String(tx.amount)} ${String(tx.currency)}` : "";
}

/** What a mismatched payment's line says arrived and was asked (the snapshot's `mismatch`). */
function mismatchOf(payload: unknown): string {
  type Facts = { amount?: unknown; currency?: unknown; account?: unknown } | undefined;
  const m = (
    payload as {
      transaction?: { mismatch?: { fields?: unknown; expected?: Facts; arrived?: Facts; source?: unknown } };
    } | null
  )?.transaction?.mismatch;
  if (m === undefined) return "";
  const facts = (f: Facts) =>
    `${String(f?.amount ?? "?")} ${String(f?.currency ?? "?")}${f?.account ? ` to ${String(f.account)}` : ""}`;
  const fields = Array.isArray(m.fields) ? m.fields.join(", ") : "?";
  return `: ${fields} differ — ${facts(m.arrived)} arrived, ${facts(m.expected)} asked (${String(m.source ?? "?")})`;
}

/**
 * One line per committed state change, in the process that committed it: what a person watching the demo (or an
 * operator's log search) wants to see — the transaction, its status, the event, the amount. A payment that is not
 * what was asked is the one error line (held for an operator: docs/decisions/0183-held-payments.md).
 */
export function logStateChange(logger: Logger, e: StateChange): void {
  if (e.type === "payment.mismatched") {
    logger.error(
      { activity: { transactionId: e.transactionId, area: e.area, event: e.type, status: e.status } },
      `payment ${e.transactionId} HELD, not what was asked (${e.area})${mismatchOf(e.payload)}; ` +
        "an operator must accept it as paid or mark it failed (dashboard, resolveMismatch, npm run admin -- mismatch:resolve)",
    );
    return;
  }
  logger.info(
    { activity: { transactionId: e.transactionId, area: e.area, event: e.type, status: e.status } },
    `payment ${e.transactionId} ${e.status} (${e.type}, ${e.area}${amountOf(e.payload)})`,
  );
}

/** One webhook delivery attempt, as the delivery log records it. */
export interface WebhookAttempt {
  eventType: string;
  eventId: string;
  endpointId: string;
  url: string;
  /** The receiver's HTTP status, or null when there was no answer. */
  status: number | null;
  /** Null when delivered. */
  error: string | null;
  ms: number;
  attempt: number;
  /** When the next attempt is due, or null (delivered, or given up). */
  retryInMs: number | null;
}

/** Only the receiver's origin: a path or query may carry the receiver's own secret. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}

/** One line per webhook attempt: event, endpoint, outcome, time. Delivered at info, failed at warn (no stack). */
export function logWebhookAttempt(logger: Logger, a: WebhookAttempt): void {
  const target = `${originOf(a.url)} (${a.endpointId})`;
  const outcome =
    a.error === null
      ? `${a.status}`
      : `failed: ${a.error}${a.retryInMs === null ? ", giving up" : `, retry in ${Math.round(a.retryInMs / 1000)} s`}`;
  const activity = { event: a.eventType, eventId: a.eventId, endpoint: a.endpointId, status: a.status, ms: a.ms };
  const line = `webhook ${a.eventType} → ${target} ${outcome} (${a.ms} ms, attempt ${a.attempt})`;
  if (a.error === null) logger.info({ activity }, line);
  else logger.warn({ activity: { ...activity, error: a.error, attempt: a.attempt } }, line);
}
