import { checkArgument } from "../validation/checker.js";
import { DATE_TIME } from "../validation/rules.js";
import type { Db } from "../db/sql.js";
import type { TransactionStore } from "./transition.js";
import type { Area } from "./transaction.entity.js";
import { LATE_SQL, statusAsReadSql } from "./read-status.js";
import { moneyText, type CurrencyCode } from "../money/money.js";

/**
 * The operators' overview: what happened to the payments created in a window, counted in SQL (one statement over
 * the transaction table, grouped several ways at once), then shaped here. Amounts are summed as numeric per
 * currency and never added across currencies.
 */

/** Buckets are local hours or days of Phnom Penh: UTC+7 all year (Cambodia has no daylight saving time). */
export const OVERVIEW_TIME_ZONE = "Asia/Phnom_Penh";
const OFFSET_MS = 7 * 3_600_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Hourly buckets up to this range; daily beyond it. */
export const HOURLY_UP_TO_MS = 48 * HOUR_MS;
export const MAX_RANGE_DAYS = 400;
export const OVERVIEW_CURRENCIES: readonly CurrencyCode[] = ["USD", "KHR"];

export type BucketUnit = "HOUR" | "DAY";

export interface OverviewArgs {
  from: Date;
  to: Date;
  merchantId?: string | null;
  area?: Area | null;
}

export interface Counts {
  payments: number;
  paid: number;
  failed: number;
  expired: number;
  pending: number;
  late: number;
  finished: number;
  /** paid / finished (SUCCESS + FAILED + EXPIRED); null when none finished. */
  successRate: number | null;
}

export interface CurrencyFigures {
  currency: CurrencyCode;
  counts: Counts;
  paidAmount: string;
  series: { start: Date; counts: Counts; paidAmount: string }[];
}

export interface GroupFigures {
  id: string;
  name: string | null;
  counts: Counts;
  paid: { currency: CurrencyCode; count: number; amount: string }[];
}

export interface OverviewFigures {
  bucket: BucketUnit;
  totals: Counts;
  currencies: CurrencyFigures[];
  merchants: GroupFigures[];
  areas: GroupFigures[];
}

/** Refuses what the overview does not answer: an empty or reversed range, or one longer than 400 days. */
export function checkRange(from: Date, to: Date): void {
  checkArgument("from", from, DATE_TIME, "from is not a date");
  checkArgument("to", to, DATE_TIME, "to is not a date");
  const after = (v: unknown) => ((v as Date).getTime() > from.getTime() ? null : "must be after from");
  checkArgument("to", to, after, "to must be after from");
  const within = (v: unknown) =>
    (v as Date).getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS
      ? `must be at most ${MAX_RANGE_DAYS} days after from`
      : null;
  checkArgument("to", to, within, `The range is longer than ${MAX_RANGE_DAYS} days`);
}

/** Hour when the range is at most 48 hours, otherwise day. */
export function bucketUnit(from: Date, to: Date): BucketUnit {
  return to.getTime() - from.getTime() <= HOURLY_UP_TO_MS ? "HOUR" : "DAY";
}

/** The start of the Phnom Penh hour or day holding `t`. */
export function bucketStart(t: Date, unit: BucketUnit): Date {
  const size = unit === "HOUR" ? HOUR_MS : DAY_MS;
  return new Date(Math.floor((t.getTime() + OFFSET_MS) / size) * size - OFFSET_MS);
}

/** Every bucket that holds part of [from, to), in order: the first one may start before `from`. */
export function bucketStarts(from: Date, to: Date, unit: BucketUnit): Date[] {
  const size = unit === "HOUR" ? HOUR_MS : DAY_MS;
  const out: Date[] = [];
  for (let s = bucketStart(from, unit).getTime(); s < to.getTime(); s += size) out.push(new Date(s));
  return out;
}

export function emptyCounts(): Counts {
  return { payments: 0, paid: 0, failed: 0, expired: 0, pending: 0, late: 0, finished: 0, successRate: null };
}

function addCounts(into: Counts, c: Counts): void {
  into.payments += c.payments;
  into.paid += c.paid;
  into.failed += c.failed;
  into.expired += c.expired;
  into.pending += c.pending;
  into.late += c.late;
  into.finished += c.finished;
  into.successRate = rate(into);
}

const rate = (c: Counts): number | null => (c.finished === 0 ? null : c.paid / c.finished);

interface Row {
  g_currency: number;
  g_bucket: number;
  g_merchant: number;
  g_area: number;
  currency: CurrencyCode;
  bucket_ms: string | null;
  merchant_ref: string | null;
  merchant_name: string | null;
  area: string | null;
  payments: string;
  paid: string;
  failed: string;
  expired: string;
  pending: string;
  late: string;
  paid_amount: string;
}

const toCounts = (r: Row): Counts => {
  const c: Counts = {
    payments: Number(r.payments),
    paid: Number(r.paid),
    failed: Number(r.failed),
    expired: Number(r.expired),
    pending: Number(r.pending),
    late: Number(r.late),
    finished: Number(r.paid) + Number(r.failed) + Number(r.expired),
    successRate: null,
  };
  c.successRate = rate(c);
  return c;
};

