// API keys: create one for a kind (and its configuration), see the plaintext once, list, revoke.
import { gql } from "../api.js";
import { announce, AREAS, confirmButton, fill, h, KIND_LABELS, secretOnce, table, timeEl } from "../dom.js";
import { control, editorForm, merchantOptions } from "../form.js";

/** The areas whose keys are bound to something (a configuration): each names its admin field and query. */
const targets = () => AREAS.flatMap((a) => (a.target ? [a.target] : []));
const targetOf = (kind) => AREAS.find((a) => a.kind === kind)?.target ?? null;
const KEY = () =>
  `id merchantId kind label prefix ${targets()
    .map((t) => t.field)
    .join(" ")} createdAt lastUsedAt revokedAt`;
const LOAD = () =>
  `{ merchants { id name } ${targets()
    .map((t) => `${t.query} { id merchantId name }`)
    .join(" ")} apiKeys { ${KEY()} } }`;
const CREATE = () => `mutation($input: ApiKeyInput!) { createApiKey(input: $input) { apiKey key { ${KEY()} } } }`;
const REVOKE = () => `mutation($id: ID!) { revokeApiKey(id: $id) { ${KEY()} } }`;

class KeysPage extends HTMLElement {
  async connectedCallback() {
    fill(
      this,
      h("h1", { tabindex: "-1" }, "API keys"),
      h(
        "p",
        { class: "lead" },
        "A key has one kind (the x-auth-type it is used with) and belongs to one merchant. Keys are stored as " +
          "hashes: the plaintext is shown once, when the key is created.",
      ),
      h("div", { class: "created-slot", "aria-live": "polite" }),
      h("div", { class: "list" }),
      h("div", { class: "form-slot" }),
    );
    try {
      const data = await gql(LOAD());
      this.merchants = data.merchants;
      this.apiKeys = data.apiKeys;
      /** Target query → its rows (the configurations keys may be bound to). */
      this.targetRows = Object.fromEntries(targets().map((t) => [t.query, data[t.query] ?? []]));
      this.renderList();
      this.renderForm();
    } catch (err) {
      fill(this.querySelector(".list"), h("p", { class: "form-error" }, err.message));
    }
  }

  configName(k) {
    for (const t of targets())
      if (k[t.field]) return this.targetRows[t.query].find((c) => c.id === k[t.field])?.name ?? k[t.field];
    return "—";
  }

  renderList() {
    const merchant = (id) => this.merchants.find((m) => m.id === id)?.name ?? id;
    const keys = [...this.apiKeys].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    fill(
      this.querySelector(".list"),
      table(
        "API keys, newest first",
        [
          { label: "Prefix", cell: (k) => h("code", {}, `${k.prefix}…`) },
          { label: "Label", cell: (k) => k.label || "—" },
          { label: "Kind", cell: (k) => KIND_LABELS[k.kind] },
          { label: "Merchant", cell: (k) => merchant(k.merchantId) },
          { label: "Configuration", cell: (k) => this.configName(k) },
          { label: "Last used", cell: (k) => (k.lastUsedAt ? timeEl(k.lastUsedAt) : "never") },
          {
            label: "Status",
            cell: (k) =>
              k.revokedAt
                ? h("span", { class: "badge status-failed" }, "revoked")
                : h("span", { class: "badge status-success" }, "active"),
          },
          {
            label: "Actions",
            cell: (k) => (k.revokedAt ? "" : confirmButton("Revoke", "Confirm revoke", () => this.revoke(k))),
          },
        ],
        keys,
        "No keys yet.",
      ),
    );
  }

  async revoke(k) {
    try {
      const { revokeApiKey } = await gql(REVOKE(), { id: k.id });
      this.apiKeys = this.apiKeys.map((x) => (x.id === k.id ? revokeApiKey : x));
      this.renderList();
      announce(`Revoked key ${k.prefix}…`);
    } catch (err) {
      announce(err.message, "error");
    }
  }

  renderForm() {
    if (this.merchants.length === 0)
      return fill(
        this.querySelector(".form-slot"),
        h("p", {}, "Create a merchant first: ", h("a", { href: "#/merchants" }, "Merchants"), "."),
      );
    const form = editorForm({
      title: "New API key",
      submitLabel: "Create key",
      fields: [
        { name: "merchantId", label: "Merchant", required: true, options: merchantOptions(this.merchants) },
        {
          name: "kind",
          label: "Kind",
          required: true,
          options: Object.entries(KIND_LABELS).map(([value, label]) => ({ value, label })),
        },
        { name: "configId", label: "Configuration", options: [], help: "" },
        { name: "label", label: "Label", help: "Optional: where the key is used" },
      ],
      onSubmit: async (v) => {
        const input = { merchantId: v.merchantId, kind: v.kind, label: v.label || undefined };
        const target = targetOf(v.kind);
        if (target) input[target.field] = v.configId || undefined;
        try {
          const { createApiKey } = await gql(CREATE(), { input });
          this.apiKeys = [...this.apiKeys, createApiKey.key];
          this.renderList();
          fill(
            this.querySelector(".created-slot"),
            secretOnce(
              `New ${KIND_LABELS[v.kind]} key`,
              createApiKey.apiKey,
              "Copy it now: this is the only time the full key is shown. Send it as x-api-key with the matching x-auth-type.",
            ),
          );
          this.querySelector(".created-slot code").focus();
          form.reset();
          this.syncConfigs(form);
        } catch (err) {
          // The configuration's field name on the server is per kind; it is one select here.
          for (const d of err.details ?? []) if (targets().some((t) => t.field === d.field)) d.field = "configId";
          throw err;
        }
      },
    });
    form.addEventListener("change", (ev) => {
      if (ev.target.name === "merchantId" || ev.target.name === "kind") this.syncConfigs(form);
    });
    fill(this.querySelector(".form-slot"), form);
    this.syncConfigs(form);
  }

  /** The configuration select lists what fits the chosen merchant and kind (none for generic QR keys). */
  syncConfigs(form) {
    const merchantId = control(form, "merchantId").value;
    const kind = control(form, "kind").value;
    const select = control(form, "configId");
    const wrap = form.querySelector('[data-field="configId"]');
    const target = targetOf(kind);
    const list = target ? this.targetRows[target.query] : [];
    const mine = list.filter((c) => c.merchantId === merchantId);
    wrap.hidden = target === null;
    select.required = target !== null;
    fill(
      select,
      mine.map((c) => h("option", { value: c.id }, c.name)),
    );
    const what = target?.what ?? "configuration";
    wrap
      .querySelector(".help")
      .replaceChildren(
        mine.length > 0
          ? `The ${what} this key is bound to`
          : h("span", {}, `This merchant has no ${what} yet: `, h("a", { href: "#/configs" }, "create one"), "."),
      );
  }
}

customElements.define("pqr-keys", KeysPage);
