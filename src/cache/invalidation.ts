/**
 * Cross-process invalidation of the in-process caches (API key → principal, merchant accounts, gateway
 * credentials). The change that makes an entry stale (revoking a key, editing a merchant or a gateway
 * configuration) sends `pg_notify` in its own database
 * transaction, so every process hears of it on commit (events/event-listener.ts listens), and applies
 * it locally after commit. Missed notifications (a listener reconnecting) clear every cache; the caches' short
 * time-to-live bounds staleness even then.
 */
import type { EntityManager as EM } from "@mikro-orm/postgresql";

export const INVALIDATE_CHANNEL = "pqr_invalidate";
export const NOTIFY_INVALIDATION_SQL = "select pg_notify(?, ?)";

const KINDS = ["api_key", "merchant", "gateway_config", "network_token"] as const;
export type Invalidation = { kind: (typeof KINDS)[number]; id: string };

export interface InvalidationTarget {
  invalidate(inv: Invalidation): void;
  clear(): void;
}

export function invalidationPayload(inv: Invalidation): string {
  return `${inv.kind}:${inv.id}`;
}

export class Invalidations {
  private readonly targets: InvalidationTarget[] = [];

  register(target: InvalidationTarget): void {
    this.targets.push(target);
  }

  apply(inv: Invalidation): void {
    for (const t of this.targets) t.invalidate(inv);
  }

  /** A notification payload from another process (or this one). */
  applyPayload(payload: string): void {
    const colon = payload.indexOf(":");
    const kind = KINDS.find((k) => k === payload.slice(0, colon));
    if (kind !== undefined) this.apply({ kind, id: payload.slice(colon + 1) });
    else this.clearAll();
  }

  clearAll(): void {
    for (const t of this.targets) t.clear();
  }
}

/**
 * Commits `change` together with a NOTIFY that makes every process drop what it cached of `inv`, then
 * drops it here too (after commit, so no request re-reads the old row in between and keeps it).
 */
export async function withInvalidation<T>(
  em: { transactional<R>(fn: (em: EM) => Promise<R>): Promise<R> },
  invalidations: Invalidations,
  inv: Invalidation,
  change: (em: EM) => Promise<T>,
): Promise<T> {
  const result = await em.transactional(async (tx) => {
    const out = await change(tx);
    await tx.flush();
    await tx.execute(NOTIFY_INVALIDATION_SQL, [INVALIDATE_CHANNEL, invalidationPayload(inv)]);
    return out;
  });
  invalidations.apply(inv);
  return result;
}
