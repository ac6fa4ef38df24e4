// What a PayWay link page's own state (window.__NUXT__, server-rendered) says of the payment before anything is
// typed: its currency, whether the link fixes the amount, the amount's bounds, and the fields besides the amount it
// asks for. The keys are known from public code (high confidence), their nesting is not: they are searched for.

import { compareDecimals, decimalText, moneyText, NUMERIC_TO_CODE } from "../money/money.js";
import type { FieldHints, PageCheck, PageVerdict, PageWant, PayerField } from "./link-protocol.js";

/**
 * The page's names of the fields a link may ask for besides the amount (unattributed Node and PHP clients send
 * `{amount, remark, full_name, email, phone}` in additional_fields), and the generate request's field for each.
 */
const PAGE_FIELDS: Readonly<Record<string, PayerField>> = {
  remark: "remark",
  full_name: "payerName",
  fullname: "payerName",
  name: "payerName",
  email: "payerEmail",
  phone: "payerPhone",
  phone_number: "payerPhone",
};

/** How each of those fields is recognised in the page (page-form.ts), in English and Khmer. */
export const PAYWAY_FIELD_HINTS: Record<PayerField, FieldHints> = {
  remark: { names: ["remark", "note"], words: ["remark", "note", "កំណត់សម្គាល់", "សម្គាល់"] },
  payerName: { names: ["full_name", "fullname", "name"], words: ["full name", "name", "ឈ្មោះ"] },
  payerEmail: { names: ["email"], type: "email", words: ["e-mail", "email", "អ៊ីមែល", "អ៊ីម៉ែល"] },
  payerPhone: { names: ["phone", "phone_number"], type: "tel", words: ["phone", "ទូរស័ព្ទ"] },
};

/** The state read is capped: at most this many characters come back from the page, whatever it holds. */
export const PAGE_STATE_MAX_CHARS = 4096;

/**
 * Runs in the page (its main world: __NUXT__ is its script's). Every value it returns is cut short in the page and
 * the whole is one JSON string, so a page whose state is huge (or hostile) sends back a few KB at most.
 */
const EXPRESSION = `(() => {
  const root = window.__NUXT__;
  if (!root || typeof root !== "object") return JSON.stringify({ found: false });
  // Values of \`key\` wherever it is nested, in the order a depth-first search meets them (bounded).
  const all = (key, limit) => {
    const out = []; const seen = new Set(); const stack = [root];
    for (let n = 0; stack.length > 0 && n < 20000 && out.length < limit; n++) {
      const o = stack.pop();
      if (!o || typeof o !== "object" || seen.has(o)) continue;
      seen.add(o);
      if (Object.prototype.hasOwnProperty.call(o, key)) out.push(o[key]);
      const keys = Object.keys(o);
      for (let i = keys.length - 1; i >= 0; i--) stack.push(o[keys[i]]);
    }
    return out;
  };
  const filled = (v) => v !== null && typeof v === "object" && Object.keys(v).length > 0;
  // The first that holds something: chmabapay saw \`checkout.transaction_summary: {}\` beside the one with the data.
  const firstFilled = (key) => all(key, 20).find(filled);
  const short = (v) => (typeof v === "string" || typeof v === "number" ? String(v).slice(0, 40) : null);
  const rules = (f) => (f && Array.isArray(f.rules) ? f.rules.slice(0, 20).filter((r) => r && typeof r === "object") : []);
  const summary = firstFilled("transaction_summary") || {};
  const order = summary.order_details && typeof summary.order_details === "object" ? summary.order_details : {};
  const fields = firstFilled("required_fields") || {};
  const limits = rules(fields.amount).find((r) => r.min_value !== undefined || r.max_value !== undefined) || {};
  const extra = Object.keys(fields).filter((k) => k !== "amount").slice(0, 20)
    .map((k) => ({ name: k.slice(0, 40), required: rules(fields[k]).some((r) => r.required === true) }));
  return JSON.stringify({
    found: typeof all("aba_data", 1)[0] === "string",
    currency: short(order.currency),
    amount: short(order.amount),
    min: short(limits.min_value),
    max: short(limits.max_value),
    fields: extra,
  });
})()`;