/**
 * One statement: the window's rows with their status as reads show it, grouped by currency, by (currency, bucket),
 * by (merchant, currency) and by (area, currency) through grouping sets. The bucket is the UTC+7 hour or day,
 * computed with the fixed offset (exact for Phnom Penh, which has no DST) rather than a time zone name, so it does
 * not depend on the database's time zone data or its session TimeZone (the embedded database included).
 */
export async function overviewFigures(
  db: Db,
  store: Pick<TransactionStore, "graces">,
  now: Date,
  args: OverviewArgs,
): Promise<OverviewFigures> {
  checkRange(args.from, args.to);
  const unit = bucketUnit(args.from, args.to);
  const status = statusAsReadSql(store, now);
  const where = ["created_at >= ?", "created_at < ?"];
  const params: unknown[] = [...status.params, args.from, args.to];
  if (args.merchantId != null) {
    where.push("merchant_ref = ?");
    params.push(args.merchantId);
  }
  if (args.area != null) {
    where.push("area = ?");
    params.push(args.area);
  }
  const trunc = unit === "HOUR" ? "hour" : "day";
  const rows = await db.query<Row>(
    `with t as (
       select currency, merchant_ref, area, amount, ${status.sql} as st,
         (status = 'SUCCESS' and ${LATE_SQL}) as is_late,
         (date_trunc('${trunc}', (created_at at time zone 'UTC') + interval '7 hours') - interval '7 hours')
           at time zone 'UTC' as bucket
       from "transaction" where ${where.join(" and ")}
     )
     select grouping(t.currency) as g_currency, grouping(t.bucket) as g_bucket, grouping(t.merchant_ref) as g_merchant,
       grouping(t.area) as g_area, t.currency, (extract(epoch from t.bucket) * 1000)::bigint::text as bucket_ms,
       t.merchant_ref, min(m.name) as merchant_name, t.area,
       count(*) as payments,
       count(*) filter (where st = 'SUCCESS') as paid,
       count(*) filter (where st = 'FAILED') as failed,
       count(*) filter (where st = 'EXPIRED') as expired,
       count(*) filter (where st in ('PENDING','CHECKOUT')) as pending,
       count(*) filter (where is_late) as late,
       coalesce(sum(amount) filter (where st = 'SUCCESS'), 0)::text as paid_amount
     from t left join merchant m on m.id = t.merchant_ref
     group by grouping sets ((t.currency), (t.currency, t.bucket), (t.merchant_ref, t.currency), (t.area, t.currency))`,
    params,
  );
  return shapeOverview(unit, bucketStarts(args.from, args.to, unit), rows);
}

/** Rows of the grouping sets → the answer, with every bucket present (zero where nothing was created). */
function shapeOverview(unit: BucketUnit, starts: Date[], rows: Row[]): OverviewFigures {
  const currencies = new Map<CurrencyCode, CurrencyFigures>(
    OVERVIEW_CURRENCIES.map((c) => [
      c,
      {
        currency: c,
        counts: emptyCounts(),
        paidAmount: moneyText("0", c),
        series: starts.map((start) => ({ start, counts: emptyCounts(), paidAmount: moneyText("0", c) })),
      },
    ]),
  );
  const merchants = new Map<string, GroupFigures>();
  const areas = new Map<string, GroupFigures>();
  const group = (map: Map<string, GroupFigures>, id: string, name: string | null, r: Row) => {
    let g = map.get(id);
    if (g === undefined) {
      g = { id, name, counts: emptyCounts(), paid: [] };
      map.set(id, g);
    }
    addCounts(g.counts, toCounts(r));
    g.paid.push({ currency: r.currency, count: Number(r.paid), amount: moneyText(r.paid_amount, r.currency) });
  };
  for (const r of rows) {
    const cur = currencies.get(r.currency);
    if (cur === undefined) continue;
    const amount = moneyText(r.paid_amount, r.currency);
    if (Number(r.g_bucket) === 0 && r.bucket_ms !== null) {
      const at = Number(r.bucket_ms);
      const point = cur.series.find((p) => p.start.getTime() === at);
      if (point !== undefined) {
        point.counts = toCounts(r);
        point.paidAmount = amount;
      }
    } else if (Number(r.g_merchant) === 0 && r.merchant_ref !== null)
      group(merchants, r.merchant_ref, r.merchant_name, r);
    else if (Number(r.g_area) === 0 && r.area !== null) group(areas, r.area, null, r);
    else {
      cur.counts = toCounts(r);
      cur.paidAmount = amount;
    }
  }
  const totals = emptyCounts();
  for (const c of currencies.values()) addCounts(totals, c.counts);
  const byPayments = (a: GroupFigures, b: GroupFigures) =>
    b.counts.payments - a.counts.payments || (a.id < b.id ? -1 : 1);
  for (const g of [...merchants.values(), ...areas.values()])
    g.paid.sort((a, b) => OVERVIEW_CURRENCIES.indexOf(a.currency) - OVERVIEW_CURRENCIES.indexOf(b.currency));
  return {
    bucket: unit,
    totals,
    currencies: [...currencies.values()],
    merchants: [...merchants.values()].sort(byPayments),
    areas: [...areas.values()].sort(byPayments),
  };
}
