import type { AdminService } from "../admin/admin-service.js";
import type { JobSpec } from "../jobs/scheduler.js";
import type { TxRecord } from "../transactions/record.js";
import { monitorJob, type CheckOutcome, type MonitorDeps, type MonitorPort } from "../transactions/monitor.js";
import type { GatewayClient, GatewayCredentials } from "./upstream-client.js";
import type { GatewayConfigs } from "./gateway-configs.js";
import type { TransitionRequest } from "../transactions/transition.js";
import { AppError } from "../errors.js";
import { approvalMismatch } from "./paid-check.js";

/**
 * The upstream payment status → our status (docs/decisions/0018-gateway-status-mapping.md).
 * Anything else (PENDING, NOT_FOUND, unknown) leaves the transaction in CHECKOUT until its expiry.
 */
export function mapGatewayStatus(paymentStatus: string): Pick<TransitionRequest, "to" | "event"> | null {
  switch (paymentStatus) {
    case "APPROVED":
    case "PRE-AUTH":
      return { to: "SUCCESS", event: "payment.completed" };
    case "DECLINED":
    case "CANCELLED":
    case "REFUNDED":
      return { to: "FAILED", event: "payment.failed" };
    default:
      return null;
  }
}

/**
 * What the gateway reports while nobody has paid: the same as CHECKOUT itself. Nothing recorded yet, PENDING and
 * NOT_FOUND (a transaction not visible yet) all mean "waiting", so the first check of a new transaction is no
 * change (a `transaction.updated` saying CHECKOUT → CHECKOUT told integrators nothing).
 */
const WAITING = new Set<unknown>([undefined, null, "PENDING", "NOT_FOUND"]);

/** A non-final status worth a `transaction.updated`: another than the last recorded, and not waiting → waiting. */
export function nonFinalChanged(recorded: unknown, reported: string): boolean {
  if (WAITING.has(recorded) && WAITING.has(reported)) return false;
  return recorded !== reported;
}

/** check-transaction-2 answers for the last 7 days only; older transactions go to transaction-detail. */
export const CHECK_WINDOW_MS = 7 * 24 * 3600_000;
/** transaction-detail: 10 requests per minute per merchant (the gateway's limit). */
export const DETAIL_PER_MINUTE = 10;
/** After a 429, a merchant's checks pause this long. */
export const RATE_LIMIT_PAUSE_MS = 60_000;

/**
 * The gateway's limits, per upstream merchant, in this process: the transaction-detail budget (a sliding
 * minute) and the pause after a 429.
 */
export class GatewayLimits {
  private readonly detailCalls = new Map<string, number[]>();
  private readonly pausedUntil = new Map<string, number>();
  /** When each transaction last had its turn at transaction-detail (the longest waiting go first). */
  private readonly lastTurn = new Map<string, number>();

  /** Old transactions in the order they should share the budget: never asked first, then longest ago. */
  byTurn<T extends { id: string }>(txs: T[]): T[] {
    return [...txs].sort((a, b) => (this.lastTurn.get(a.id) ?? 0) - (this.lastTurn.get(b.id) ?? 0));
  }

  tookTurn(txId: string): void {
    const now = this.now();
    this.lastTurn.set(txId, now);
    // Bounded: a transaction not seen for a day has ended or expired.
    if (this.lastTurn.size > 10_000)
      for (const [id, at] of this.lastTurn) if (at < now - 24 * 3600_000) this.lastTurn.delete(id);
  }

  constructor(private readonly now: () => number) {}

  paused(merchantId: string): boolean {
    return (this.pausedUntil.get(merchantId) ?? 0) > this.now();
  }

  pause(merchantId: string): void {
    this.pausedUntil.set(merchantId, this.now() + RATE_LIMIT_PAUSE_MS);
  }

  /** Takes one transaction-detail call from the merchant's budget; false when the minute's 10 are used. */
  takeDetail(merchantId: string): boolean {
    const now = this.now();
    const recent = (this.detailCalls.get(merchantId) ?? []).filter((t) => t > now - 60_000);
    if (recent.length >= DETAIL_PER_MINUTE) {
      this.detailCalls.set(merchantId, recent);
      return false;
    }
    recent.push(now);
    this.detailCalls.set(merchantId, recent);
    return true;
  }
}

/**
 * The gateway's check APIs as the monitor loop sees it: one call per transaction, with the credentials of
 * the configuration its key is linked to — check-transaction-2 for the last 7 days, transaction-detail
 * (within its budget of 10 a minute per merchant; beyond it the transaction waits for a later round) for
 * older ones. A final status → SUCCESS or FAILED; a non-final status that changed (not merely "waiting", see
 * nonFinalChanged) → transaction.updated. A 429 pauses the merchant's checks for a minute.
 */
