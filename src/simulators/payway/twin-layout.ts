// How a PayWay twin link's page is built and what it asks for beyond an amount: per link (POST /sim/payway/links),
// or for every link while a fault mode says so. Each variant is one a driver of the real page meets (sources in
// docs/link-simulator.md, "Page variants"): a Continue that is an <a>, a submit input or a [role=button], disabled
// until the page's scripts hydrate it; a phone field before the amount; Khmer wording; a fixed amount; fields the
// link requires (remark, full name, e-mail, phone), which the API checks in additional_fields.

import type { FieldError } from "../../errors.js";

export type TwinContinue = "button" | "a" | "submit" | "role";
export const TWIN_CONTINUES: readonly TwinContinue[] = ["button", "a", "submit", "role"];
/** The fields a link may ask for besides the amount, as additional_fields names them. */
export type TwinField = "remark" | "full_name" | "email" | "phone";
export const TWIN_FIELDS: readonly TwinField[] = ["remark", "full_name", "email", "phone"];
export type TwinLanguage = "en" | "km";
/** What says the amount field takes an amount: its type, its inputmode only, or its placeholder only. */
export type TwinAmountAs = "number" | "inputmode" | "placeholder";
export const TWIN_AMOUNT_AS: readonly TwinAmountAs[] = ["number", "inputmode", "placeholder"];

export interface TwinLinkOptions {
  /** What Continue is: a button, an <a> without href, an input[type=submit] of a form, a div[role=button]. */
  continueAs: TwinContinue;
  /** The page's controls are disabled and without handlers until this long after the document (0: at once). */
  hydrationMs: number;
  /** An optional phone field (type=tel, inputmode=numeric) placed before the amount. */
  phoneFirst: boolean;
  /** km: Khmer wording, and the amount field a plain text input named only by its <label for>. */
  language: TwinLanguage;
  /** The link's own amount: shown read-only, in __NUXT__ order_details.amount; the API takes no other. */
  fixedAmount: string | null;
  /** Fields the link requires; the page asks for them and the API refuses additional_fields without them. */
  requiredFields: TwinField[];
  /**
   * number: the amount field as `language` has it (English type=number with a label and placeholder; Khmer a text
   * input named by its label); inputmode: type=text inputmode=decimal, with no word saying amount; placeholder: a
   * type=text input that only its placeholder ("Amount") names.
   */
  amountAs: TwinAmountAs;
  /** An optional e-mail field (type=email) before the amount, after the phone field of `phoneFirst`. */
  emailFirst: boolean;
  /** The form is hidden by the page's inline style until its stylesheet (<page path>/_nuxt/link.css) shows it. */
  stylesheet: boolean;
}

export const DEFAULT_LINK_OPTIONS: TwinLinkOptions = {
  continueAs: "button",
  hydrationMs: 0,
  phoneFirst: false,
  language: "en",
  fixedAmount: null,
  requiredFields: [],
  amountAs: "number",
  emailFirst: false,
  stylesheet: false,
};

const AMOUNT_RE = /^\d{1,12}(?:\.\d{1,2})?$/;
const MAX_HYDRATION_MS = 60_000;

