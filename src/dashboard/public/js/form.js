// Labelled form fields with inline errors, and the create/edit form every resource page uses.
import { announce, AREA_LABELS, h } from "./dom.js";

let seq = 0;

/**
 * One labelled control with its help text and an error slot, both tied to the control by aria-describedby.
 * spec: { name, label, type?, value?, required?, help?, options?: [{value,label}], placeholder?, autocomplete?, maxLength? }
 */
export function field(spec) {
  const id = `f-${spec.name}-${++seq}`;
  const helpId = `${id}-help`;
  const errId = `${id}-err`;
  const common = { id, name: spec.name, required: spec.required, "aria-describedby": `${helpId} ${errId}` };
  const control = spec.options
    ? h(
        "select",
        common,
        spec.options.map((o) =>
          h("option", { value: String(o.value), selected: String(o.value) === String(spec.value ?? "") }, o.label),
        ),
      )
    : h("input", {
        ...common,
        type: spec.type ?? "text",
        value: spec.value ?? "",
        placeholder: spec.placeholder,
        autocomplete: spec.autocomplete ?? "off",
        maxlength: spec.maxLength,
        spellcheck: "false",
      });
  return h(
    "div",
    { class: "field", dataset: { field: spec.name } },
    h(
      "label",
      { for: id },
      spec.label,
      h("span", { class: "req", "aria-hidden": "true", hidden: !spec.required }, " *"),
    ),
    control,
    h("small", { id: helpId, class: "help" }, spec.help ?? ""),
    h("span", { id: errId, class: "error" }),
  );
}

export function control(form, name) {
  return form.querySelector(`[name="${name}"]`);
}

export function setRequired(form, name, required) {
  const c = control(form, name);
  if (!c) return;
  c.required = required;
  const star = form.querySelector(`[data-field="${name}"] .req`);
  if (star) star.hidden = !required;
}

export function setFieldError(form, name, message) {
  const wrap = form.querySelector(`[data-field="${name}"]`);
  const c = control(form, name);
  if (!wrap || !c) return false;
  wrap.querySelector(".error").textContent = message
    ? `${wrap.querySelector("label").firstChild.textContent} ${message}`
    : "";
  if (message) c.setAttribute("aria-invalid", "true");
  else c.removeAttribute("aria-invalid");
  return true;
}

export function clearErrors(form) {
  for (const wrap of form.querySelectorAll("[data-field]")) setFieldError(form, wrap.dataset.field, "");
  const general = form.querySelector(".form-error");
  if (general) general.textContent = "";
}

/** Puts the service's field errors next to their fields; anything else in the form's general error line. Focuses the first bad field. */
export function showErrors(form, err) {
  clearErrors(form);
  const details = err.details ?? [];
  const unplaced = [];
  for (const d of details) {
    const name = String(d.field).replace(/^input\./, "");
    if (!setFieldError(form, name, d.message)) unplaced.push(`${d.field} ${d.message}`);
  }
  const general = form.querySelector(".form-error");
  if (general && (details.length === 0 || unplaced.length > 0))
    general.textContent = details.length === 0 ? err.message : unplaced.join("; ");
  form.querySelector("[aria-invalid=true]")?.focus();
  announce(err.message, "error");
}

/** The form's values by name ("" stays ""; checkboxes with one name become a list). */
export function values(form) {
  const out = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    if (el.type === "checkbox") {
      out[el.name] ??= [];
      if (el.checked) out[el.name].push(el.value);
    } else out[el.name] = el.value;
  }
  return out;
}

/**
 * A create/edit form: fields, a submit button, a cancel button when editing, a general error line.
 * onSubmit(values) may throw an ApiError; its field errors are shown inline.
 */
export function editorForm({ title, fields, submitLabel, onSubmit, onCancel, validate }) {
  const form = h(
    "form",
    { class: "editor", novalidate: true, "aria-label": title },
    h("h3", {}, title),
    h("div", { class: "fields" }, fields.map(field)),
    h("p", { class: "form-error", role: "alert" }),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "primary" }, submitLabel),
      onCancel ? h("button", { type: "button", class: "secondary", onclick: onCancel }, "Cancel") : null,
    ),
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearErrors(form);
    const v = values(form);
    const local = validate ? validate(v) : [];
    if (local.length > 0) {
      showErrors(form, { message: "Please correct the highlighted fields", details: local });
      return;
    }
    const btn = form.querySelector("button[type=submit]");
    btn.disabled = true;
    try {
      await onSubmit(v);
    } catch (err) {
      showErrors(form, err);
    } finally {
      btn.disabled = false;
    }
  });
  return form;
}

/** Options for a merchant <select>. */
export function merchantOptions(merchants) {
  return merchants.map((m) => ({ value: m.id, label: m.name }));
}

/** The "Area" filter of a page's filters form: all areas, or one of the service's (the overview, the transactions). */
export function areaFilter() {
  return field({
    name: "area",
    label: "Area",
    options: [
      { value: "", label: "All areas" },
      ...Object.entries(AREA_LABELS).map(([value, label]) => ({ value, label })),
    ],
  });
}
