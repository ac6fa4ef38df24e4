// recheckPayment as its callers send it (an API key on /graphql, the admin token on the operator's), the outbox a
// recheck writes to, and `npm run admin -- recheck` run in-process: shared by the per-area recheck tests.

import { runAdminCli } from "../../src/admin/cli.js";
import { ADMIN_TOKEN, type TestApp } from "./app.js";

export interface Rechecked {
  outcome: string;
  detail: string;
  recorded: boolean;
  windowEndsAt: string;
  transaction: { id: string; status: string; latePayment: boolean; receiptUrl: string | null };
}

export interface GqlError {
  message: string;
  extensions?: { code?: string; retryAfter?: number; windowEndsAt?: string };
}

export type RecheckReply = { result: Rechecked | null; error: GqlError | null };

const RECHECK = `mutation($id: ID!) { recheckPayment(transactionId: $id) {
  outcome detail recorded windowEndsAt transaction { id status latePayment receiptUrl } } }`;

/** One recheckPayment with these credentials (API-key headers, or null for the admin token). */
export async function recheck(t: TestApp, id: string, headers: Record<string, string> | null): Promise<RecheckReply> {
  const url = headers === null ? (t.app.adminUrl ?? t.url) : t.url;
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(headers ?? { authorization: `Bearer ${ADMIN_TOKEN}` }) },
    body: JSON.stringify({ query: RECHECK, variables: { id } }),
  });
  const json = (await res.json()) as { data?: { recheckPayment: Rechecked } | null; errors?: GqlError[] };
  return { result: json.data?.recheckPayment ?? null, error: json.errors?.[0] ?? null };
}

/** A recheck that must answer (no error). */
export async function rechecked(t: TestApp, id: string, headers: Record<string, string> | null): Promise<Rechecked> {
  const r = await recheck(t, id, headers);
  if (r.error !== null || r.result === null) throw new Error(`recheck refused: ${JSON.stringify(r.error)}`);
  return r.result;
}

/** A recheck that must be refused: its error. */
export async function refusal(t: TestApp, id: string, headers: Record<string, string> | null): Promise<GqlError> {
  const r = await recheck(t, id, headers);
  if (r.error === null) throw new Error(`recheck answered: ${JSON.stringify(r.result)}`);
  return r.error;
}

export interface OutboxRow {
  type: string;
  status: string;
  late: boolean | undefined;
}

/** The transaction's outbox, in order: each event's type, and the status and `late` of its webhook snapshot. */
export async function outbox(t: TestApp, id: string): Promise<OutboxRow[]> {
  const rows = await t.app.core.db.query<{
    type: string;
    payload: { transaction: { status: string; late?: boolean } };
  }>(`select type, payload from transaction_event where transaction_ref = ? order by seq`, [id]);
  return rows.map((r) => {
    const payload = typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload;
    return { type: r.type, status: payload.transaction.status, late: payload.transaction.late };
  });
}

/** `npm run admin -- <args>` against the test service: its exit code and what it printed. */
export async function cli(t: TestApp, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [log, error] = [console.log, console.error];
  console.log = (s: string) => void out.push(s);
  console.error = (s: string) => void err.push(s);
  try {
    const code = await runAdminCli(args, { PQR_URL: t.app.adminUrl ?? t.url, ADMIN_TOKEN });
    return { code, out: out.join("\n"), err: err.join("\n") };
  } finally {
    [console.log, console.error] = [log, error];
  }
}