/** The link options a control's body gives (what it leaves out is not in the answer); problems go to `details`. */
export function linkOptionsOf(body: Record<string, unknown>, details: FieldError[]): Partial<TwinLinkOptions> {
  const out: Partial<TwinLinkOptions> = {};
  const { continueAs, hydrationMs, language, fixedAmount, requiredFields, amountAs } = body;
  if (continueAs !== undefined) {
    if (TWIN_CONTINUES.includes(continueAs as TwinContinue)) out.continueAs = continueAs as TwinContinue;
    else details.push({ field: "continueAs", message: `one of ${TWIN_CONTINUES.join(", ")}` });
  }
  if (hydrationMs !== undefined) {
    if (
      typeof hydrationMs === "number" &&
      Number.isInteger(hydrationMs) &&
      hydrationMs >= 0 &&
      hydrationMs <= MAX_HYDRATION_MS
    )
      out.hydrationMs = hydrationMs;
    else details.push({ field: "hydrationMs", message: `an integer from 0 to ${MAX_HYDRATION_MS}` });
  }
  for (const flag of ["phoneFirst", "emailFirst", "stylesheet"] as const) {
    const v = body[flag];
    if (v === undefined) continue;
    if (typeof v === "boolean") out[flag] = v;
    else details.push({ field: flag, message: "true or false" });
  }
  if (amountAs !== undefined) {
    if (TWIN_AMOUNT_AS.includes(amountAs as TwinAmountAs)) out.amountAs = amountAs as TwinAmountAs;
    else details.push({ field: "amountAs", message: `one of ${TWIN_AMOUNT_AS.join(", ")}` });
  }
  if (language !== undefined) {
    if (language === "en" || language === "km") out.language = language;
    else details.push({ field: "language", message: "en or km" });
  }
  if (fixedAmount !== undefined && fixedAmount !== null) {
    if (typeof fixedAmount === "string" && AMOUNT_RE.test(fixedAmount) && Number(fixedAmount) > 0)
      out.fixedAmount = fixedAmount;
    else details.push({ field: "fixedAmount", message: "a decimal string above 0, at most 2 decimals" });
  }
  if (requiredFields !== undefined) {
    const list = Array.isArray(requiredFields) ? requiredFields : [null];
    if (list.every((f) => TWIN_FIELDS.includes(f as TwinField))) out.requiredFields = [...new Set(list as TwinField[])];
    else details.push({ field: "requiredFields", message: `a list of ${TWIN_FIELDS.join(", ")}` });
  }
  return out;
}

/** The fault modes that change every link's page (twin-fault.ts), and the options each puts on them. */
export const LINK_FAULT_MODES = ["hydration", "fixed-amount", "required-fields"] as const;
export type LinkFaultMode = (typeof LINK_FAULT_MODES)[number];

/**
 * hydration {continueAs?, hydrationMs?, language?}: Continue an <a> (or `continueAs`) disabled for 1.5 s (or
 * `hydrationMs`), a phone field first; fixed-amount {fixedAmount}; required-fields {requiredFields?} (default all).
 */
export function faultLinkOptions(
  mode: LinkFaultMode,
  body: Record<string, unknown>,
  details: FieldError[],
): Partial<TwinLinkOptions> {
  const given = linkOptionsOf(body, details);
  if (mode === "hydration")
    return { continueAs: "a", hydrationMs: 1500, ...given, phoneFirst: true, fixedAmount: null, requiredFields: [] };
  if (mode === "fixed-amount") {
    if (given.fixedAmount === undefined) details.push({ field: "fixedAmount", message: "is required for this mode" });
    return { fixedAmount: given.fixedAmount ?? null };
  }
  return { requiredFields: given.requiredFields ?? [...TWIN_FIELDS] };
}

interface Words {
  amount: string;
  placeholder: string | null;
  continue: string;
  fields: Record<TwinField, string>;
  required: string;
  language: string;
}

/** The page's wording; Khmer as the real page's language button offers it. */
export const TWIN_WORDS: Record<TwinLanguage, Words> = {
  en: {
    amount: "Amount",
    placeholder: "Enter amount",
    continue: "Continue",
    fields: { remark: "Remark", full_name: "Full name", email: "E-mail", phone: "Phone number" },
    required: "is required",
    language: "ខ្មែរ",
  },
  km: {
    amount: "ចំនួនទឹកប្រាក់",
    placeholder: null,
    continue: "បន្ត",
    fields: { remark: "កំណត់សម្គាល់", full_name: "ឈ្មោះពេញ", email: "អ៊ីមែល", phone: "លេខទូរស័ព្ទ" },
    required: "ត្រូវការ",
    language: "English",
  },
};

/** required_fields as the page's state has it: the amount's rules (unless fixed) and each extra field's. */
export function requiredFieldsState(o: TwinLinkOptions, minAmount: string, maxAmount: string) {
  const fields: Record<string, { rules: Record<string, unknown>[] }> = {};
  if (o.fixedAmount === null)
    fields.amount = { rules: [{ required: true }, { min_value: minAmount, max_value: maxAmount }] };
  for (const f of shownFields(o)) fields[f] = { rules: o.requiredFields.includes(f) ? [{ required: true }] : [] };
  return fields;
}

/** The fields placed before the amount: the phone, then the e-mail, when asked. */
function firstFields(o: TwinLinkOptions): TwinField[] {
  return [...(o.phoneFirst ? (["phone"] as const) : []), ...(o.emailFirst ? (["email"] as const) : [])];
}

