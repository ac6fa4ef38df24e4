// One transaction: its facts, the QR as an image, the event timeline, webhook deliveries and, in demo
// mode, buttons that play the payer through the simulators. Follows `transactionUpdated` while open.
import { dashboardConfig, gql, sim, subscribe } from "../api.js";
import { announce, AREA_LABELS, confirmButton, fill, fmtAmount, h, statusBadge, timeEl } from "../dom.js";
import { DELIVERY_FIELDS, deliveriesTable } from "../deliveries.js";
import { areaFacts, areaSelection } from "../area-fields.js";

// The areas' fields are known once config.json is read (area-fields.js): the query is made then.
const query = () => `query($id: ID!) { transaction(id: $id) {
  id area status amount currency merchantId apiKeyId ${areaSelection()} qr meta metaJson
  expiredAt createdAt updatedAt completedAt qrImage events { id type createdAt transaction { status } }
    mismatch { fields expected { amount currency account } arrived { amount currency account } reference source detectedAt
      late resolution { action by at note } }
    webhookDeliveries(first: 50) { ${DELIVERY_FIELDS} } } }`;
const FOLLOW = `subscription($id: ID!) { transactionUpdated(transactionId: $id) { id type } }`;
const TERMINAL = ["SUCCESS", "FAILED", "EXPIRED"];
const RESOLVE = `mutation($input: ResolveMismatchInput!) { resolveMismatch(input: $input) { id status } }`;
const RECHECK = `mutation($id: ID!) { recheckPayment(transactionId: $id) {
  outcome detail recorded windowEndsAt transaction { id status latePayment } } }`;
/** The states the upstream may still have news of (docs/decisions/0192-recheck-payment.md). */
const RECHECKABLE = ["PENDING", "CHECKOUT", "EXPIRED"];
const OUTCOMES = {
  PAID: "Paid",
  MISMATCHED: "Paid, but not what was asked: held",
  FAILED: "Failed",
  NOT_PAID: "Not paid",
  UPSTREAM_UNAVAILABLE: "The upstream did not answer",
};
const facts = (f) =>
  `${f.amount === null ? "?" : fmtAmount(f.amount, f.currency)}${f.account ? ` to ${f.account}` : ""}`;

/**
 * What the simulators can do to a transaction of its area (docs/simulator-controls.md): config.json's `controls`,
 * declared by the demo module's part of each area. A control's body takes the transaction's fields it names.
 */
function controlsFor(config, tx) {
  return (config.controls?.[tx.area] ?? []).map((c) => [
    c.label,
    c.path,
    { ...Object.fromEntries(Object.entries(c.fields).map(([field, from]) => [field, tx[from]])), ...(c.fixed ?? {}) },
  ]);
}

class TransactionDetail extends HTMLElement {
  async connectedCallback() {
    this.txId = this.getAttribute("tx-id");
    this.heading = h("h1", { tabindex: "-1" }, "Transaction");
    this.body = h("div", { class: "detail" }, h("p", {}, "Loading…"));
    fill(
      this,
      h("p", { class: "back" }, h("a", { href: "#/transactions" }, "← All transactions")),
      this.heading,
      this.body,
    );
    this.config = await dashboardConfig();
    await this.reload();
    this.stop = subscribe(
      FOLLOW,
      { id: this.txId },
      {
        next: () => {
          void this.reload();
          // Webhook deliveries are attempted just after the event commits: look again shortly.
          clearTimeout(this.later);
          this.later = setTimeout(() => void this.reload(), 1500);
        },
        error: () => undefined,
      },
    );
  }

  disconnectedCallback() {
    this.stop?.();
    clearTimeout(this.later);
    clearTimeout(this.pendingLater);
  }

  /**
   * A delivery still pending is being sent or waits for its retry, and no event says when it is done: look again
   * after 1.5 s, then 3, 6 and every 10 s, until none is pending. A slow receiver or a busy worker must not leave
   * a sent delivery shown as pending. (Its nextAttemptAt cannot say: while an attempt is out it is the claim's end.)
   * docs/decisions/0261-detail-looks-again-while-a-delivery-is-pending.md
   */
  followPending(deliveries) {
    if (!deliveries.some((d) => d.state === "pending")) {
      this.pendingLooks = 0;
      return;
    }
    if (this.pendingLater !== undefined) return;
    this.pendingLooks = (this.pendingLooks ?? 0) + 1;
    const wait = Math.min(10_000, 1500 * 2 ** (this.pendingLooks - 1));
    this.pendingLater = setTimeout(() => {
      this.pendingLater = undefined;
      void this.reload();
    }, wait);
  }

