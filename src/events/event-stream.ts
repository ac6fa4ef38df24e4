import { AppError } from "../errors.js";

/**
 * A bounded async queue feeding one subscriber. Pushing never waits, so one slow websocket cannot hold up
 * the bus or other subscribers; a subscriber that falls `limit` events behind is ended with an error
 * (it can reconnect with its last event id and replay from the outbox).
 */
/** A backlog (a lastEventId replay) is read this many items per turn of the event loop. */
export const STREAM_YIELD_EVERY = 50;

export class EventStream<T> implements AsyncIterableIterator<T> {
  private readonly queue: T[] = [];
  /** Items handed out from the queue since the reader last waited or yielded. */
  private sinceYield = 0;
  private waiting: ((r: IteratorResult<T>) => void) | null = null;
  private failWaiting: ((e: unknown) => void) | null = null;
  private done = false;
  private error: unknown = null;
  private readonly cleanups: (() => void)[] = [];

  constructor(private readonly limit = 1000) {}

  onClose(fn: () => void): void {
    this.cleanups.push(fn);
  }

  push(item: T): void {
    if (this.done) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = this.failWaiting = null;
      w({ value: item, done: false });
      return;
    }
    if (this.queue.length >= this.limit) {
      // An AppError, so the client reads RATE_LIMITED: an Error with a `code` stuck on it was reported as INTERNAL
      // when the overflow happened while the subscription opened (a replay flood, bench/flood.ts "c").
      this.fail(new AppError("RATE_LIMITED", "Subscriber too slow: reconnect with lastEventId to replay"));
      return;
    }
    this.queue.push(item);
  }

  /** Ends after what is queued has been read. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.cleanup();
    if (this.waiting && this.queue.length === 0) {
      const w = this.waiting;
      this.waiting = this.failWaiting = null;
      w({ value: undefined, done: true });
    }
  }

  fail(err: unknown): void {
    this.error = err;
    this.queue.length = 0;
    this.end();
    if (this.failWaiting) {
      const f = this.failWaiting;
      this.waiting = this.failWaiting = null;
      f(err);
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length > 0) {
      // A backlog is read without the reader ever waiting: everything it does per item (execute, serialise,
      // write; a socket write's callback comes back before I/O) would otherwise run in one turn of the event
      // loop. A 1,000-event replay held it 0.4–0.8 s on the shared bench machine (bench/flood.ts, flood c).
      if (++this.sinceYield > STREAM_YIELD_EVERY) {
        this.sinceYield = 0;
        return new Promise((resolve, reject) => setImmediate(() => this.next().then(resolve, reject)));
      }
      return Promise.resolve({ value: this.queue.shift() as T, done: false });
    }
    this.sinceYield = 0;
    if (this.error !== null) return Promise.reject(this.error);
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.queue.length = 0;
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private cleanup(): void {
    for (const fn of this.cleanups.splice(0)) fn();
  }
}
