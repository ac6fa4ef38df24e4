/**
 * Natural batching ("group commit") for one kind of write: at most `lanes` statements are in flight; items
 * that arrive while every lane is busy wait and go together, up to `maxBatch`, in the next statement. An
 * item on an idle system goes alone at once (no timer, no added latency); under load the statements grow
 * and each one's fixed costs (round trip, commit and its WAL flush, NOTIFY, foreign-key row locks) are
 * shared.
 *
 * A batch is one statement, so it commits whole or not at all. When the database refused it (`refused`:
 * nothing was written), every item is retried alone, so one bad item fails only its own caller. Any other
 * failure (a lost connection: the outcome is unknown) fails every item of the batch, as it would have
 * failed a lone write.
 */
export class Batcher<I, O> {
  private readonly queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private lingering: NodeJS.Timeout | null = null;

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly opts: {
      lanes: number;
      maxBatch: number;
      refused: (err: unknown) => boolean;
      /**
       * For writes nobody waits on at once (a webhook attempt's record): an item that finds nothing queued waits
       * this long for others before its statement goes (a full batch goes at once). Default 0: no wait.
       */
      lingerMs?: number;
    },
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      const linger = this.opts.lingerMs ?? 0;
      if (linger <= 0 || this.queue.length >= this.opts.maxBatch) {
        this.pump();
      } else if (this.lingering === null && this.queue.length === 1) {
        this.lingering = setTimeout(() => {
          this.lingering = null;
          this.pump();
        }, linger);
      }
    });
  }

  private pump(): void {
    while (this.inFlight < this.opts.lanes && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.opts.maxBatch);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async run(batch: typeof this.queue): Promise<void> {
    try {
      const out = await this.write(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(out[i]));
    } catch (err) {
      if (batch.length === 1 || !this.opts.refused(err)) {
        for (const b of batch) b.reject(err);
        return;
      }
      for (const b of batch) {
        try {
          b.resolve((await this.write([b.item]))[0]);
        } catch (one) {
          b.reject(one);
        }
      }
    }
  }
}

/** An error the database answered with (a SQLSTATE): the statement was rolled back, nothing was written. */
export function refusedByDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith("08") && !code.startsWith("57");
}
