import type { Db } from "../db/sql.js";

/** The window and filters of the overview the health is read for. */
export interface HealthArgs {
  from: Date;
  to: Date;
  merchantId: string | null;
  area: string | null;
}

export interface WebhookHealth {
  delivered: number;
  /** Still pending after at least one failed attempt. */
  retrying: number;
  /** Given up. */
  failed: number;
  /** Enabled endpoints currently failing (failing_since set). */
  failingEndpoints: number;
  disabledEndpoints: number;
  /** The 95th percentile of the attempts' latency (a measured value, not interpolated); null without attempts. */
  p95LatencyMs: number | null;
}

/**
 * Webhook health for the overview: deliveries created in the window (of the merchant's / area's transactions when
 * the overview is filtered), their attempts' p95 latency, and the endpoints as they are now. One statement.
 */
export async function webhookHealth(db: Db, args: HealthArgs): Promise<WebhookHealth> {
  const deliveryWhere = ["d.created_at >= ?", "d.created_at < ?"];
  const deliveryParams: unknown[] = [args.from, args.to];
  let join = "";
  if (args.merchantId !== null || args.area !== null) {
    join = `join transaction_event e on e.id = d.event_ref join "transaction" t on t.id = e.transaction_ref`;
    if (args.merchantId !== null) {
      deliveryWhere.push("t.merchant_ref = ?");
      deliveryParams.push(args.merchantId);
    }
    if (args.area !== null) {
      deliveryWhere.push("t.area = ?");
      deliveryParams.push(args.area);
    }
  }
  const endpointWhere: string[] = [];
  const endpointParams: unknown[] = [];
  if (args.merchantId !== null) {
    endpointWhere.push("k.merchant_ref = ?");
    endpointParams.push(args.merchantId);
  }
  // A key serves one area (its kind): its endpoints receive that area's events only.
  if (args.area !== null) {
    endpointWhere.push("k.kind = ?");
    endpointParams.push(args.area);
  }
  const rows = await db.query<Record<string, string | null>>(
    `with d as (select d.id, d.state, d.attempts from webhook_delivery d ${join} where ${deliveryWhere.join(" and ")})
     select
       (select count(*) from d where state = 'delivered')::int as delivered,
       (select count(*) from d where state = 'pending' and attempts > 0)::int as retrying,
       (select count(*) from d where state = 'failed')::int as failed,
       (select percentile_disc(0.95) within group (order by a.latency_ms)
          from webhook_attempt a join d on d.id = a.delivery_ref) as p95,
       (select count(*) from webhook_endpoint w join api_key k on k.id = w.api_key_ref
          where w.enabled and w.failing_since is not null ${endpointWhere.map((w) => `and ${w}`).join(" ")})::int as failing,
       (select count(*) from webhook_endpoint w join api_key k on k.id = w.api_key_ref
          where not w.enabled ${endpointWhere.map((w) => `and ${w}`).join(" ")})::int as disabled`,
    [...deliveryParams, ...endpointParams, ...endpointParams],
  );
  const r = rows[0];
  return {
    delivered: Number(r.delivered),
    retrying: Number(r.retrying),
    failed: Number(r.failed),
    failingEndpoints: Number(r.failing),
    disabledEndpoints: Number(r.disabled),
    p95LatencyMs: r.p95 === null ? null : Number(r.p95),
  };
}
