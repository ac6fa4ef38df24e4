// What the lifecycle bench prints for a payment whose webhook or subscriber's SUCCESS never came: enough to find
// it in the service (its row, its outbox events, their webhook deliveries and every attempt) and in the bench
// (the pay call, the subscriber's socket), each time shown as ms after the pay call.
import pg from "pg";
import type { Missing } from "./drain.js";

type Row = Record<string, unknown>;

/** ms after `from` (the pay call), or the absolute time when there was no pay. */
function at(t: unknown, from: number | null): string {
  if (t === null || t === undefined) return "-";
  const ms = t instanceof Date ? t.getTime() : Number(t);
  return from === null ? new Date(ms).toISOString() : `${ms - from >= 0 ? "+" : ""}${Math.round(ms - from)} ms`;
}

/** One line per socket the subscriber opened. */
function socketLines(m: Missing): string[] {
  const p = m.payment;
  const t = (v: number | null) => at(v, p.payAt);
  const lines = p.sockets.map(
    (s, i) =>
      `  subscriber socket ${i + 1}: started ${t(s.startedAt)}, opened ${t(s.openedAt)}, acknowledged ${t(s.connectedAt)}, ` +
      `results ${s.results}, completed ${t(s.completedAt)}, closed ${t(s.closedAt)}${s.close ? ` (${s.close})` : ""}` +
      `${s.error ? ` — ${s.error}` : ""}`,
  );
  if (lines.length === 0) lines.push("  subscriber: no socket");
  if (p.error !== null || p.seenOther !== null)
    lines.push(`  payment: ${p.error ?? ""}${p.seenOther ? ` saw ${p.seenOther}` : ""}`);
  return lines;
}

interface Rows {
  txs: Row[];
  events: Row[];
  deliveries: Row[];
  attempts: Row[];
}

/** The service's records of some transactions: rows, outbox events, webhook deliveries and their attempts. */
async function readRows(client: pg.Client, ids: string[]): Promise<Rows> {
  const q = async (sql: string) => (await client.query<Row>(sql, [ids])).rows;
  return {
    txs: await q(
      `select id, status, created_at, updated_at, completed_at, next_check_at, check_failures from "transaction" where id = any($1)`,
    ),
    events: await q(
      `select transaction_ref, id, type, status, created_at from transaction_event where transaction_ref = any($1) order by seq`,
    ),
    deliveries: await q(
      `select e.transaction_ref, e.type, d.id, d.state, d.attempts, d.next_attempt_at, d.last_error, d.delivered_at
       from webhook_delivery d join transaction_event e on e.id = d.event_ref where e.transaction_ref = any($1) order by d.created_at`,
    ),
    attempts: await q(
      `select a.delivery_ref, a.attempted_at, a.status_code, a.latency_ms, a.error from webhook_attempt a
       join webhook_delivery d on d.id = a.delivery_ref join transaction_event e on e.id = d.event_ref
       where e.transaction_ref = any($1) order by a.id`,
    ),
  };
}

function linesFor(m: Missing, r: Rows): string[] {
  const from = m.payment.payAt;
  const tx = r.txs.find((x) => x.id === m.transactionId);
  const lines = [
    `${m.transactionId}: never got ${m.what.join(", ")}; generated ${m.payment.generateMs.toFixed(0)} ms, paid ${at(from, null)}`,
    tx
      ? `  row: ${String(tx.status)}, updated ${at(tx.updated_at, from)}, completed ${at(tx.completed_at, from)}, next check ${at(tx.next_check_at, from)}, check failures ${String(tx.check_failures)}`
      : "  row: none",
  ];
  for (const e of r.events.filter((x) => x.transaction_ref === m.transactionId))
    lines.push(`  event ${String(e.id)} ${String(e.type)} ${String(e.status)} at ${at(e.created_at, from)}`);
  for (const d of r.deliveries.filter((x) => x.transaction_ref === m.transactionId)) {
    lines.push(
      `  delivery ${String(d.id)} (${String(d.type)}): ${String(d.state)}, ${String(d.attempts)} attempts, next ${at(d.next_attempt_at, from)}, delivered ${at(d.delivered_at, from)}${d.last_error ? `, last error ${String(d.last_error)}` : ""}`,
    );
    for (const a of r.attempts.filter((x) => x.delivery_ref === d.id))
      lines.push(
        `    attempt at ${at(a.attempted_at, from)}: ${a.status_code === null ? "no answer" : `HTTP ${String(a.status_code)}`}, ${String(a.latency_ms)} ms${a.error ? `, ${String(a.error)}` : ""}`,
      );
  }
  const got = Object.entries(m.arrived).map(([type, t]) => `${type} ${at(t, from)}`);
  lines.push(`  receiver got: ${got.length > 0 ? got.join(", ") : "nothing"}`, ...socketLines(m));
  return lines;
}

/**
 * Each missing payment described (one list of lines per payment), read from the step's database. Every one is
 * described: a never is a defect to find, and the first of a thousand may not be the typical one.
 */
export async function describeNever(dbUrl: string, missing: Missing[]): Promise<string[][]> {
  if (missing.length === 0) return [];
  const client = new pg.Client({ connectionString: dbUrl, application_name: "pqr-bench-probe" });
  await client.connect();
  try {
    const out: string[][] = [];
    // In slices, so a step with thousands missing does not send one enormous statement.
    for (let i = 0; i < missing.length; i += 500) {
      const slice = missing.slice(i, i + 500);
      const rows = await readRows(
        client,
        slice.map((m) => m.transactionId),
      );
      out.push(...slice.map((m) => linesFor(m, rows)));
    }
    return out;
  } finally {
    await client.end();
  }
}
