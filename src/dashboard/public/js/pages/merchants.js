// Merchants and their KHQR account: list, create, edit — with the codec's rules checked as you type.
import { gql } from "../api.js";
import { announce, CURRENCIES, fill, h, table, timeEl } from "../dom.js";
import { editorForm, setFieldError, setRequired } from "../form.js";
import { checkMerchant, describeRule } from "../merchant-rules.js";
import { currencyCode } from "../money.js";

const FIELDS =
  "id name accountType bakongAccountId merchantName merchantCity merchantId acquiringBank merchantCategoryCode " +
  "defaultCurrency returnUrl createdAt";
const LOAD = `{ merchants { ${FIELDS} }
  merchantRules { fields { field label requiredFor maxLength pattern patternMessage help } groups { fields appliesTo
    perFieldOverhead maxTotal message } accountTypes } }`;
const CREATE = `mutation($input: MerchantInput!) { createMerchant(input: $input) { ${FIELDS} } }`;
const UPDATE = `mutation($id: ID!, $input: MerchantInput!) { updateMerchant(id: $id, input: $input) { ${FIELDS} } }`;

class MerchantsPage extends HTMLElement {
  async connectedCallback() {
    fill(
      this,
      h("h1", { tabindex: "-1" }, "Merchants"),
      h(
        "p",
        { class: "lead" },
        "Each merchant is a KHQR account that QR codes pay into. API keys and upstream configurations belong to a merchant.",
      ),
      h("div", { class: "list" }, h("p", {}, "Loading…")),
      h("div", { class: "form-slot" }),
    );
    try {
      const data = await gql(LOAD);
      this.rules = data.merchantRules;
      this.merchants = data.merchants;
      this.renderList();
      this.showForm(null);
    } catch (err) {
      fill(this.querySelector(".list"), h("p", { class: "form-error" }, err.message));
    }
  }

  renderList() {
    fill(
      this.querySelector(".list"),
      table(
        "Merchants",
        [
          { label: "Name", cell: (m) => m.name },
          { label: "Account", cell: (m) => `${m.bakongAccountId} (${m.accountType})` },
          { label: "Shown as", cell: (m) => `${m.merchantName}, ${m.merchantCity}` },
          { label: "Currency", cell: (m) => currencyCode(m.defaultCurrency) ?? String(m.defaultCurrency) },
          { label: "Created", cell: (m) => timeEl(m.createdAt) },
          {
            label: "Actions",
            cell: (m) =>
              h(
                "button",
                { type: "button", class: "secondary", onclick: () => this.showForm(m), "aria-label": `Edit ${m.name}` },
                "Edit",
              ),
          },
        ],
        this.merchants,
        "No merchants yet: create the first one below.",
      ),
    );
  }

  showForm(merchant) {
    const v = merchant ?? { accountType: "merchant", merchantCategoryCode: "5999", defaultCurrency: 116 };
    const ruleFields = this.rules.fields.map((r) => ({
      name: r.field,
      label: r.label,
      value: v[r.field] ?? "",
      required: r.requiredFor.includes(v.accountType),
      help: describeRule(r, v.accountType),
    }));
    const form = editorForm({
      title: merchant ? `Edit ${merchant.name}` : "New merchant",
      submitLabel: merchant ? "Save changes" : "Create merchant",
      fields: [
        ruleFields[0],
        {
          name: "accountType",
          label: "Account type",
          value: v.accountType,
          required: true,
          options: [
            { value: "merchant", label: "Merchant (KHQR tag 30)" },
            { value: "individual", label: "Individual (KHQR tag 29)" },
          ],
          help: "Merchant accounts also need a merchant ID and an acquiring bank",
        },
        ...ruleFields.slice(1),
        {
          name: "defaultCurrency",
          label: "Default currency",
          value: String(v.defaultCurrency),
          required: true,
          options: CURRENCIES,
        },
        {
          name: "returnUrl",
          label: "Return URL (optional)",
          type: "url",
          value: v.returnUrl ?? "",
          help:
            "Where the checkout page sends payers back after paying, failing or expiring (https); a generate " +
            "request's own returnUrl wins",
        },
      ],
      validate: (values) => checkMerchant(values, this.rules),
      onCancel: merchant ? () => this.showForm(null) : null,
      onSubmit: async (values) => {
        const input = { ...values, defaultCurrency: Number(values.defaultCurrency) };
        for (const k of ["merchantId", "acquiringBank", "returnUrl"]) if (input[k] === "") input[k] = null;
        if (merchant) {
          const { updateMerchant } = await gql(UPDATE, { id: merchant.id, input });
          this.merchants = this.merchants.map((m) => (m.id === merchant.id ? updateMerchant : m));
          announce(`Saved ${updateMerchant.name}`);
        } else {
          const { createMerchant } = await gql(CREATE, { input });
          this.merchants = [...this.merchants, createMerchant];
          announce(`Created merchant ${createMerchant.name}`);
        }
        this.renderList();
        this.showForm(null);
      },
    });
    this.liveChecks(form);
    fill(this.querySelector(".form-slot"), form);
    if (merchant) form.querySelector("input")?.focus();
  }

  /** Rules shown inline while typing: a field's error appears once it has been touched. */
  liveChecks(form) {
    const touched = new Set();
    const recheck = () => {
      const values = Object.fromEntries(new FormData(form));
      for (const r of this.rules.fields) {
        setRequired(form, r.field, r.requiredFor.includes(values.accountType));
        form.querySelector(`[data-field="${r.field}"] .help`).textContent = describeRule(r, values.accountType);
      }
      const errors = checkMerchant(values, this.rules);
      for (const r of this.rules.fields) {
        if (!touched.has(r.field)) continue;
        setFieldError(form, r.field, errors.find((e) => e.field === r.field)?.message ?? "");
      }
    };
    form.addEventListener("input", (ev) => {
      if (ev.target.name) touched.add(ev.target.name);
      recheck();
    });
    form.addEventListener("change", recheck);
    form.addEventListener("focusout", (ev) => {
      if (ev.target.name && ev.target.value !== "") touched.add(ev.target.name);
      recheck();
    });
  }
}

customElements.define("pqr-merchants", MerchantsPage);
