// Webhook endpoints per API key: add, enable/disable, rotate the signing secret, the delivery log, redeliver.
import { dashboardConfig, gql } from "../api.js";
import { announce, fill, fmtTime, h, KIND_LABELS, secretOnce, table, timeEl } from "../dom.js";
import { zoneName } from "../zone.js";
import { editorForm } from "../form.js";
import { DELIVERY_FIELDS, deliveriesTable } from "../deliveries.js";

const EP = "id apiKeyId url events enabled disabledReason failingSince previousSecretExpiresAt createdAt";
const LOAD = `{ apiKeys { id prefix label kind revokedAt } webhookEndpoints { ${EP} } }`;
// The server validates these too (transactions/transaction-event.entity.ts EVENT_TYPES).
const EVENT_KINDS = [
  "payment.created",
  "payment.scanned",
  "payment.completed",
  "payment.failed",
  "payment.expired",
  "transaction.updated",
];

class WebhooksPage extends HTMLElement {
  async connectedCallback() {
    fill(
      this,
      h("h1", { tabindex: "-1" }, "Webhooks"),
      h(
        "p",
        { class: "lead" },
        "Each API key may have endpoints that receive its transactions' events, signed with x-signature: " +
          "v1=HMAC-SHA256(timestamp.body). Failed deliveries are retried with backoff for 24 hours.",
      ),
      h("div", { class: "created-slot", "aria-live": "polite" }),
      h("div", { class: "list" }),
      h("div", { class: "log-slot" }),
      h("div", { class: "form-slot" }),
    );
    try {
      const [data, config] = await Promise.all([gql(LOAD), dashboardConfig()]);
      Object.assign(this, data, { config });
      this.renderList();
      this.renderForm();
    } catch (err) {
      fill(this.querySelector(".list"), h("p", { class: "form-error" }, err.message));
    }
  }

  keyName(id) {
    const k = this.apiKeys.find((x) => x.id === id);
    return k ? `${k.prefix}… ${k.label || KIND_LABELS[k.kind]}` : id;
  }

  renderList() {
    fill(
      this.querySelector(".list"),
      table(
        "Webhook endpoints",
        [
          { label: "URL", cell: (e) => h("code", { class: "wrap" }, e.url) },
          { label: "API key", cell: (e) => this.keyName(e.apiKeyId) },
          { label: "Events", cell: (e) => (e.events.length ? e.events.join(", ") : "all") },
          {
            label: "State",
            cell: (e) =>
              e.enabled
                ? h("span", { class: "badge status-success" }, "enabled")
                : h("span", { class: "badge status-failed", title: e.disabledReason ?? "" }, "disabled"),
          },
          { label: "Failing since", cell: (e) => timeEl(e.failingSince) },
          { label: "Created", cell: (e) => timeEl(e.createdAt) },
          {
            label: "Actions",
            cell: (e) =>
              h(
                "div",
                { class: "row-actions" },
                h(
                  "button",
                  { type: "button", class: "secondary", onclick: () => this.toggle(e) },
                  e.enabled ? "Disable" : "Enable",
                ),
                h("button", { type: "button", class: "secondary", onclick: () => this.rotate(e) }, "Rotate secret"),
                h("button", { type: "button", class: "secondary", onclick: () => this.showLog(e) }, "Delivery log"),
              ),
          },
        ],
        this.webhookEndpoints,
        "No endpoints yet.",
      ),
    );
  }

  replace(endpoint) {
    this.webhookEndpoints = this.webhookEndpoints.map((e) => (e.id === endpoint.id ? endpoint : e));
    this.renderList();
  }

  async toggle(e) {
    try {
      const { updateWebhookEndpoint } = await gql(
        `mutation($id: ID!, $input: WebhookEndpointInput!) { updateWebhookEndpoint(id: $id, input: $input) { ${EP} } }`,
        { id: e.id, input: { enabled: !e.enabled } },
      );
      this.replace(updateWebhookEndpoint);
      announce(`${updateWebhookEndpoint.enabled ? "Enabled" : "Disabled"} ${e.url}`);
    } catch (err) {
      announce(err.message, "error");
    }
  }

