/**
 * One entry per key, in the keys' order, from the rows of one statement grouped by `keyOf` (each group in the rows'
 * order; a key without rows gets `[]`, a repeated key the same group): what a batched read answers its callers.
 */
export function groupedBy<K, R>(keys: readonly K[], rows: readonly R[], keyOf: (r: R) => K): R[][] {
  const groups = new Map<K, R[]>(keys.map((k) => [k, []]));
  for (const r of rows) groups.get(keyOf(r))?.push(r);
  return keys.map((k) => groups.get(k) ?? []);
}
