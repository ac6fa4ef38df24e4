// A single-consumer async queue: the producer pushes without waiting, the consumer reads with
// `for await`. Events pushed before anyone reads are kept, so none is lost between open and read.

export class EventChannel<T> implements AsyncIterable<T> {
  private readonly buffer: T[] = [];
  private readonly readers: Array<(result: IteratorResult<T>) => void> = [];
  private ended = false;

  push(value: T): void {
    if (this.ended) return;
    const reader = this.readers.shift();
    if (reader) reader({ value, done: false });
    else this.buffer.push(value);
  }

  /** No more values; buffered ones are still delivered. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const reader of this.readers.splice(0)) reader({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift() as T, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.readers.push(resolve));
      },
      // Leaving a for-await early stops this reader only; the producer decides when the stream ends.
      return: () => Promise.resolve({ value: undefined, done: true }),
    };
  }
}