  async rotate(e) {
    try {
      const { rotateWebhookSecret } = await gql(
        `mutation($id: ID!) { rotateWebhookSecret(id: $id) { secret endpoint { ${EP} } } }`,
        { id: e.id },
      );
      this.replace(rotateWebhookSecret.endpoint);
      const until = `${fmtTime(rotateWebhookSecret.endpoint.previousSecretExpiresAt ?? new Date().toISOString())} ${zoneName()} time`;
      fill(
        this.querySelector(".created-slot"),
        secretOnce(
          `New signing secret for ${e.url}`,
          rotateWebhookSecret.secret,
          `Shown only now. The previous secret keeps signing too (a second v1= value) until ${until}, so ` +
            `receivers can switch without losing events.`,
        ),
      );
      this.querySelector(".created-slot code").focus();
    } catch (err) {
      announce(err.message, "error");
    }
  }

  async showLog(e) {
    const slot = this.querySelector(".log-slot");
    const load = async () => {
      const { webhookDeliveries } = await gql(
        `query($id: ID!) { webhookDeliveries(endpointId: $id, first: 50) { ${DELIVERY_FIELDS} } }`,
        { id: e.id },
      );
      fill(
        slot,
        h(
          "section",
          { class: "delivery-log", "aria-labelledby": "log-h" },
          h(
            "div",
            { class: "section-head" },
            h("h2", { id: "log-h", tabindex: "-1" }, `Delivery log: ${e.url}`),
            h("button", { type: "button", class: "secondary", onclick: () => load() }, "Refresh"),
          ),
          deliveriesTable(webhookDeliveries, { onChange: () => setTimeout(load, 1500) }),
        ),
      );
    };
    try {
      await load();
      slot.querySelector("h2").focus();
    } catch (err) {
      announce(err.message, "error");
    }
  }

  renderForm() {
    const keys = this.apiKeys.filter((k) => !k.revokedAt);
    if (keys.length === 0)
      return fill(
        this.querySelector(".form-slot"),
        h("p", {}, "Create an API key first: ", h("a", { href: "#/keys" }, "API keys"), "."),
      );
    const form = editorForm({
      title: "Add an endpoint",
      submitLabel: "Add endpoint",
      fields: [
        {
          name: "apiKeyId",
          label: "API key",
          required: true,
          options: keys.map((k) => ({ value: k.id, label: this.keyName(k.id) })),
        },
        {
          name: "url",
          label: "URL",
          type: "url",
          required: true,
          placeholder: "https://example.com/webhooks/payments",
          help: this.config.simulators
            ? `Demo: the built-in inbox is ${this.config.inboxUrl}`
            : "Where events are POSTed",
        },
      ],
      onSubmit: async (v) => {
        const input = { apiKeyId: v.apiKeyId, url: v.url, events: v.events };
        const { createWebhookEndpoint } = await gql(
          `mutation($input: WebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { ${EP} } } }`,
          { input },
        );
        this.webhookEndpoints = [...this.webhookEndpoints, createWebhookEndpoint.endpoint];
        this.renderList();
        fill(
          this.querySelector(".created-slot"),
          secretOnce(
            `Signing secret for ${v.url}`,
            createWebhookEndpoint.secret,
            "Shown only now: your receiver verifies x-signature with it.",
          ),
        );
        this.querySelector(".created-slot code").focus();
        form.reset();
      },
    });
    form.querySelector(".fields").append(
      h(
        "fieldset",
        { class: "events" },
        h("legend", {}, "Events (none checked: all events)"),
        EVENT_KINDS.map((k) =>
          h("label", { class: "check" }, h("input", { type: "checkbox", name: "events", value: k }), ` ${k}`),
        ),
      ),
    );
    fill(this.querySelector(".form-slot"), form);
  }
}

customElements.define("pqr-webhooks", WebhooksPage);
