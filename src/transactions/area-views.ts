import type { AreaData, AreaField, AreaRow } from "../module.js";

type Json = Record<string, unknown>;

/** Where a value goes: after the entry named `after` (or at the end when no entry has that name). */
interface Placed {
  name: string;
  after: string;
  value: unknown;
}

/**
 * Entries in order, each placed one after the entry it names (after the ones placed there before it, so entries
 * placed after one key keep their own order; at the end when no entry has that name). Entries whose value is
 * `undefined` hold a place and are then left out.
 */
export function placeAfter(entries: [string, unknown][], placed: Placed[]): Json {
  const out = [...entries];
  const last = new Map<string, string>();
  for (const p of placed) {
    const anchor = last.get(p.after) ?? p.after;
    const at = out.findIndex(([k]) => k === anchor);
    out.splice(at === -1 ? out.length : at + 1, 0, [p.name, p.value]);
    last.set(p.after, p.name);
  }
  return Object.fromEntries(out.filter(([, v]) => v !== undefined));
}

/**
 * What the areas of an app keep and show of their transactions (AreaDefinition.data; docs/decisions/
 * 0208-areas-own-their-data.md): the core places them and names none. Built by app.ts from its module list.
 */
export class AreaViews {
  private readonly byArea = new Map<string, AreaData>();
  /** Every field some area shows, once each (the first declaration of a name), in module order. */
  readonly fields: readonly AreaField[];
  /** The areas, in module order (those with data of their own). */
  readonly kinds: readonly string[];
  private readonly cache = new WeakMap<object, Json>();

  constructor(areas: readonly { kind: string; data?: AreaData }[] = []) {
    const fields = new Map<string, AreaField>();
    for (const a of areas) {
      if (a.data === undefined) continue;
      this.byArea.set(a.kind, a.data);
      for (const f of a.data.fields) if (!fields.has(f.name)) fields.set(f.name, f);
    }
    this.fields = [...fields.values()];
    this.kinds = [...this.byArea.keys()];
  }

  /** The fields' values on one transaction: its area's, and every other field's `none`. */
  values(tx: AreaRow): Json {
    let out = this.cache.get(tx);
    if (out === undefined) {
      const own = this.byArea.get(tx.area)?.present(tx) ?? {};
      out = Object.fromEntries(this.fields.map((f) => [f.name, own[f.name] ?? f.none]));
      this.cache.set(tx, out);
    }
    return out;
  }

  /** The snapshot: the core's keys (undefined: absent) and the area keys the transaction has, each after its key. */
  snapshot(tx: AreaRow, core: [string, unknown][]): Json {
    const v = this.values(tx);
    const placed = this.fields.flatMap((f) =>
      f.snapshot !== undefined && v[f.name] !== null && v[f.name] !== undefined && v[f.name] !== false
        ? [{ name: f.name, after: f.snapshot.after, value: v[f.name] }]
        : [],
    );
    return placeAfter(core, placed);
  }

  /** The snapshot's area keys (the `TransactionSnapshot` fields the areas add), in order. */
  snapshotFields(): AreaField[] {
    return this.fields.filter((f) => f.snapshot !== undefined);
  }

  /**
   * The checkout view: the core's entries and every field the areas show there (a value or its `none`), a link
   * kept only when `safe` says it is one a public page may show (the checkout's own rule), else null.
   */
  checkout(tx: AreaRow, core: [string, unknown][], safe: (link: unknown, kind: "http" | "app") => string | null): Json {
    const v = this.values(tx);
    const shown = (f: AreaField) => (f.checkout?.link === undefined ? v[f.name] : safe(v[f.name], f.checkout.link));
    return placeAfter(
      core,
      this.fields.flatMap((f) =>
        f.checkout === undefined ? [] : [{ name: f.name, after: f.checkout.after, value: shown(f) }],
      ),
    );
  }

  /** The CSV export's columns: the core's, with the areas' placed (names only). */
  csvColumns(core: string[]): string[] {
    const placed = this.fields.flatMap((f) =>
      f.csv === undefined ? [] : [{ ...f.csv, name: f.csv.column, value: f }],
    );
    return Object.keys(
      placeAfter(
        core.map((c) => [c, null]),
        placed,
      ),
    );
  }

  /** One area column's cell: the text of the field's value ("" when none). */
  csvCell(tx: AreaRow, column: string): string | null {
    const f = this.fields.find((x) => x.csv?.column === column);
    if (f === undefined) return null;
    const v = this.values(tx)[f.name];
    return typeof v === "string" ? v : "";
  }

  /** The areas whose upstream_ref the transactions search matches, by how. */
  searched(how: "as-typed" | "lowercased"): string[] {
    return [...this.byArea].filter(([, d]) => d.ref?.search === how).map(([kind]) => kind);
  }

  /** Whether an area's upstream_ref is what the payer's bank or gateway knows its payment by. */
  refIsReference(area: string): boolean {
    return this.byArea.get(area)?.ref?.reference === true;
  }

  /** Every name an area field has (the house test checks that the core names none of them). */
  names(): string[] {
    return this.fields.map((f) => f.name);
  }
}
