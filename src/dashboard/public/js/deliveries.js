// The webhook delivery log as a table (webhooks page and transaction detail): state, status, latency, error, redeliver.
import { gql } from "./api.js";
import { announce, h, shortId, table, timeEl } from "./dom.js";

export const DELIVERY_FIELDS =
  "id eventId eventType transactionId endpointId state attempts nextAttemptAt lastStatusCode lastError " +
  "deliveredAt createdAt redeliveredAt requestBody log { attemptedAt statusCode latencyMs error " +
  "requestHeaders responseHeaders responseBody responseTruncated }";
const REDELIVER = `mutation($eventId: ID!, $endpointId: ID!) { redeliverWebhook(eventId: $eventId, endpointId: $endpointId) { id state } }`;

/** What one attempt sent and got: headers both ways, the body sent, and the first 4 KB of the answer. */
function exchange(d, a) {
  const block = (label, text) => [h("dt", {}, label), h("dd", {}, h("pre", { class: "wrap" }, text))];
  return h(
    "dl",
    { class: "exchange" },
    a.requestHeaders ? block("Request headers", a.requestHeaders) : [],
    block("Request body", d.requestBody),
    block(
      "Response status",
      a.statusCode === null ? `no answer${a.error ? ` (${a.error})` : ""}` : String(a.statusCode),
    ),
    a.responseHeaders ? block("Response headers", a.responseHeaders) : [],
    a.responseBody !== null
      ? block(
          a.responseTruncated ? "Response body (first 4 KB)" : "Response body",
          a.responseBody === "" ? "(empty)" : a.responseBody,
        )
      : [],
  );
}

function attempts(d) {
  if (d.log.length === 0) return "none yet";
  return h(
    "details",
    {},
    h("summary", {}, `${d.attempts} attempt${d.attempts === 1 ? "" : "s"}`),
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
      { label: "Attempts", cell: attempts },
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
              class: "secondary",
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
  );
}