  async reload() {
    try {
      const { transaction } = await gql(query(), { id: this.txId });
      if (!this.isConnected) return;
      if (transaction === null) return fill(this.body, h("p", { class: "form-error" }, "No such transaction."));
      // A look that finds nothing new leaves the page as it is (the reader may be selecting or copying in it).
      const seen = JSON.stringify(transaction);
      if (seen !== this.shown || this.querySelector(".refresh-error")) this.renderKeepingOpen(transaction);
      this.shown = seen;
      this.followPending(transaction.webhookDeliveries);
    } catch (err) {
      // Keep what is already shown (a refresh that fails must not wipe the timeline); say why it is stale.
      if (this.shown === undefined) return fill(this.body, h("p", { class: "form-error" }, err.message));
      this.querySelector(".refresh-error")?.remove();
      this.body.prepend(
        h("p", { class: "form-error refresh-error", role: "status" }, `Could not refresh: ${err.message}`),
      );
      clearTimeout(this.later);
      this.later = setTimeout(() => void this.reload(), 2000);
    }
  }

  /** Renders again, with the attempt logs and attempts the reader had opened still open. */
  renderKeepingOpen(tx) {
    const open = new Set(Array.from(this.body.querySelectorAll("details[open] > summary"), (x) => x.textContent));
    this.render(tx);
    for (const summary of this.body.querySelectorAll("details > summary"))
      if (open.has(summary.textContent)) summary.parentElement.open = true;
  }

  render(tx) {
    fill(this.heading, `${AREA_LABELS[tx.area]} transaction `, statusBadge(tx.status));
    const fact = (label, value) =>
      value === null || value === undefined || value === "" ? null : [h("dt", {}, label), h("dd", {}, value)];
    fill(
      this.body,
      this.heldPayment(tx),
      this.recheck(tx),
      h(
        "div",
        { class: "detail-grid" },
        h(
          "section",
          { class: "facts", "aria-labelledby": "facts-h" },
          h("h2", { id: "facts-h" }, "Details"),
          h(
            "dl",
            {},
            fact("Transaction ID", h("code", { class: "wrap" }, tx.id)),
            fact("Status", h("span", { class: "tx-status", dataset: { status: tx.status } }, tx.status)),
            fact("Amount", fmtAmount(tx.amount, tx.currency)),
            ...areaFacts(tx).map(([label, value]) => fact(label, value)),
            fact("Created", timeEl(tx.createdAt)),
            fact("Expires", timeEl(tx.expiredAt)),
            fact("Completed", tx.completedAt && timeEl(tx.completedAt)),
            fact("API key", h("code", {}, tx.apiKeyId)),
            fact("Merchant", h("code", {}, tx.merchantId)),
            // metaJson: the text as sent (a browser's JSON.parse would move keys like "2" first).
            fact("Meta", Object.keys(tx.meta).length ? h("code", { class: "wrap" }, tx.metaJson) : null),
          ),
        ),
        h(
          "section",
          { class: "qr", "aria-labelledby": "qr-h" },
          h("h2", { id: "qr-h" }, "QR code"),
          tx.qrImage
            ? h("img", {
                src: tx.qrImage,
                alt: `KHQR code for ${fmtAmount(tx.amount, tx.currency)}`,
                width: "256",
                height: "256",
              })
            : h("p", {}, "No QR yet."),
          tx.qr ? h("details", {}, h("summary", {}, "QR payload"), h("code", { class: "wrap" }, tx.qr)) : null,
          this.controls(tx),
        ),
        h(
          "section",
          { class: "timeline", "aria-labelledby": "tl-h" },
          h("h2", { id: "tl-h" }, "Timeline"),
          h(
            "ol",
            {},
            tx.events.map((e) =>
              h(
                "li",
                { dataset: { type: e.type } },
                h("strong", {}, e.type),
                " ",
                statusBadge(e.transaction.status),
                h("br"),
                timeEl(e.createdAt),
              ),
            ),
          ),
        ),
      ),
      h(
        "section",
        { class: "deliveries", "aria-labelledby": "dl-h" },
        h("h2", { id: "dl-h" }, "Webhook deliveries"),
        deliveriesTable(tx.webhookDeliveries, {
          caption: "Deliveries of this transaction's events",
          onChange: () => setTimeout(() => void this.reload(), 1500),
        }),
      ),
    );
  }

  /**
   * A payment that is not what was asked (docs/decisions/0183-held-payments.md): what was asked and what arrived, and
   * the operator's two ways out — accept it as paid (SUCCESS) or mark it failed (FAILED) — each confirmed by a second
   * press; once resolved, who resolved it and when.
   */
  heldPayment(tx) {
    const m = tx.mismatch;
    if (!m) return null;
    const row = (label, ...value) => [h("dt", {}, label), h("dd", {}, ...value)];
    const resolved = m.resolution;
    return h(
      "section",
      { class: "held-payment", "aria-labelledby": "held-h", role: resolved ? null : "alert" },
      h("h2", { id: "held-h" }, resolved ? "Payment that was not what was asked" : "Held: not what was asked"),
      h(
        "dl",
        {},
        row("Differs", m.fields.join(", ")),
        row("Asked", facts(m.expected)),
        row("Arrived", facts(m.arrived)),
        row("Reported by", m.source),
        m.reference ? row("Reference", h("code", { class: "wrap" }, m.reference)) : null,
        row("Seen", timeEl(m.detectedAt)),
        m.late ? row("Late", "sent after the expiry, or seen after it") : null,
        resolved
          ? row(
              "Resolved",
              `${resolved.action === "accepted" ? "accepted as paid" : "marked failed"} by ${resolved.by}, `,
              timeEl(resolved.at),
              resolved.note ? ` — ${resolved.note}` : "",
            )
          : null,
      ),
      // Kept across refreshes (each event re-renders the page): a note being typed, a button armed for its second press.
      resolved ? null : (this.resolveEl ??= this.resolveControls(tx)),
    );
  }

