// The webhook delivery log as a table (webhooks page and transaction detail): state, status, latency, error, redeliver.
import { gql } from "./api.js";
import { announce, copyButton, fullRow, h, shortId, table, timeEl } from "./dom.js";

export const DELIVERY_FIELDS =
  "id eventId eventType transactionId endpointId state attempts nextAttemptAt lastStatusCode lastError " +
  "deliveredAt createdAt redeliveredAt requestBody log { attemptedAt statusCode latencyMs error " +
  "requestHeaders responseHeaders responseBody responseTruncated }";
const REDELIVER = `mutation($eventId: ID!, $endpointId: ID!) { redeliverWebhook(eventId: $eventId, endpointId: $endpointId) { id state } }`;

/**
 * What one attempt sent and got: headers both ways, the body sent, and the first 4 KB of the answer, each as
 * written, wrapped to the width and copyable whole.
 */
function exchange(d, a) {
  const block = (label, text) => [
    h("dt", {}, h("span", {}, label), copyButton(text, `Copy ${label.toLowerCase()}`)),
    h("dd", {}, h("pre", { class: "wrap", tabindex: "0" }, text)),
  ];
  return h(
    "dl",
    { class: "exchange" },
    a.requestHeaders ? block("Request headers", a.requestHeaders) : [],
    block("Request body", d.requestBody),
    [
      h("dt", {}, "Response status"),
      h("dd", {}, a.statusCode === null ? `no answer${a.error ? ` (${a.error})` : ""}` : String(a.statusCode)),
    ],
    a.responseHeaders ? block("Response headers", a.responseHeaders) : [],
    a.responseBody !== null
      ? block(
          a.responseTruncated ? "Response body (first 4 KB)" : "Response body",
          a.responseBody === "" ? "(empty)" : a.responseBody,
        )
      : [],
  );
}

const COLUMN_COUNT = 9;

/**
 * A delivery's attempts, in a row of the table's full width under the delivery's own: what each attempt sent and
 * got needs the width of the page, not of a column (docs/decisions/0254-the-dashboard-at-real-widths.md).
 */
function attemptsRow(d) {
  if (d.log.length === 0) return null;
  return fullRow(
    COLUMN_COUNT,
    "attempts-row",
    h(
      "details",
      { class: "attempts-log" },
      h(
        "summary",
        {},
        `${d.eventType}: ${d.attempts} attempt${d.attempts === 1 ? "" : "s"} — what was sent and received`,
      ),
      h(
        "ol",
        { class: "attempts" },
        d.log.map((a) =>
          h(
            "li",
            {},
            h(
              "details",
              { class: "attempt" },
              h(
                "summary",
                {},
                timeEl(a.attemptedAt),
                ` · ${a.statusCode ?? "no answer"} · ${a.latencyMs} ms`,
                a.error ? ` · ${a.error}` : "",
              ),
              exchange(d, a),
            ),
          ),
        ),
      ),
    ),
  );
}

/** onChange() is called after a redelivery was queued, so the caller can reload. */
export function deliveriesTable(deliveries, { caption = "Webhook deliveries, newest first", onChange } = {}) {
  return table(
    caption,
    [
      { label: "Event", cell: (d) => d.eventType },
      {
        label: "Transaction",
        cell: (d) => h("a", { href: `#/transactions/${d.transactionId}` }, shortId(d.transactionId)),
      },
      { label: "State", cell: (d) => h("span", { class: `badge delivery-${d.state}` }, d.state) },
      { label: "HTTP status", cell: (d) => (d.lastStatusCode === null ? "—" : String(d.lastStatusCode)) },
      { label: "Latency", cell: (d) => (d.log.length ? `${d.log.at(-1).latencyMs} ms` : "—") },
      { label: "Error", cell: (d) => d.lastError ?? "—" },
      { label: "Attempts", cell: (d) => (d.log.length === 0 ? "none yet" : String(d.attempts)) },
      {
        label: "Created",
        cell: (d) =>
          d.redeliveredAt
            ? h("span", {}, timeEl(d.createdAt), " · redelivered ", timeEl(d.redeliveredAt))
            : timeEl(d.createdAt),
      },
      {
        label: "Actions",
        cell: (d) =>
          h(
            "button",
            {
              type: "button",
              class: "secondary redeliver",
              "aria-label": `Redeliver ${d.eventType} to endpoint ${d.endpointId}`,
              onclick: async (ev) => {
                ev.currentTarget.disabled = true;
                try {
                  await gql(REDELIVER, { eventId: d.eventId, endpointId: d.endpointId });
                  announce(`Redelivery of ${d.eventType} queued`);
                  onChange?.();
                } catch (err) {
                  announce(err.message, "error");
                }
              },
            },
            "Redeliver",
          ),
      },
    ],
    deliveries,
    "No deliveries.",
    { after: attemptsRow },
  );
}
