import DataLoader from "dataloader";

/** Each request's loaders, by the request's context object: gone with it. */
const byRequest = new WeakMap<object, Map<string, DataLoader<unknown, unknown>>>();

/**
 * The loader named `name` of this request (`ctx`: the request's GraphQL context, one per operation): the field
 * resolvers of one operation that ask for the same kind of row share one statement, however many rows the answer
 * has (docs/decisions/0244-per-request-loaders.md). It batches and keeps nothing: a websocket's context lives as long
 * as its socket, and what one read found is never another's answer (nor another credential's: a socket that
 * authenticates again gets a new context). The batch function answers each key, in order (a key may repeat).
 */
export function requestLoader<K, V>(
  ctx: object,
  name: string,
  batch: (keys: readonly K[]) => Promise<V[]>,
): DataLoader<K, V> {
  let loaders = byRequest.get(ctx);
  if (loaders === undefined) {
    loaders = new Map();
    byRequest.set(ctx, loaders);
  }
  let loader = loaders.get(name) as DataLoader<K, V> | undefined;
  if (loader === undefined) {
    // At most 500 keys a statement (a page is at most 100 rows: a batch cannot grow without bound).
    loader = new DataLoader<K, V>(batch, { maxBatchSize: 500, cache: false });
    loaders.set(name, loader as DataLoader<unknown, unknown>);
  }
  return loader;
}
