// The lifecycle bench's wait after a step's load: what was expected (a `payment.created` webhook per generated
// payment; a `payment.completed` webhook and the subscriber's SUCCESS per paid one), what arrived and when. An
// arrival after the drain window is late; what is still missing after the final wait never came.
import type { Helper } from "../support/ipc.js";
import { sleep, spread, wallNow, type Spread } from "../support/timing.js";
import type { Payment } from "./driver-host.js";
import type { Delivery } from "./receiver-host.js";

/** Late and never of one channel (webhooks, or the subscribers' SUCCESS). */
export interface Tally {
  expected: number;
  late: number;
  never: number;
  /** How far beyond the end of the drain window the late ones arrived (ms). */
  lateBy: Spread;
}

/** Something expected that never came: the transaction and what is missing. */
export interface Missing {
  transactionId: string;
  what: string[];
  payment: Payment;
  /** The webhooks of this payment that did arrive: event type → first arrival (wall clock ms). */
  arrived: Record<string, number>;
}

export interface DrainResult {
  payments: Payment[];
  /** First arrival of each `${transactionId} ${event type}` (wall clock ms, the receiver's). */
  hooks: Map<string, number>;
  duplicates: number;
  badSignatures: number;
  /** Deliveries whose body the receiver could not read (no transaction to count them for). */
  unreadable: number;
  /**
   * Transactions whose webhooks came though the load generator never learnt their id (its generate failed on
   * the way back, e.g. the connection closed): payments the service made that their merchant does not know of.
   */
  unknown: number;
  /** When the drain window ended: everything had arrived, or the window was over. */
  windowEnd: number;
  webhook: Tally;
  subscriber: Tally;
  never: Missing[];
}

const key = (tx: string, type: string) => `${tx} ${type}`;

/** The webhooks a payment should produce. */
function expectedHooks(p: Payment): string[] {
  if (p.transactionId === null) return [];
  const out = [key(p.transactionId, "payment.created")];
  if (p.payAt !== null) out.push(key(p.transactionId, "payment.completed"));
  return out;
}

/** Arrivals of one step, gathered from the receiver and the load generator until a deadline. */
export class Drain {
  private readonly hooks = new Map<string, number>();
  private duplicates = 0;
  private badSignatures = 0;
  private unreadable = 0;
  private readonly known: Set<string>;
  private readonly unknown = new Set<string>();
  private unseen = new Set<string>();
  /** Webhooks expected and not arrived yet. */
  private readonly awaited: Set<string>;

  /** `payments`: the load generator's list right after its run (who was generated and paid). */
  constructor(
    private readonly receiver: Helper,
    private readonly driver: Helper,
    private readonly payments: Payment[],
  ) {
    this.awaited = new Set(payments.flatMap(expectedHooks));
    this.known = new Set(payments.flatMap((p) => (p.transactionId === null ? [] : [p.transactionId])));
  }

  /** Polls until everything expected has arrived (true) or the deadline passed (false). */
  async until(deadline: number, pollMs: number): Promise<boolean> {
    for (;;) {
      await this.poll();
      if (this.awaited.size === 0 && this.unseen.size === 0) return true;
      if (wallNow() > deadline) return false;
      await sleep(pollMs);
    }
  }

  private async poll(): Promise<void> {
    const got = await this.receiver.call<{ deliveries: Delivery[]; badSignatures: number; unreadable: number }>(
      "drain",
    );
    this.badSignatures = got.badSignatures;
    this.unreadable = got.unreadable;
    for (const [tx, type, , at] of got.deliveries) {
      const k = key(tx, type);
      // First arrival only; later ones are at-least-once redeliveries.
      if (!this.known.has(tx)) this.unknown.add(tx);
      if (this.hooks.has(k)) this.duplicates++;
      else this.hooks.set(k, at);
      this.awaited.delete(k);
    }
    this.unseen = new Set(await this.driver.call<string[]>("unseen"));
  }

  /** The step's outcome; `payments` is the load generator's final list (with the subscribers' arrivals). */
  result(payments: Payment[], windowEnd: number): DrainResult {
    const hookLate: number[] = [];
    let hookNever = 0;
    const subLate: number[] = [];
    let subNever = 0;
    const never: Missing[] = [];
    for (const p of payments) {
      if (p.transactionId === null) continue;
      const what: string[] = [];
      const arrived: Record<string, number> = {};
      for (const k of expectedHooks(p)) {
        const type = k.slice(k.indexOf(" ") + 1);
        const at = this.hooks.get(k);
        if (at === undefined) {
          hookNever++;
          what.push(`${type} webhook`);
          continue;
        }
        arrived[type] = at;
        if (at > windowEnd) hookLate.push(at - windowEnd);
      }
      if (p.payAt !== null) {
        if (p.seenAt === null) {
          subNever++;
          what.push("subscriber's SUCCESS");
        } else if (p.seenAt > windowEnd) subLate.push(p.seenAt - windowEnd);
      }
      if (what.length > 0) never.push({ transactionId: p.transactionId, what, payment: p, arrived });
    }
    const paid = payments.filter((p) => p.payAt !== null && p.transactionId !== null).length;
    return {
      payments,
      hooks: this.hooks,
      duplicates: this.duplicates,
      badSignatures: this.badSignatures,
      unreadable: this.unreadable,
      unknown: this.unknown.size,
      windowEnd,
      webhook: {
        expected: this.payments.flatMap(expectedHooks).length,
        late: hookLate.length,
        never: hookNever,
        lateBy: spread(hookLate),
      },
      subscriber: { expected: paid, late: subLate.length, never: subNever, lateBy: spread(subLate) },
      never,
    };
  }
}
