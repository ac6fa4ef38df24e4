import type { AreaColumn, AreaData, AreaField, AreaRow } from "../module.js";

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
  /** Every field some area shows, once each (two areas' declarations of one name merged), in module order. */
  readonly fields: readonly AreaField[];
  /** The areas, in module order (those with data of their own). */
  readonly kinds: readonly string[];
  private readonly cache = new WeakMap<object, Json>();

  /** The CSV columns the areas add (their fields' and their own), in module order, each area's in its order. */
  private readonly columns: readonly (AreaColumn & { field?: AreaField })[];

  constructor(areas: readonly { kind: string; data?: AreaData }[] = []) {
    const fields = new Map<string, AreaField>();
    const columns: (AreaColumn & { field?: AreaField })[] = [];
    for (const a of areas) {
      if (a.data === undefined) continue;
      this.byArea.set(a.kind, a.data);
      for (const f of a.data.fields) {
        const first = fields.get(f.name);
        fields.set(f.name, first === undefined ? f : merged(first, f, a.kind));
        if (first === undefined && f.csv !== undefined) columns.push({ ...f.csv, cell: () => "", field: f });
      }
      columns.push(...(a.data.csv ?? []));
    }
    this.fields = [...fields.values()];
    this.kinds = [...this.byArea.keys()];
    this.columns = columns;
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

  /**
   * One field's value on one transaction: what `values` holds for it, worked out alone. A GraphQL field reads only
   * its own, so a page's rows make no record of every field (and keep none: `present` is a few property reads).
   */
  value(tx: AreaRow, field: AreaField): unknown {
    return this.byArea.get(tx.area)?.present(tx)[field.name] ?? field.none;
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
    const placed = this.columns.map((c) => ({ name: c.column, after: c.after, value: c }));
    return Object.keys(
      placeAfter(
        core.map((c) => [c, null]),
        placed,
      ),
    );
  }

  /** One area column's cell: the text of the field's value, or the area's own column's ("" when none). */
  csvCell(tx: AreaRow, column: string): string | null {
    const c = this.columns.find((x) => x.column === column);
    if (c === undefined) return null;
    if (c.field === undefined)
      return (
        this.byArea
          .get(tx.area)
          ?.csv?.find((x) => x.column === column)
          ?.cell(tx) ?? ""
      );
    const v = this.values(tx)[c.field.name];
    return typeof v === "string" ? v : "";
  }

  /** The areas whose upstream_ref the transactions search matches, by how. */
  searched(how: "as-typed" | "lowercased"): string[] {
    return [...this.byArea].filter(([, d]) => d.ref?.search === how).map(([kind]) => kind);
  }

  /**
   * What the transactions search matches, as its description says it: the fields showing the upstream identifiers
   * it matches (as typed, then lowercased: the query's order), and the transaction's id.
   */
  searchDescription(): string {
    const shown = (how: "as-typed" | "lowercased") =>
      [...this.byArea.values()].flatMap((d) => (d.ref?.search === how && d.ref.field ? [d.ref.field] : []));
    const names = [...new Set([...shown("as-typed"), ...shown("lowercased")]), "transactionId"];
    const listed = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
    return `${listed}: exact, or a prefix of one`;
  }

  /** What the payer's bank or gateway knows a paid transaction by, if its area says (AreaData.reference). */
  reference(tx: AreaRow): string | null {
    const r = this.byArea.get(tx.area)?.reference?.(tx);
    return typeof r === "string" && r !== "" ? r : null;
  }

  /** When a paid transaction was paid by its upstream's clock, if its area says (AreaData.paidAt). */
  paidAt(tx: AreaRow): Date | null {
    return this.byArea.get(tx.area)?.paidAt?.(tx) ?? null;
  }

  /** The snapshot's `payment`: what the upstream reported about the payment, if its area keeps that. */
  payment(tx: AreaRow): unknown {
    return this.byArea.get(tx.area)?.payment?.(tx);
  }

  /** Every name an area field has (the house test checks that the core names none of them). */
  names(): string[] {
    return this.fields.map((f) => f.name);
  }
}

/**
 * One field two areas declare (the same value on either's transactions): the first declaration, with the second's
 * description where the first gives none. Anything else they tell differently stops the build, naming both.
 */
function merged(first: AreaField, second: AreaField, kind: string): AreaField {
  const rules = (f: AreaField) =>
    JSON.stringify([f.nullable === true, f.none, f.snapshot ?? null, f.checkout ?? null, f.csv ?? null]);
  const described = first.description === undefined || second.description === undefined;
  const alike = first.type() === second.type() && rules(first) === rules(second);
  if (!alike || (!described && first.description !== second.description))
    throw new Error(
      `The area field "${first.name}" is declared twice unalike (again by the area ${kind}): ` +
        "two areas showing one field must give it the same type, nullability, none and places",
    );
  return { ...first, description: first.description ?? second.description };
}