  resolveControls(tx) {
    const note = h("input", { id: "held-note", name: "note", maxlength: "500", autocomplete: "off" });
    const resolve = async (action) => {
      try {
        await gql(RESOLVE, {
          input: { transactionId: tx.id, action, by: "dashboard", note: note.value.trim() || null },
        });
        announce(action === "ACCEPT_AS_PAID" ? "Accepted as paid." : "Marked failed.");
        await this.reload();
      } catch (err) {
        announce(err.message, "error");
      }
    };
    const accept = confirmButton("Accept as paid", "Confirm: accept as paid", () => resolve("ACCEPT_AS_PAID"));
    accept.classList.replace("danger", "primary");
    accept.dataset.resolve = "accept";
    const fail = confirmButton("Mark failed", "Confirm: mark failed", () => resolve("MARK_FAILED"));
    fail.dataset.resolve = "fail";
    return h(
      "div",
      { class: "resolve" },
      h("p", { class: "help" }, "No monitor completes or expires it: decide, and the integrator gets the event."),
      h("div", { class: "field" }, h("label", { for: "held-note" }, "Note (kept with the decision)"), note),
      h("div", { class: "actions" }, accept, fail),
    );
  }

  /**
   * "Recheck with upstream" on a payment still waiting or expired: asks the upstream again (recheckPayment) and shows
   * what it said. Kept across refreshes (each event re-renders the page), so the answer stays once the payment is
   * recorded and the button is gone.
   */
  recheck(tx) {
    const held = tx.mismatch && !tx.mismatch.resolution;
    const offered = RECHECKABLE.includes(tx.status) && !held;
    if (!offered && !this.recheckEl) return null;
    this.recheckEl ??= this.recheckSection(tx);
    this.recheckButton.hidden = !offered;
    return this.recheckEl;
  }

  recheckSection(tx) {
    const result = h("p", { class: "recheck-result", role: "status" });
    const button = h(
      "button",
      {
        type: "button",
        class: "primary",
        dataset: { recheck: "" },
        onclick: async () => {
          button.disabled = true;
          delete result.dataset.outcome;
          fill(result, "Asking the upstream…");
          try {
            const { recheckPayment: r } = await gql(RECHECK, { id: tx.id });
            result.dataset.outcome = r.outcome;
            fill(
              result,
              h("strong", {}, OUTCOMES[r.outcome] ?? r.outcome),
              ` — ${r.detail}. `,
              r.recorded ? "Recorded." : "Nothing recorded.",
              RECHECKABLE.includes(r.transaction.status)
                ? [" Rechecks possible until ", timeEl(r.windowEndsAt), "."]
                : null,
            );
            await this.reload();
          } catch (err) {
            result.dataset.outcome = "error";
            fill(result, err.message);
          } finally {
            button.disabled = false;
          }
        },
      },
      "Recheck with upstream",
    );
    this.recheckButton = button;
    return h(
      "section",
      { class: "recheck", "aria-labelledby": "recheck-h" },
      h("h2", { id: "recheck-h" }, "Upstream"),
      h(
        "p",
        { class: "help" },
        "Asks the upstream again about this payment. A payment it reports is recorded (as a late payment if the " +
          "transaction had expired), with the usual webhook.",
      ),
      h("div", { class: "actions" }, button),
      result,
    );
  }

  controls(tx) {
    // A held payment is the operator's to decide, not the payer's to play again.
    const held = tx.mismatch && !tx.mismatch.resolution;
    if (!this.config.simulators || TERMINAL.includes(tx.status) || held) return null;
    const actions = controlsFor(this.config, tx);
    return h(
      "section",
      { class: "sim-controls", "aria-labelledby": "sim-h" },
      h("h3", { id: "sim-h" }, "Demo controls"),
      h(
        "p",
        { class: "help" },
        "Play the payer through the built-in simulators; the service notices through its normal monitoring.",
      ),
      h(
        "div",
        { class: "actions" },
        actions.map(([label, path, body]) =>
          h(
            "button",
            {
              type: "button",
              class: label === "Break" || label === "Decline" ? "danger" : "primary",
              dataset: { sim: label.toLowerCase() },
              onclick: async (ev) => {
                const btn = ev.currentTarget;
                btn.disabled = true;
                try {
                  await sim(path, body);
                  announce(`${label} sent; waiting for the service to notice…`);
                } catch (err) {
                  announce(err.message, "error");
                  btn.disabled = false;
                }
              },
            },
            label,
          ),
        ),
      ),
    );
  }
}

customElements.define("pqr-transaction", TransactionDetail);