/** The extra fields the page shows, in its order: those asked first (before the amount), then the required ones. */
export function shownFields(o: TwinLinkOptions): TwinField[] {
  const first = firstFields(o);
  return [...first, ...TWIN_FIELDS.filter((f) => o.requiredFields.includes(f) && !first.includes(f))];
}

const FIELD_INPUTS: Record<TwinField, string> = {
  remark: "textarea",
  full_name: 'input type="text" autocomplete="name"',
  email: 'input type="email" autocomplete="email"',
  phone: 'input type="tel" inputmode="numeric" autocomplete="tel"',
};

/** The form's HTML as the server renders it: before hydration (hydrationMs > 0) its controls are disabled. */
export function formHtml(o: TwinLinkOptions, currency: string, esc: (s: string) => string): string {
  const w = TWIN_WORDS[o.language];
  const cold = o.hydrationMs > 0;
  const off = cold ? " disabled" : "";
  const field = (f: TwinField) => {
    const hint = f === "phone" && o.language === "en" ? ' placeholder="Phone number"' : "";
    const required = o.requiredFields.includes(f) ? " required" : "";
    const attrs = `id="pw-${f}" name="${f}" data-pw-field="${f}"${required}${hint}${off}`;
    const control = FIELD_INPUTS[f] === "textarea" ? `<textarea ${attrs}></textarea>` : `<${FIELD_INPUTS[f]} ${attrs}>`;
    return `<label>${esc(w.fields[f])} ${control}</label>`;
  };
  const amountState = o.fixedAmount !== null ? ` value="${esc(o.fixedAmount)}" readonly` : cold ? " disabled" : "";
  const first = firstFields(o);
  const fields = shownFields(o);
  const before = fields.filter((f) => first.includes(f)).map(field);
  const after = fields.filter((f) => !first.includes(f)).map(field);
  const amount = amountHtml(o, w, esc(currency), amountState);
  const controls = [...before, amount, ...after, '<p id="pw-error" role="alert" hidden></p>', continueHtml(o, w)];
  const body = controls.join("\n");
  return o.continueAs === "submit" ? `<form id="pw-form" novalidate>\n${body}\n</form>` : body;
}

/** The amount field, said to be one by its type and label, by its inputmode alone, or by its placeholder alone. */
function amountHtml(o: TwinLinkOptions, w: Words, currency: string, state: string): string {
  switch (o.amountAs) {
    case "inputmode":
      // A currency code beside it and "0.00" in it, as payment forms show; no word says amount.
      return (
        `<label><span class="pw-currency">${currency}</span> <input id="pw-amount" name="amount" type="text" ` +
        `inputmode="decimal" placeholder="0.00" autocomplete="off"${state}></label>`
      );
    case "placeholder":
      return `<input id="pw-amount" name="amount" type="text" placeholder="${w.amount}" autocomplete="off"${state}>`;
    case "number":
      // English: a number field with a label and a placeholder; Khmer: a plain text field only its <label for> names.
      return o.language === "en"
        ? `<label>${w.amount} (${currency}) <input id="pw-amount" name="amount" type="number" inputmode="decimal" ` +
            `step="any" placeholder="${w.placeholder ?? ""}" autocomplete="off"${state}></label>`
        : `<label for="pw-amount">${w.amount} (${currency})</label> ` +
            `<input id="pw-amount" name="amt" type="text" autocomplete="off"${state}>`;
  }
}

function continueHtml(o: TwinLinkOptions, w: Words): string {
  const cold = o.hydrationMs > 0;
  switch (o.continueAs) {
    case "button":
      return `<button type="button" id="pw-continue" class="pw-btn"${cold ? " disabled" : ""}>${w.continue}</button>`;
    case "submit":
      return `<input type="submit" id="pw-continue" class="pw-btn" value="${w.continue}"${cold ? " disabled" : ""}>`;
    case "a":
      // A styled link without an href: no key activates it, only a click.
      return `<a id="pw-continue" class="pw-btn${cold ? " pw-disabled" : ""}"${cold ? ' aria-disabled="true"' : ""}>${w.continue}</a>`;
    case "role":
      return (
        `<div role="button" tabindex="0" id="pw-continue" class="pw-btn${cold ? " pw-disabled" : ""}"` +
        `${cold ? ' aria-disabled="true"' : ""}>${w.continue}</div>`
      );
  }
}
