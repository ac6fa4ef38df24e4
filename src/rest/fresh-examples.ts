import { takesFresh, type DocsArea } from "./demo-examples.js";
import type { RestRoute } from "./route-table.js";

/**
 * The example values /docs sends new on every Execute (docs/decisions/0249-docs-examples-fresh-per-execute.md):
 * a generate's `{{name}}` placeholders that its area declares `fresh` (an order id, unique per merchant). The page
 * learns where they are (`fields`); before each request to one of those paths its requestInterceptor asks
 * `/docs/fresh.json` for new values (`values`: made by the area's own `make`) and puts them where the body still
 * holds the example's value. A value the reader typed is sent as typed.
 */
export interface FreshExamples {
  /** Path → the dotted body fields (`qrData.orderId`) that take a new value on every Execute. */
  fields: Record<string, string[]>;
  /** Path → field → a new value. */
  values(): Record<string, Record<string, string>>;
}

/** The dotted paths of `example`'s string members that are exactly `{{name}}`, by name. */
function placeholders(example: unknown, at: string[] = [], out = new Map<string, string>()): Map<string, string> {
  if (typeof example === "string") {
    const name = /^\{\{(\w+)\}\}$/.exec(example)?.[1];
    if (name !== undefined) out.set(at.join("."), name);
  } else if (example !== null && typeof example === "object")
    for (const [k, v] of Object.entries(example)) placeholders(v, [...at, k], out);
  return out;
}

export function freshExamples(routes: readonly RestRoute[], areas: readonly DocsArea[]): FreshExamples {
  const makers: Record<string, Record<string, () => string>> = {};
  for (const route of routes) {
    const area = areas.find((a) => route.path.startsWith(a.key.paths.replace(/\*$/, "")));
    const fresh = area?.docsExample?.fresh;
    if (fresh === undefined || !takesFresh(route.path)) continue;
    for (const [field, name] of placeholders(route.doc.example))
      if (fresh[name] !== undefined) (makers[route.path] ??= {})[field] = fresh[name].make;
  }
  return {
    fields: Object.fromEntries(Object.entries(makers).map(([path, m]) => [path, Object.keys(m)])),
    values: () =>
      Object.fromEntries(
        Object.entries(makers).map(([path, m]) => [
          path,
          Object.fromEntries(Object.entries(m).map(([f, make]) => [f, make()])),
        ]),
      ),
  };
}
