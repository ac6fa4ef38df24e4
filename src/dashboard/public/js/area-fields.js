// The areas' own fields of a transaction, as config.json declares them (each area's `fields`: name, label, how it
// shows, whether it is the reference of its rows): the pages query, list and show them without naming one.
import { AREAS, h } from "./dom.js";

/** Every area's fields, once each (the first declaration of a name), in module order. */
function allFields() {
  const seen = new Map();
  for (const a of AREAS) for (const f of a.fields ?? []) if (!seen.has(f.name)) seen.set(f.name, f);
  return [...seen.values()];
}

/** The GraphQL selection of the fields `keep` keeps ("orderId gatewayStatus { code message } …"). */
export function areaSelection(keep = () => true) {
  return allFields()
    .filter(keep)
    .map((f) => (f.select ? `${f.name} ${f.select}` : f.name))
    .join(" ");
}

/** The reference fields (a row's reference in the transactions table); `live`: only those the snapshots carry. */
export const referenceSelection = (live) => areaSelection((f) => f.reference !== undefined && (!live || f.live));

/** A transaction's (or snapshot's) reference fields, null where it has none. */
export function referenceValues(tx) {
  return Object.fromEntries(allFields().flatMap((f) => (f.reference ? [[f.name, tx[f.name] ?? null]] : [])));
}

/** The fields of its area the row's reference is; `short` ones labelled and cut ("md5 0123456789…"). */
export function referenceText(row) {
  const area = AREAS.find((a) => a.kind === row.area);
  for (const f of area?.fields ?? []) {
    const v = row[f.name];
    if (!f.reference || v === null || v === undefined || v === "") continue;
    return f.reference === "short" ? `${f.label} ${String(v).slice(0, 10)}…` : String(v);
  }
  return "—";
}

/** The reference fields the transactions search matches (of the areas it searches), for the live table's filter. */
export function searchedValues(row) {
  return AREAS.filter((a) => a.searched).flatMap((a) =>
    (a.fields ?? []).filter((f) => f.reference).map((f) => row[f.name]),
  );
}

/** The search box's label: the searched areas' reference labels, then the transaction id. */
export function searchLabel() {
  const labels = AREAS.filter((a) => a.searched).flatMap((a) =>
    (a.fields ?? []).filter((f) => f.reference).map((f) => f.label),
  );
  return labels.length === 0 ? "Transaction ID" : `${labels.join(", ")} or transaction ID`;
}

/** One field's value as the details show it: text, code or a link; an object as its values; null when it has none. */
function shown(f, v) {
  if (v === null || v === undefined || v === "" || v === false) return null;
  if (typeof v === "object") return Object.values(v).join(" ");
  if (f.show === "code") return h("code", { class: "wrap" }, String(v));
  if (f.show === "link")
    return h("a", { href: String(v), target: "_blank", rel: "noopener noreferrer" }, `Open ${f.label.toLowerCase()}`);
  return String(v);
}

/** The details rows of a transaction's area fields: [label, shown value], those with a value, in its area's order. */
export function areaFacts(tx) {
  const area = AREAS.find((a) => a.kind === tx.area);
  return (area?.fields ?? []).map((f) => [f.label, shown(f, tx[f.name])]);
}
