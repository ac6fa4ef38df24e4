// Asking the upstream again about one payment, on request (docs/decisions/0192-recheck-payment.md): the caller's own
// PENDING or EXPIRED transaction, within its area's window (0193), bounded (0194, recheck-bounds.ts). The core names
// no area: each area registers what a recheck of its transactions is (its window, and one check of its upstream
// answering as its monitor's port does), and the answer is recorded here as the monitors record theirs.

import { AppError } from "../errors.js";
import { refuse } from "../validation/checker.js";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { Principal } from "../auth/principal.js";
import type { CheckOutcome } from "./monitor.js";
import type { TxRecord } from "./record.js";
import type { Area } from "./transaction.entity.js";
import type { TransactionStore, TransitionResult } from "./transition.js";
import type { TransactionQuery } from "./transaction-query.js";
import { isHeld } from "./mismatch.js";
import { CallerBounds, RecheckGate } from "./recheck-bounds.js";

/** What an area's upstream said, once: the outcome its monitor would record, and the answer in a sentence. */
export interface RecheckAnswer {
  outcome: CheckOutcome;
  /** E.g. `the network reports it paid (hash …)`, `PayWay reports "request_qr" (not paid)`. */
  said: string;
}

/** Until when a transaction may be rechecked, and by which rule of its area; or why it cannot be at all. */
export type RecheckWindow = { endsAt: Date; rule: string } | { cannot: string };

/** What an area registers (RecheckRegistry): its window, and one check of its upstream. */
export interface AreaRecheck {
  window(tx: TxRecord): RecheckWindow;
  /** One upstream check of a PENDING/CHECKOUT or EXPIRED transaction. A throw is a fault (the upstream's or ours). */
  ask(tx: TxRecord): Promise<RecheckAnswer>;
}

/** The areas' recheck hooks, registered by each area's module when it is created (as key targets are). */
export class RecheckRegistry {
  private readonly hooks = new Map<Area, AreaRecheck>();

  register(area: Area, hook: AreaRecheck): void {
    this.hooks.set(area, hook);
  }

  of(area: Area): AreaRecheck | null {
    return this.hooks.get(area) ?? null;
  }
}

export const RECHECK_OUTCOMES = ["PAID", "MISMATCHED", "FAILED", "NOT_PAID", "UPSTREAM_UNAVAILABLE"] as const;
export type RecheckOutcome = (typeof RECHECK_OUTCOMES)[number];

export interface RecheckResult {
  /** The transaction as it now is. */
  tx: TxRecord;
  outcome: RecheckOutcome;
  detail: string;
  /** This recheck changed the transaction (an event was committed). */
  recorded: boolean;
  windowEndsAt: Date;
}

export interface RechecksDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  store: TransactionStore;
  query: Pick<TransactionQuery, "one">;
  registry: RecheckRegistry;
}

/** What the upstream's answer means for the caller. */
function outcomeOf(o: CheckOutcome): RecheckOutcome {
  if (o.kind === "fault") return "UPSTREAM_UNAVAILABLE";
  if (o.kind === "unchanged") return "NOT_PAID";
  if (o.change.to === "SUCCESS") return "PAID";
  if (o.change.event === "payment.mismatched") return "MISMATCHED";
  if (o.change.to === "FAILED") return "FAILED";
  return "NOT_PAID";
}

const refused = (message: string, extra: Record<string, unknown> = {}) =>
  refuse("transactionId", "cannot be rechecked now", message, extra);

export class PaymentRechecks {
  private readonly callers: CallerBounds;
  readonly gate: RecheckGate;

  constructor(private readonly deps: RechecksDeps) {
    this.callers = new CallerBounds(deps.clock);
    this.gate = new RecheckGate(deps.db, deps.clock);
  }

  /**
   * Asks the upstream again about one of the caller's transactions (an API key's own, or any with the admin token)
   * and records a paid answer. Another key's transaction is NOT_FOUND, as a missing one, after the same budget.
   */
  async recheck(p: Principal, transactionId: string): Promise<RecheckResult> {
    if (p.type !== "key" && p.type !== "admin")
      throw new AppError("UNAUTHENTICATED", "An API key (its own transactions) or the admin token is required");
    const leave = this.callers.enter(p);
    try {
      const tx = await this.deps.query.one(p, transactionId);
      if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
      const { hook, endsAt } = this.admissible(tx);
      const claimedAt = await this.gate.claim(tx.id);
      try {
        return { ...(await this.askAndRecord(hook, tx)), windowEndsAt: endsAt };
      } finally {
        await this.gate.end(tx.id, claimedAt);
      }
    } finally {
      leave();
    }
  }