interface PageState {
  found: boolean;
  currency: string | null;
  /** The link's own amount (a fixed-amount link), when it states one above zero. */
  fixed: string | null;
  min: string | null;
  max: string | null;
  fields: { name: string; required: boolean }[];
}

function readState(value: unknown): PageState | null {
  if (typeof value !== "string" || value.length > PAGE_STATE_MAX_CHARS) return null;
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const r = v as Record<string, unknown>;
  const text = (x: unknown) => (typeof x === "string" && x.length > 0 ? x : null);
  const fixed = decimalText(r.amount);
  return {
    found: r.found === true,
    currency: text(r.currency)?.toUpperCase() ?? null,
    fixed: fixed !== null && /[1-9]/.test(fixed) ? fixed : null,
    min: decimalText(r.min),
    max: decimalText(r.max),
    fields: Array.isArray(r.fields)
      ? r.fields.flatMap((f: unknown) =>
          typeof f === "object" && f !== null && typeof (f as { name?: unknown }).name === "string"
            ? [{ name: (f as { name: string }).name, required: (f as { required?: unknown }).required === true }]
            : [],
        )
      : [],
  };
}

export const PAYWAY_PAGE_CHECK: PageCheck = {
  expression: EXPRESSION,
  verify(value, want) {
    const state = readState(value);
    if (state === null || !state.found)
      return { warning: "the PayWay page has no aba_data in window.__NUXT__: the page may have changed" };
    const wanted = NUMERIC_TO_CODE[want.currency] as string;
    if (state.currency !== null && state.currency !== wanted)
      return { refusal: `the payment link is in ${state.currency}; this configuration is ${wanted}` };
    const verdict: PageVerdict = {};
    const invalid = [...amountProblems(state, want, wanted), ...fieldProblems(state, want, verdict)];
    if (verdict.refusal !== undefined) return { refusal: verdict.refusal };
    if (invalid.length > 0) return { invalid };
    if (state.fixed !== null) verdict.fixedAmount = state.fixed;
    if (state.currency === null)
      verdict.warning = "the PayWay page states no currency (transaction_summary.order_details)";
    return verdict;
  },
};

/** The request's amount against the link's own: its fixed amount, else its minimum and maximum (exact decimals). */
function amountProblems(state: PageState, want: PageWant, currency: string): { field: string; message: string }[] {
  const money = (d: string) => moneyText(d, currency);
  if (state.fixed !== null)
    return compareDecimals(want.amount, state.fixed) === 0
      ? []
      : [{ field: "amount", message: `must be ${money(state.fixed)}, the payment link's fixed amount` }];
  if (state.min !== null && compareDecimals(want.amount, state.min) < 0)
    return [{ field: "amount", message: `must be at least ${money(state.min)}, the payment link's minimum` }];
  if (state.max !== null && compareDecimals(want.amount, state.max) > 0)
    return [{ field: "amount", message: `must be at most ${money(state.max)}, the payment link's maximum` }];
  return [];
}

/**
 * The fields the link asks for besides the amount: each one the request gives is filled in (`verdict.fill`); each
 * required one it lacks is named. A required field the request has no field for is the link's, not the caller's:
 * a refusal (the payment cannot be made through this link by this service).
 */
function fieldProblems(state: PageState, want: PageWant, verdict: PageVerdict): { field: string; message: string }[] {
  const missing: { field: string; message: string }[] = [];
  const fill: NonNullable<PageVerdict["fill"]> = [];
  for (const f of state.fields) {
    const field = PAGE_FIELDS[f.name.toLowerCase()];
    if (field === undefined) {
      if (f.required) verdict.refusal = `the payment link requires a field this service cannot fill: ${f.name}`;
      continue;
    }
    const value = want.payer?.[field];
    if (value !== undefined && value !== "") {
      if (!fill.some((x) => x.field === field)) fill.push({ field, value });
    } else if (f.required && !missing.some((x) => x.field === field))
      missing.push({ field, message: "is required by the payment link" });
  }
  if (fill.length > 0) verdict.fill = fill;
  return missing;
}
