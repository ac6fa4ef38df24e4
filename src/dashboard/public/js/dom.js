// Tiny DOM helpers. Text always goes in as text nodes (never innerHTML), so data from the API cannot inject markup.
import { NUMERIC_TO_CODE, formatMoney } from "./money.js";
import { formatInstant, zoneName } from "./zone.js";

/**
 * h("button", { class: "primary", onclick: fn }, "Save") → <button class="primary">Save</button>.
 * Attributes that are false/null/undefined are left out; `on*` functions become listeners; `dataset` fills data-*.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "value" || k === "checked" || k === "selected") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/** Replaces an element's content. */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Clears what announce() showed (a page's message does not belong on the next page). */
export function clearAnnouncement() {
  clearTimeout(announce.timer);
  const region = document.getElementById("announcer");
  if (region) region.textContent = "";
}

/** Says something to screen readers (and shows it briefly) through the page's one live region. */
export function announce(message, kind = "info") {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.dataset.kind = kind;
  region.textContent = message;
  clearTimeout(announce.timer);
  announce.timer = setTimeout(() => {
    region.textContent = "";
  }, 6000);
}

/** An instant in the zone chosen in the header (zone.js); the zone is named by the page around it. */
export function fmtTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : formatInstant(d);
}

/** A <time>: written in the chosen zone, its zone and the UTC instant in its tooltip. */
export function timeEl(iso) {
  return iso ? h("time", { datetime: iso, title: `${zoneName()} time · ${iso}` }, fmtTime(iso)) : "—";
}

export function fmtAmount(amount, currency) {
  return formatMoney(amount, currency);
}

export function statusBadge(status) {
  return h("span", { class: `badge status-${String(status).toLowerCase()}`, dataset: { status } }, status);
}

/** The service's areas, in its module order (config.json `areas`: kind, label, authType, target); set at start-up. */
export const AREAS = [];
/** Area (transaction `area`) → its name. */
export const AREA_LABELS = {};
/** Key kind → its name and x-auth-type. */
export const KIND_LABELS = {};

export function setAreas(areas) {
  for (const a of areas) {
    AREAS.push(a);
    AREA_LABELS[a.kind] = a.label;
    KIND_LABELS[a.kind] = `${a.label} (${a.authType})`;
  }
}
/** The currencies a merchant or a configuration may have, by their ISO 4217 number (the one Money rule's list). */
export const CURRENCIES = Object.entries(NUMERIC_TO_CODE).map(([value, code]) => ({
  value,
  label: `${value} — ${code}`,
}));

/** A button that copies `text` to the clipboard and says so. */
export function copyButton(text, label = "Copy") {
  const btn = h("button", { type: "button", class: "secondary copy" }, label);
  btn.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      btn.textContent = "Copied";
      announce("Copied to the clipboard");
    } catch {
      announce("Copy failed: select the text and copy it by hand", "error");
    }
    setTimeout(() => {
      btn.textContent = label;
    }, 2000);
  });
  return btn;
}

/** A secret shown once: the value, a copy button and the warning. */
export function secretOnce(title, value, note) {
  return h(
    "section",
    { class: "secret-once", "aria-label": title },
    h("h3", {}, title),
    h("p", {}, note),
    h("div", { class: "secret-row" }, h("code", { class: "secret", tabindex: "0" }, value), copyButton(value)),
  );
}

/**
 * A table that becomes stacked cards on narrow screens (each cell labelled by its column through data-label).
 * columns: [{ label, cell(row) → node|string|array }]; `after(row)`: a row of the table's full width below a row's
 * own (or null), for what needs the width (a delivery's attempts).
 */
export function table(caption, columns, rows, empty = "Nothing yet.", { after } = {}) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "cards" },
      h("caption", {}, caption),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          columns.map((c) => h("th", { scope: "col" }, c.label)),
        ),
      ),
      h(
        "tbody",
        {},
        rows.length === 0
          ? h("tr", {}, h("td", { colspan: String(columns.length), class: "empty" }, empty))
          : rows.map((r) => [tableRow(columns, r), after?.(r) ?? null]),
      ),
    ),
  );
}

export function tableRow(columns, row) {
  return h(
    "tr",
    {},
    columns.map((c) => h("td", { "data-label": c.label }, cellContent(c.cell(row)))),
  );
}

/**
 * What a cell holds, as one box: on a phone a cell is a grid of its label and its content, and each loose part of
 * a content of several (a name, then a code) would take a grid cell of its own, the second one under the label.
 */
export function cellContent(content) {
  const parts = [content].flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false && c !== "");
  return parts.length > 1 ? h("span", { class: "cell" }, parts) : parts;
}

/** A row of a table's full width (its cell spans every column), a card of the full width on a phone. */
export function fullRow(columnCount, className, ...content) {
  return h("tr", { class: className }, h("td", { colspan: String(columnCount), class: "full" }, content));
}

/** A button that asks for a second press before doing something destructive (no modal dialogs). */
export function confirmButton(label, confirmLabel, action) {
  const btn = h("button", { type: "button", class: "danger" }, label);
  let armed = false;
  btn.addEventListener("click", async () => {
    if (!armed) {
      armed = true;
      btn.textContent = confirmLabel;
      setTimeout(() => {
        armed = false;
        if (btn.isConnected) btn.textContent = label;
      }, 5000);
      return;
    }
    btn.disabled = true;
    try {
      await action();
    } finally {
      btn.disabled = false;
    }
  });
  return btn;
}

export function shortId(id) {
  return id && id.length > 14 ? `${id.slice(0, 12)}…` : (id ?? "—");
}
