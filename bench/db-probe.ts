// The bench's own view of its database: resets monitoring between targets and reads how much CPU the
// PostgreSQL backends serving one client (the service or the baseline) used.
import pg from "pg";
import { cpuMs } from "./proc.js";

export const BASELINE_APP_NAME = "pqr-bench-baseline";

export class DbProbe {
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<DbProbe> {
    const client = new pg.Client({ connectionString: url, application_name: "pqr-bench-probe" });
    await client.connect();
    return new DbProbe(client);
  }

  /**
   * Every target starts from a settled database. No monitoring backlog of the target before: the qr monitor
   * re-checks each pending QR every 3 s, so after a 30 s generate run thousands are due and that work would
   * land on whichever target comes next; their next check moves to their expiry (beyond the run). And fresh
   * planner statistics: a generate target grows "transaction" twenty-fold in 30 s, before autovacuum's next
   * ANALYZE (up to a minute), and with the old statistics the md5 lookup of /qr/check scans every row of the
   * key (34 ms instead of 0.05 ms per query at 8,000 rows, measured).
   */
  async settle(): Promise<void> {
    await this.client.query(
      `update "transaction" set next_check_at = expires_at where status in ('PENDING','CHECKOUT') and next_check_at < expires_at`,
    );
    await this.client.query(`analyze "transaction", transaction_event, webhook_delivery`);
  }

  /** CPU ms so far of each backend of this database serving the baseline (or everything else: the service). */
  async backendCpu(of: "service" | "baseline"): Promise<Map<number, number>> {
    const { rows } = await this.client.query<{ pid: number; application_name: string }>(
      `select pid, application_name from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
    );
    const out = new Map<number, number>();
    for (const r of rows) {
      if ((r.application_name === BASELINE_APP_NAME) !== (of === "baseline")) continue;
      try {
        out.set(r.pid, cpuMs(r.pid));
      } catch {
        /* the backend ended meanwhile */
      }
    }
    return out;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/** CPU used between two readings; backends that appeared count from zero, ones that ended are lost. */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}
