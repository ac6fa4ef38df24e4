import { createSourceEventStream, execute, type DocumentNode, type ExecutionArgs, type ExecutionResult } from "graphql";

/**
 * Live events are executed once per distinct selection, not once per subscriber: every subscription with
 * the same document (the parsed object is shared: the admission keeps one per text, admission.ts), operation and variables receives the
 * same result object for the same event. A subscription's fields resolve from the event alone (its scope
 * was applied when its stream was opened, and a client token's view is checked before it runs), so the
 * result does not depend on who receives it.
 */
export class SharedExecution {
  private readonly documentIds = new WeakMap<DocumentNode, number>();
  private nextDocumentId = 0;
  /** Event → selection key → result; the last `keep` events. */
  private readonly results = new Map<object, Map<string, Promise<ExecutionResult>>>();
  /** The `data` of results handed to more than one subscriber (serialised once per result: SharedFrames). */
  private readonly sharedData = new WeakSet<object>();

  constructor(private readonly keep = 200) {}

  /** Whether `v` is the data of a result shared between subscribers. */
  isShared(v: object): boolean {
    return this.sharedData.has(v);
  }

  async subscribe(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
    const source = await createSourceEventStream(args);
    if (!isAsyncIterable(source)) return source as ExecutionResult;
    let docId = this.documentIds.get(args.document);
    if (docId === undefined) this.documentIds.set(args.document, (docId = this.nextDocumentId++));
    const selection = `${docId}|${args.operationName ?? ""}|${JSON.stringify(args.variableValues ?? {})}`;
    const run = (event: unknown): Promise<ExecutionResult> =>
      Promise.resolve(execute({ ...args, rootValue: event }) as ExecutionResult | Promise<ExecutionResult>);
    return mapStream(source, (event) => {
      if (typeof event !== "object" || event === null) return run(event);
      let perEvent = this.results.get(event);
      if (perEvent === undefined) {
        this.results.set(event, (perEvent = new Map()));
        if (this.results.size > this.keep) this.results.delete(this.results.keys().next().value as object);
      }
      let result = perEvent.get(selection);
      if (result === undefined)
        perEvent.set(
          selection,
          (result = run(event).then((r) => {
            if (r.data) this.sharedData.add(r.data);
            return r;
          })),
        );
      return result;
    });
  }
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return typeof v === "object" && v !== null && Symbol.asyncIterator in v;
}

/** Like graphql-js's own mapping: return() reaches the source at once, even while a next() is pending. */
function mapStream<T, R>(source: AsyncIterable<T>, fn: (t: T) => Promise<R>): AsyncGenerator<R> {
  const it = source[Symbol.asyncIterator]();
  const gen: AsyncGenerator<R> = {
    async next() {
      const r = await it.next();
      return r.done ? { value: undefined, done: true } : { value: await fn(r.value), done: false };
    },
    async return() {
      await it.return?.();
      return { value: undefined, done: true };
    },
    async throw(err: unknown) {
      await it.return?.();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return gen;
    },
    async [Symbol.asyncDispose]() {
      await it.return?.();
    },
  };
  return gen;
}
