// Upstream configurations: hosted-gateway accounts (for gateway keys) and payment-link pages (for gateway-link keys).
import { dashboardConfig, gql, sim } from "../api.js";
import { announce, CURRENCIES, fill, h, table, timeEl } from "../dom.js";
import { editorForm, merchantOptions } from "../form.js";
import { currencyCode } from "../money.js";

const LOAD = `{ merchants { id name } gatewayConfigs { id merchantId name upstreamMerchantId qrImageTemplate createdAt }
  gatewayQrImageTemplates { names defaultName } linkConfigs { id merchantId name url currency protocol protocolSetting
  expectedPayee expectedPayeeSource createdAt } linkPageProtocols { names defaultName } }`;
const GW = "id merchantId name upstreamMerchantId qrImageTemplate createdAt";
const LINK = "id merchantId name url currency protocol protocolSetting expectedPayee expectedPayeeSource createdAt";

class ConfigsPage extends HTMLElement {
  async connectedCallback() {
    fill(
      this,
      h("h1", { tabindex: "-1" }, "Configurations"),
      h(
        "p",
        { class: "lead" },
        "A hosted-gateway key is linked to a gateway configuration; a gateway-link key to a payment-link " +
          "configuration, which fixes its link URL and currency.",
      ),
      h(
        "section",
        { class: "gateway", "aria-labelledby": "gw-h" },
        h("h2", { id: "gw-h" }, "Hosted-gateway configurations"),
        h("div", { class: "list" }),
        h("div", { class: "form-slot" }),
      ),
      h(
        "section",
        { class: "link", "aria-labelledby": "link-h" },
        h("h2", { id: "link-h" }, "Payment-link configurations"),
        h("div", { class: "list" }),
        h("div", { class: "form-slot" }),
      ),
    );
    try {
      const [data, config] = await Promise.all([gql(LOAD), dashboardConfig()]);
      Object.assign(this, data, { config });
      this.merchantName = (id) => this.merchants.find((m) => m.id === id)?.name ?? id;
      this.renderGateway();
      this.renderLink();
    } catch (err) {
      fill(this.querySelector(".gateway .list"), h("p", { class: "form-error" }, err.message));
    }
  }

  noMerchants() {
    return h("p", {}, "Create a merchant first: ", h("a", { href: "#/merchants" }, "Merchants"), ".");
  }

  renderGateway(editing = null) {
    const section = this.querySelector(".gateway");
    fill(
      section.querySelector(".list"),
      table(
        "Hosted-gateway configurations",
        [
          { label: "Name", cell: (g) => g.name },
          { label: "Merchant", cell: (g) => this.merchantName(g.merchantId) },
          { label: "Gateway merchant ID", cell: (g) => h("code", {}, g.upstreamMerchantId) },
          { label: "QR image template", cell: (g) => h("code", {}, g.qrImageTemplate) },
          { label: "Created", cell: (g) => timeEl(g.createdAt) },
          {
            label: "Actions",
            cell: (g) =>
              h(
                "button",
                {
                  type: "button",
                  class: "secondary",
                  "aria-label": `Edit ${g.name}`,
                  onclick: () => this.renderGateway(g),
                },
                "Edit",
              ),
          },
        ],
        this.gatewayConfigs,
        "No gateway configurations yet.",
      ),
    );
    if (this.merchants.length === 0) return fill(section.querySelector(".form-slot"), this.noMerchants());
    const form = editorForm({
      title: editing ? `Edit ${editing.name}` : "New gateway configuration",
      submitLabel: editing ? "Save changes" : "Create configuration",
      fields: [
        editing
          ? null
          : { name: "merchantId", label: "Merchant", required: true, options: merchantOptions(this.merchants) },
        {
          name: "name",
          label: "Name",
          value: editing?.name,
          required: true,
          help: "For you: e.g. “Main shop, production”",
        },
        {
          name: "upstreamMerchantId",
          label: "Gateway merchant ID",
          value: editing?.upstreamMerchantId,
          required: true,
          help: "The merchant ID the gateway issued (at most 30 characters)",
        },
        {
          name: "qrImageTemplate",
          label: "QR image template",
          value: editing?.qrImageTemplate ?? this.gatewayQrImageTemplates.defaultName,
          required: true,
          options: this.gatewayQrImageTemplates.names.map((n) => ({ value: n, label: n })),
          help: "The gateway draws its QR image with this template (its QR API requires one)",
        },
        {
          name: "apiSecret",
          label: "Gateway API key",
          type: "password",
          required: !editing,
          autocomplete: "new-password",
          help: editing
            ? "Write-only: leave empty to keep the stored one"
            : "Write-only: stored encrypted, never shown again",
        },
      ].filter(Boolean),
      onCancel: editing ? () => this.renderGateway() : null,
      onSubmit: async (v) => {
        if (editing) {
          const input = {
            name: v.name,
            upstreamMerchantId: v.upstreamMerchantId,
            qrImageTemplate: v.qrImageTemplate,
            ...(v.apiSecret ? { apiSecret: v.apiSecret } : {}),
          };
          const { updateGatewayConfig } = await gql(
            `mutation($id: ID!, $input: GatewayConfigInput!) { updateGatewayConfig(id: $id, input: $input) { ${GW} } }`,
            { id: editing.id, input },
          );
          this.gatewayConfigs = this.gatewayConfigs.map((g) => (g.id === editing.id ? updateGatewayConfig : g));
          announce(`Saved ${updateGatewayConfig.name}`);
        } else {
          const { createGatewayConfig } = await gql(
            `mutation($input: GatewayConfigInput!) { createGatewayConfig(input: $input) { ${GW} } }`,
            { input: v },
          );
          this.gatewayConfigs = [...this.gatewayConfigs, createGatewayConfig];
          // Demo mode: let the built-in gateway simulator know this merchant, so keys on it work end to end.
          if (this.config.simulators)
            await sim("gateway/merchants", { merchantId: v.upstreamMerchantId, apiKey: v.apiSecret }).catch(
              () => undefined,
            );
          announce(`Created gateway configuration ${createGatewayConfig.name}`);
        }
        this.renderGateway();
      },
    });
    fill(section.querySelector(".form-slot"), form);
    if (editing) form.querySelector("input")?.focus();
  }

