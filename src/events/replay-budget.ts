/**
 * Events replayed from lastEventId, budgeted per credential: a token bucket of WS_REPLAY_EVENTS_PER_MINUTE
 * events (holding at least one whole WS_MAX_REPLAY replay). Each replay is charged the rows it read (reserved
 * before its query, the rest given back after); while a credential's bucket is empty its replays are refused
 * before any query. Without it one key could start a
 * full replay with every subscribe the operation limiter allows (about 100 a second: 100,000 events a
 * second), which held the event loop and the database pool for seconds (bench/flood.ts, flood c).
 */
export class ReplayBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly capacity: number;
  private readonly perMs: number;

  constructor(
    perMinute: number,
    maxReplay: number,
    private readonly now: () => number = Date.now,
  ) {
    this.capacity = Math.max(maxReplay, Math.ceil(perMinute / 4));
    this.perMs = perMinute / 60_000;
  }

  private bucket(id: string): { tokens: number; at: number } {
    const t = this.now();
    const b = this.buckets.get(id) ?? { tokens: this.capacity, at: t };
    b.tokens = Math.min(this.capacity, b.tokens + (t - b.at) * this.perMs);
    b.at = t;
    this.buckets.delete(id);
    this.buckets.set(id, b);
    if (this.buckets.size > 100_000) this.buckets.delete(this.buckets.keys().next().value as string);
    return b;
  }

  /**
   * Starts a replay that may read up to `reserve` events: 0 when allowed (the whole `reserve` is taken at once,
   * so replays opened together cannot all pass before the first is charged; the bucket may go below zero),
   * otherwise the seconds until this credential may replay again.
   */
  take(id: string, reserve: number): number {
    const b = this.bucket(id);
    if (b.tokens < 1) return Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000));
    b.tokens -= reserve;
    return 0;
  }

  /** Gives back what a replay reserved and did not read. */
  refund(id: string, events: number): void {
    const b = this.bucket(id);
    b.tokens = Math.min(this.capacity, b.tokens + events);
  }
}
