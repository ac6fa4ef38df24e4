/**
 * A small in-process read-through cache with a time-to-live and a size bound. Concurrent misses of one key
 * share one load. A value whose load began before an invalidation is handed to its callers but not kept,
 * so a revocation that commits while a lookup is in flight cannot be undone by that lookup. lru-cache was measured
 * against it and not adopted (docs/decisions/0228-ttl-cache-stays-ours.md).
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private readonly loading = new Map<string, Promise<V | null>>();
  private epoch = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly max = 10_000,
  ) {}

  async get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.until > this.now()) return hit.value;
    const pending = this.loading.get(key);
    if (pending !== undefined) return pending;
    const epoch = this.epoch;
    const loaded = load()
      .then((value) => {
        if (value !== null && epoch === this.epoch) this.keep(key, value);
        return value;
      })
      .finally(() => {
        if (this.loading.get(key) === loaded) this.loading.delete(key);
      });
    this.loading.set(key, loaded);
    return loaded;
  }

  /**
   * A fresh entry without loading, synchronously; a hit moves to the back, so what is read often stays while the
   * bound evicts what was least recently read or kept (callers that only peek and put get least-recently-used order).
   */
  peek(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined || hit.until <= this.now()) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.value;
  }

  /** Keeps a value made without a load (synchronous callers: peek, then put). */
  put(key: string, value: V): void {
    this.keep(key, value);
  }

  /** Drops the entries that match (and any load in flight). */
  delete(matches: (key: string, value: V) => boolean): void {
    this.epoch++;
    this.loading.clear();
    for (const [key, e] of this.entries) if (matches(key, e.value)) this.entries.delete(key);
  }

  clear(): void {
    this.delete(() => true);
  }

  private keep(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }
}