export function gatewayMonitorPort(
  admin: Pick<AdminService, "apiKey">,
  configs: Pick<GatewayConfigs, "credentialsOf">,
  client: GatewayClient,
  limits: GatewayLimits = new GatewayLimits(Date.now),
  now: () => number = Date.now,
): MonitorPort {
  return {
    async check(txs) {
      const creds = new Map<string, Promise<{ merchantId: string; apiKey: string } | null>>();
      const credentialsOf = async (tx: TxRecord) => {
        const cfg = (await admin.apiKey(tx.apiKeyRef))?.targetRef ?? null;
        if (cfg === null) return null;
        if (!creds.has(cfg)) creds.set(cfg, configs.credentialsOf(cfg));
        return creds.get(cfg) ?? null;
      };
      // Credentials first, then the budget in claim order (longest waiting first), then the calls.
      const credsOf = await Promise.all(txs.map((tx) => credentialsOf(tx).catch(() => null)));
      const isOld = (tx: TxRecord) => now() - tx.createdAt.getTime() > CHECK_WINDOW_MS;
      const granted = new Set<string>();
      for (const tx of limits.byTurn(txs.filter(isOld))) {
        const cred = credsOf[txs.indexOf(tx)];
        if (cred && !limits.paused(cred.merchantId) && limits.takeDetail(cred.merchantId)) {
          granted.add(tx.id);
          limits.tookTurn(tx.id);
        }
      }
      const plan = txs.map((tx, i) => {
        const cred = credsOf[i];
        if (!cred) return { tx, cred, skip: { kind: "fault", error: "the key has no gateway configuration" } as const };
        if (limits.paused(cred.merchantId)) {
          const error = "the gateway answered 429 (too many attempts): paused";
          return { tx, cred, skip: { kind: "fault", error } as const };
        }
        const old = isOld(tx);
        if (old && !granted.has(tx.id)) return { tx, cred, skip: { kind: "unchanged" } as const };
        return { tx, cred, old, skip: null };
      });
      const answers = await Promise.all(
        plan.map(async ({ tx, cred, old, skip }): Promise<[string, CheckOutcome]> => {
          if (skip !== null || !cred) return [tx.id, skip ?? { kind: "unchanged" }];
          const { outcome } = await askGateway({ client, limits, now }, tx, cred, old === true);
          // An old one asked through the limited call waits a minute, so each gets its turn in the budget.
          if (outcome.kind === "unchanged" && old) return [tx.id, { kind: "unchanged", recheckMs: 60_000 }];
          return [tx.id, outcome];
        }),
      );
      return new Map(answers);
    },
  };
}

/**
 * One check of one transaction with its configuration's credentials: check-transaction-2, or transaction-detail for
 * an `old` one (the caller took its turn in the budget). What the monitor records (a final status → SUCCESS or
 * FAILED; an approval that is not the order's → held; a non-final status that changed → transaction.updated), and
 * the answer in a sentence (a recheck tells it). A 429 pauses the merchant's checks.
 */
export async function askGateway(
  deps: { client: GatewayClient; limits: GatewayLimits; now: () => number },
  tx: TxRecord,
  cred: GatewayCredentials,
  old: boolean,
): Promise<{ outcome: CheckOutcome; said: string }> {
  const source = `gateway ${old ? "transaction-detail" : "check-transaction-2"}`;
  try {
    const r = old
      ? await deps.client.transactionDetail(cred, tx.upstreamRef as string)
      : await deps.client.checkTransaction(cred, tx.upstreamRef as string);
    const mapped = mapGatewayStatus(r.paymentStatus);
    const upstream = {
      gatewayStatus: { code: r.statusCode, message: r.message },
      paymentStatus: r.paymentStatus,
    };
    const said = `${source} reports payment_status ${r.paymentStatus || "(none)"}`;
    // An approval completes the payment only when it is the order's amount and currency (paid-check.ts).
    const mismatch = mapped?.to === "SUCCESS" ? approvalMismatch(tx, r.raw, source, new Date(deps.now())) : null;
    if (mismatch !== null)
      return { outcome: { kind: "transition", change: { event: "payment.mismatched", mismatch, upstream } }, said };
    if (mapped) return { outcome: { kind: "transition", change: { ...mapped, upstream } }, said };
    if (nonFinalChanged(tx.upstream.paymentStatus, r.paymentStatus))
      return { outcome: { kind: "transition", change: { event: "transaction.updated", upstream } }, said };
    return { outcome: { kind: "unchanged" }, said: `${said} (not paid)` };
  } catch (err) {
    const e = err as AppError;
    if (e instanceof AppError && e.extra.rateLimited === true) deps.limits.pause(cred.merchantId);
    return { outcome: { kind: "fault", error: (err as Error).message }, said: `${source}: ${(err as Error).message}` };
  }
}

export interface GatewayMonitorDeps extends MonitorDeps {
  admin: Pick<AdminService, "apiKey">;
  configs: Pick<GatewayConfigs, "credentialsOf">;
  intervalMs: number;
  limits: GatewayLimits;
}

/** Polls CHECKOUT gateway transactions until final or expired (transactions/monitor.ts); faults back off. */
export function gatewayMonitorJob(deps: GatewayMonitorDeps, client: GatewayClient): JobSpec {
  return monitorJob(deps, {
    name: "gateway.monitor",
    area: "gateway",
    recheckMs: deps.intervalMs,
    batch: 200,
    port: gatewayMonitorPort(deps.admin, deps.configs, client, deps.limits, () => deps.clock.now().getTime()),
  });
}
