import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { RequestHandler } from "express";
import type { Db } from "../db/sql.js";

/** Prometheus metrics served at /metrics. */
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency by route",
    labelNames: ["method", "route", "status"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly jobLag = new Gauge({
    name: "job_lag_seconds",
    help: "How late the last run of each job started after it was due",
    labelNames: ["job"],
    registers: [this.registry],
  });
  readonly jobRuns = new Counter({
    name: "job_runs_total",
    help: "Job runs by outcome",
    labelNames: ["job", "outcome"],
    registers: [this.registry],
  });
  readonly webhookAttempts = new Counter({
    name: "webhook_attempts_total",
    help: "Webhook delivery attempts by outcome",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly transitions = new Counter({
    name: "transaction_transitions_total",
    help: "Committed transaction events by type",
    labelNames: ["area", "type"],
    registers: [this.registry],
  });

  constructor(db: Db) {
    collectDefaultMetrics({ register: this.registry });
    // Never a scan of the transaction table per scrape (issue 16): the planner's row estimate, read from the
    // catalogue. Volumes by area and status come from transaction_transitions_total (rates per process).
    new Gauge({
      name: "transactions_rows_estimate",
      help: "Rows in the transaction table, as estimated by PostgreSQL's statistics (pg_class.reltuples)",
      registers: [this.registry],
      async collect() {
        const rows = await db
          .query<{ n: string }>(
            `select greatest(reltuples, 0)::bigint::text as n from pg_class where oid = 'public."transaction"'::regclass`,
          )
          .catch(() => []);
        if (rows[0] !== undefined) this.set(Number(rows[0].n));
      },
    });
  }

  /** Times every request; the label is the matched route pattern, never the raw URL (bounded cardinality). */
  middleware(): RequestHandler {
    return (req, res, next) => {
      const end = this.httpDuration.startTimer();
      res.on("finish", () => {
        const route =
          (req.route?.path as string | undefined) ??
          (req.baseUrl ||
            (req.path.startsWith("/sim") ? "/sim" : req.path.startsWith("/dashboard") ? "/dashboard" : "other"));
        end({ method: req.method, route, status: String(res.statusCode) });
      });
      next();
    };
  }
}
