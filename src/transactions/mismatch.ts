// A payment that arrived but is not what was asked (docs/decisions/0183-held-payments.md): each area compares what
// its upstream says was paid with what the transaction asked for, and a difference holds the payment instead of
// completing it. The comparison, the record kept on the transaction and what "held" means in SQL live here, so the
// three areas and the read side say it one way.

import type { Json, TxStatus } from "./transaction.entity.js";
import { canonicalDecimal, currencyCode, moneyText } from "../money/money.js";

export type MismatchField = "amount" | "currency" | "account";

/** One side of the comparison: an amount, its currency and (where the upstream names it) the receiving account. */
export interface PaymentFacts {
  amount: string | null;
  currency: string | null;
  /** The receiving account (the network's toAccountId); null where the area cannot see one. */
  account: string | null;
}

/** What a held payment records (`upstream.mismatch`): what was asked, what arrived, who said so and when. */
export interface MismatchRecord {
  fields: MismatchField[];
  expected: PaymentFacts;
  arrived: PaymentFacts;
  /** The upstream's own reference of the payment (network hash, gateway apv, page client id), if it gave one. */
  reference: string | null;
  /** Which answer said so, e.g. "network check_transaction_by_md5". */
  source: string;
  /** When the service saw it (ISO 8601). */
  detectedAt: string;
  /** Sent after the expiry, or seen after the transaction had expired (0107's late payment). */
  late?: boolean;
  resolution?: MismatchResolution;
}

/** An operator's decision on a held payment, and who took it when. */
export interface MismatchResolution {
  action: "accepted" | "failed";
  /** Who: what the operator's client said (e.g. "dashboard", "cli (ops@host)"), with the admin token. */
  by: string;
  at: string;
  /** The request that resolved it (its access-log line has the client address). */
  requestId: string;
  note: string | null;
}

/**
 * A held transaction, as SQL over a row alias: it has a mismatch that no operator resolved yet. Nothing but the
 * resolution changes it, no monitor checks it and no read expires it.
 */
export function heldSql(alias = ""): string {
  const u = `${alias === "" ? "" : `${alias}.`}upstream`;
  return `((${u} -> 'mismatch') is not null and (${u} #> '{mismatch,resolution}') is null)`;
}

/** What the mismatch rules read of a transaction (a TxRecord has it; named here so record.ts may import this file). */
type HasUpstream = { upstream: Json };

export function mismatchOf(tx: HasUpstream): MismatchRecord | null {
  const m = tx.upstream.mismatch;
  return m !== null && typeof m === "object" ? (m as MismatchRecord) : null;
}

/** Held: a mismatch no operator has resolved (the status is what it was when it arrived: PENDING, CHECKOUT, EXPIRED). */
export function isHeld(tx: HasUpstream): boolean {
  const m = mismatchOf(tx);
  return m !== null && m.resolution === undefined;
}

/** The statuses a held transaction can have: the one it had when the payment arrived. */
export const HELD_STATUSES: readonly TxStatus[] = ["PENDING", "CHECKOUT", "EXPIRED"];

/** Account ids are compared without case or surrounding space (`shop@bank` and `Shop@Bank` are one account). */
const accountKey = (value: unknown): string | null =>
  typeof value === "string" && value.trim() !== "" ? value.trim().toLowerCase() : null;

/**
 * Which facts differ between what was asked and what arrived. Amounts are compared as exact decimals (1.5 and
 * "1.50" agree; "1.505" and "1.50" do not; nothing is rounded), currencies by code, accounts without case. A fact
 * that arrived missing or unreadable differs. The account is compared only where one was expected.
 */
export function differences(
  expected: { amount: string; currency: string; account?: string | null },
  arrived: { amount: unknown; currency: unknown; account?: unknown },
): MismatchField[] {
  const out: MismatchField[] = [];
  const want = canonicalDecimal(expected.amount);
  const got = canonicalDecimal(arrived.amount);
  if (want === null || got === null || want !== got) out.push("amount");
  const wantCurrency = currencyCode(expected.currency);
  if (wantCurrency === null || wantCurrency !== currencyCode(arrived.currency)) out.push("currency");
  const wantAccount = accountKey(expected.account);
  if (wantAccount !== null && wantAccount !== accountKey(arrived.account)) out.push("account");
  return out;
}

/** Text of an upstream value as it arrived (a JSON number keeps its shortest text); null when absent. */
function factText(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return typeof value === "string" && value !== "" ? value.slice(0, 200) : null;
}

/**
 * The record of a payment that differs, or null when it is what was asked. `expected` is what the transaction (or
 * the QR issued for it) asked; `arrived` what the upstream reported.
 */
export function mismatchRecord(
  expected: { amount: string; currency: string; account?: string | null },
  arrived: { amount: unknown; currency: unknown; account?: unknown },
  about: { reference?: unknown; source: string; at: Date },
): MismatchRecord | null {
  const fields = differences(expected, arrived);
  if (fields.length === 0) return null;
  return {
    fields,
    expected: { amount: expected.amount, currency: expected.currency, account: expected.account ?? null },
    arrived: {
      amount: factText(arrived.amount),
      currency: factText(arrived.currency),
      account: factText(arrived.account),
    },
    reference: factText(about.reference),
    source: about.source,
    detectedAt: about.at.toISOString(),
  };
}

/** The public view of a mismatch (events, webhooks, GraphQL): amounts by the one money rule, every key present. */
export function mismatchView(m: MismatchRecord): Json {
  const facts = (f: PaymentFacts) => ({
    amount: f.amount === null ? null : moneyText(f.amount, currencyCode(f.currency) ?? ""),
    currency: f.currency,
    account: f.account,
  });
  return {
    fields: [...m.fields],
    expected: facts(m.expected),
    arrived: facts(m.arrived),
    reference: m.reference,
    source: m.source,
    detectedAt: m.detectedAt,
    late: m.late === true,
    resolution:
      m.resolution === undefined
        ? null
        : { action: m.resolution.action, by: m.resolution.by, at: m.resolution.at, note: m.resolution.note },
  };
}

/** One sentence for the error log line and messages: "amount 1.00 USD arrived, 1.50 USD asked". */
export function describeMismatch(m: MismatchRecord): string {
  const money = (f: PaymentFacts) =>
    `${f.amount === null ? "?" : moneyText(f.amount, currencyCode(f.currency) ?? "")} ${f.currency ?? "?"}`;
  const account = (f: PaymentFacts) => (f.account === null ? "" : ` to ${f.account}`);
  return (
    `${m.fields.join(", ")} differ: ${money(m.arrived)}${account(m.arrived)} arrived, ` +
    `${money(m.expected)}${account(m.expected)} asked (${m.source})`
  );
}