  renderLink(editing = null) {
    const section = this.querySelector(".link");
    fill(
      section.querySelector(".list"),
      table(
        "Payment-link configurations",
        [
          { label: "Name", cell: (l) => l.name },
          { label: "Merchant", cell: (l) => this.merchantName(l.merchantId) },
          { label: "Link URL", cell: (l) => h("code", { class: "wrap" }, l.url) },
          { label: "Currency", cell: (l) => `${l.currency} — ${currencyCode(l.currency) ?? "?"}` },
          {
            label: "Page adapter",
            cell: (l) => (l.protocolSetting === null ? `${l.protocol} (service default)` : l.protocol),
          },
          { label: "Payee", cell: (l) => payeeCell(l) },
          { label: "Created", cell: (l) => timeEl(l.createdAt) },
          {
            label: "Actions",
            cell: (l) =>
              h(
                "button",
                {
                  type: "button",
                  class: "secondary",
                  "aria-label": `Edit ${l.name}`,
                  onclick: () => this.renderLink(l),
                },
                "Edit",
              ),
          },
        ],
        this.linkConfigs,
        "No payment-link configurations yet.",
      ),
    );
    if (this.merchants.length === 0) return fill(section.querySelector(".form-slot"), this.noMerchants());
    const simHint = this.config.simulators
      ? ` Demo: the built-in PayWay twin's links are ${this.config.linkSimulatorUrl}ABAPAYDEMO01 (KHR) and ` +
        `…/ABAPAYDEMOUSD (USD)`
      : "";
    const form = editorForm({
      title: editing ? `Edit ${editing.name}` : "New payment-link configuration",
      submitLabel: editing ? "Save changes" : "Create configuration",
      fields: [
        editing
          ? null
          : { name: "merchantId", label: "Merchant", required: true, options: merchantOptions(this.merchants) },
        { name: "name", label: "Name", value: editing?.name, required: true },
        {
          name: "url",
          label: "Payment-link URL",
          type: "url",
          value: editing?.url,
          required: true,
          help: `The hosted payment-link page; callers can never override it.${simHint}`,
        },
        {
          name: "currency",
          label: "Currency",
          value: String(editing?.currency ?? 116),
          required: true,
          options: CURRENCIES,
          help: "Every QR of keys on this link must use this currency",
        },
        {
          name: "protocol",
          label: "Page adapter",
          value: editing?.protocolSetting ?? "",
          options: [
            { value: "", label: `Service default (${this.linkPageProtocols.defaultName})` },
            ...this.linkPageProtocols.names.map((n) => ({ value: n, label: n })),
          ],
          help: "How the page is driven: payway, for an ABA PayWay link (https://link.payway.com.kh/…)",
        },
        {
          name: "expectedPayee",
          label: "Payee account",
          value: editing?.expectedPayee ?? "",
          help:
            "The KHQR account (name@bank) every QR of this link must pay; a QR payable to another is refused. " +
            "Empty: the link's next QR records its payee, shown here to be checked",
        },
      ].filter(Boolean),
      onCancel: editing ? () => this.renderLink() : null,
      onSubmit: async (v) => {
        const payee = v.expectedPayee.trim();
        const input = {
          ...v,
          currency: Number(v.currency),
          protocol: v.protocol === "" ? null : v.protocol,
          expectedPayee: payee === "" ? null : payee,
        };
        // Unchanged, it is not sent: a payee recorded from the first QR stays marked as such.
        if (editing && payee === (editing.expectedPayee ?? "")) delete input.expectedPayee;
        if (editing) {
          const { updateLinkConfig } = await gql(
            `mutation($id: ID!, $input: LinkConfigInput!) { updateLinkConfig(id: $id, input: $input) { ${LINK} } }`,
            { id: editing.id, input },
          );
          this.linkConfigs = this.linkConfigs.map((l) => (l.id === editing.id ? updateLinkConfig : l));
          announce(`Saved ${updateLinkConfig.name}`);
        } else {
          const { createLinkConfig } = await gql(
            `mutation($input: LinkConfigInput!) { createLinkConfig(input: $input) { ${LINK} } }`,
            { input },
          );
          this.linkConfigs = [...this.linkConfigs, createLinkConfig];
          announce(`Created payment-link configuration ${createLinkConfig.name}`);
        }
        this.renderLink();
      },
    });
    fill(section.querySelector(".form-slot"), form);
    if (editing) form.querySelector("input")?.focus();
  }
}

/** The payee a link expects, and whether the operator set it or its first QR did (to be checked). */
function payeeCell(l) {
  if (l.expectedPayee === null) return "(recorded from the next QR)";
  return l.expectedPayeeSource === "first-qr"
    ? h("span", {}, h("code", {}, l.expectedPayee), " (from its first QR: check it)")
    : h("code", {}, l.expectedPayee);
}

customElements.define("pqr-configs", ConfigsPage);