  /** The transaction can be rechecked now: its area has a recheck, it is waiting or expired, within the window. */
  private admissible(tx: TxRecord): { hook: AreaRecheck; endsAt: Date } {
    const hook = this.deps.registry.of(tx.area);
    if (hook === null) throw refused(`Transactions of the ${tx.area} area cannot be rechecked`);
    if (tx.status === "SUCCESS" || tx.status === "FAILED")
      throw refused(
        `Transaction ${tx.id} is ${tx.status}: its outcome is recorded; only a PENDING, CHECKOUT or EXPIRED payment ` +
          "is rechecked",
      );
    if (isHeld(tx))
      throw refused(
        `Transaction ${tx.id} is held (a payment that is not what was asked): an operator resolves it ` +
          "(resolveMismatch), no upstream answer changes it",
      );
    const w = hook.window(tx);
    if ("cannot" in w) throw refused(`Transaction ${tx.id} cannot be rechecked: ${w.cannot}`);
    if (this.deps.clock.now().getTime() > w.endsAt.getTime())
      throw refused(
        `Transaction ${tx.id} is outside its recheck window: it ended at ${w.endsAt.toISOString()} (${w.rule})`,
        { windowEndsAt: w.endsAt.toISOString() },
      );
    return { hook, endsAt: w.endsAt };
  }

  private async askAndRecord(hook: AreaRecheck, tx: TxRecord): Promise<Omit<RecheckResult, "windowEndsAt">> {
    let answer: RecheckAnswer;
    try {
      answer = await hook.ask(tx);
    } catch (err) {
      const error = (err as Error).message;
      answer = { outcome: { kind: "fault", error }, said: error };
    }
    const r = await this.record(tx, answer.outcome);
    const now = r?.won === true ? r.tx : ((await this.deps.store.get(tx.id)) ?? tx);
    const late = r?.won === true && now.status === "SUCCESS" && now.upstream.late === true;
    if (late)
      this.deps.logger.warn(
        { recheck: true, transactionId: tx.id, area: tx.area, expiredAt: tx.expiresAt.toISOString() },
        "recheck: late payment recorded (paid, but seen after the transaction expired): reconcile it",
      );
    const note =
      r === null && tx.status === "EXPIRED" && answer.outcome.kind === "transition"
        ? "; not recorded: an expired transaction takes only a payment"
        : late
          ? "; recorded as a late payment"
          : "";
    return { tx: now, outcome: outcomeOf(answer.outcome), detail: `${answer.said}${note}`, recorded: r?.won === true };
  }

  /**
   * Records what the upstream said, as the monitor loop does (transactions/monitor.ts): a waiting transaction takes
   * any change (SUCCESS, FAILED, a hold, a visible update), and one that answered "nothing" at or after its expiry
   * expires; an EXPIRED one takes only a payment, late (SUCCESS with `late: true`, or held as `payment.mismatched`).
   * Null when nothing was asked of the store.
   */
  private async record(tx: TxRecord, o: CheckOutcome): Promise<TransitionResult | null> {
    const { store, clock } = this.deps;
    if (o.kind === "fault") return null;
    const expired = tx.status === "EXPIRED";
    if (o.kind === "unchanged") {
      const now = clock.now();
      if (expired || tx.expiresAt.getTime() > now.getTime()) return null;
      const nextCheckAt = store.lateWatchNext(tx.area, now);
      return store.transition({ id: tx.id, to: "EXPIRED", event: "payment.expired", nextCheckAt });
    }
    const payment = o.change.to === "SUCCESS" || o.change.event === "payment.mismatched";
    if (expired && !payment) return null;
    const r = await store.transition({ id: tx.id, ...o.change, ...(expired ? { late: true } : {}) });
    // Declared expired meanwhile (a read, a monitor): the payment is a late one.
    if (!r.won && payment && !expired && r.tx.status === "EXPIRED")
      return store.transition({ id: tx.id, ...o.change, late: true });
    return r;
  }
}
