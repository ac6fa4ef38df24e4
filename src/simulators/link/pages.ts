// HTML of the simulated hosted payment-link page and its receipt page. The page is plain HTML
// with one inline script (no framework), written like the real thing: it talks only to its own
// API and keeps its state in the DOM, so a browser automation has to drive it as a visitor would.

import type { LinkClient } from "./client-store.js";

export interface LinkPageConfig {
  slug: string;
  /** ISO letters shown to the visitor and sent to the API. */
  currency: "KHR" | "USD";
  apiBase: string;
  pollMs: number;
  /** Prefilled amount (a fixed-amount link), or "" for a visitor-entered amount. */
  amount: string;
  /** Set when the page is reopened for an existing client (resume). */
  clientId: string | null;
  /**
   * Other sites the page pulls in, as a real hosted page does (analytics, a CDN, a chat widget): for each
   * base URL the page loads a script and an iframe, fetches, sends a beacon, opens a WebSocket and starts a
   * worker that fetches. Tests use it to play a page that reaches beyond its own origin. Default none.
   */
  embeds?: string[];
  /**
   * The page keeps its client in localStorage and, opened again in the same browser, goes back to that
   * payment instead of offering a new one (`?remember=1`), as some hosted pages do. Default off.
   */
  remember?: boolean;
}

// The script is kept as a plain string so it runs as written in any browser; `cfg` is injected
// as JSON in a non-executable script tag.
const PAGE_SCRIPT = String.raw`
(function () {
  "use strict";
  var cfg = JSON.parse(document.getElementById("link-config").textContent);
  var form = document.getElementById("pay-form");
  var amountInput = document.getElementById("amount");
  var payButton = document.getElementById("pay-button");
  var errorBox = document.getElementById("error");
  var statusBox = document.getElementById("status");
  var qrBox = document.getElementById("qr");
  var receiptLink = document.getElementById("receipt");
  var clientId = null;
  var labels = { request_qr: "Scan the KHQR with your banking app", scanned: "Scanned, confirm in your app", approved: "Paid, thank you" };

  function requestId() {
    var bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return "rq_" + Array.prototype.map.call(bytes, function (b) { return b.toString(16).padStart(2, "0"); }).join("");
  }
  function setError(message) { errorBox.textContent = message || ""; errorBox.hidden = !message; }
  function api(path, body) {
    return fetch(cfg.apiBase + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      .then(function (res) {
        return res.json().catch(function () { return null; }).then(function (json) {
          if (!res.ok) throw new Error((json && json.error && json.error.message) || ("HTTP " + res.status));
          return json;
        });
      });
  }
  function showAction(action, receiptUrl) {
    statusBox.dataset.action = action;
    statusBox.textContent = labels[action] || action;
    if (action === "approved" && receiptUrl) { receiptLink.href = receiptUrl; receiptLink.hidden = false; }
  }
  function startPolling(session) {
    clientId = session.clientId;
    qrBox.textContent = session.qr;
    document.getElementById("pay-view").hidden = false;
    form.hidden = true;
    // A reload (or a monitor that lost its browser) comes back to this same payment.
    var here = new URL(location.href);
    here.searchParams.set("clientId", clientId);
    history.replaceState(null, "", here.toString());
    if (cfg.remember) localStorage.setItem("sim-link-client", clientId);
    showAction(session.action || "request_qr");
    setTimeout(poll, cfg.pollMs);
  }
  function poll() {
    api("/status", { clientId: clientId, requestId: requestId() })
      .then(function (st) {
        setError("");
        showAction(st.action, st.receiptUrl);
        // An approval may come before its receipt: the page polls on until the receipt is there.
        if (st.action !== "approved" || !st.receiptUrl) setTimeout(poll, cfg.pollMs);
      })
      .catch(function (err) {
        setError("Connection problem: " + err.message);
        setTimeout(poll, cfg.pollMs);
      });
  }
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    setError("");
    payButton.disabled = true;
    api("/request_qr", { slug: cfg.slug, amount: amountInput.value.trim(), currency: cfg.currency, requestId: requestId() })
      .then(startPolling)
      .catch(function (err) { setError(err.message); payButton.disabled = false; });
  });
  (cfg.embeds || []).forEach(function (base) {
    var attempt = function (f) { try { f(); } catch (e) { /* a third party never breaks the page */ } };
    attempt(function () { fetch(base + "/fetch", { mode: "no-cors" }).catch(function () {}); });
    attempt(function () { navigator.sendBeacon(base + "/beacon", "x"); });
    attempt(function () { var ws = new WebSocket(base.replace(/^http/, "ws") + "/ws"); ws.onerror = function () {}; });
    attempt(function () {
      var src = "fetch(" + JSON.stringify(base + "/worker") + ", { mode: 'no-cors' }).catch(function () {});";
      new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })));
    });
  });
  var remembered = cfg.remember ? localStorage.getItem("sim-link-client") : null;
  if (cfg.clientId || remembered) {
    form.hidden = true;
    api("/resume", { clientId: cfg.clientId || remembered, requestId: requestId() })
      .then(startPolling)
      .catch(function (err) { setError(err.message); });
  }
})();
`;

export function renderLinkPage(cfg: LinkPageConfig): string {
  const configJson = JSON.stringify(cfg).replace(/</g, "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay ${escapeHtml(cfg.slug)} with KHQR</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 2rem auto; padding: 0 1rem; }
#qr { display: block; word-break: break-all; padding: .75rem; border: 1px solid #ccc; font-size: .8rem; }
#error { color: #b00020; }
</style>
</head>
<body>
<h1>Pay <span id="merchant">${escapeHtml(cfg.slug)}</span></h1>
<form id="pay-form">
  <label for="amount">Amount (<span id="currency">${cfg.currency}</span>)</label>
  <input id="amount" name="amount" inputmode="decimal" autocomplete="off" required value="${escapeHtml(cfg.amount)}">
  <button id="pay-button" type="submit">Pay with KHQR</button>
</form>
<section id="pay-view" hidden>
  <code id="qr"></code>
  <p id="status" data-action=""></p>
  <a id="receipt" hidden>View receipt</a>
</section>
<p id="error" role="alert" hidden></p>
<script id="link-config" type="application/json">${configJson}</script>
<script>${PAGE_SCRIPT}</script>
${(cfg.embeds ?? []).map(embedTags).join("\n")}
</body>
</html>
`;
}

/** A third-party script and widget frame, as a hosted page with analytics or chat includes them. */
function embedTags(base: string): string {
  const b = escapeHtml(base);
  return `<script async src="${b}/script.js"></script>\n<iframe src="${b}/frame" title="widget"></iframe>`;
}

export function renderReceiptPage(client: LinkClient, approvedAtIso: string): string {
  const currency = client.currency === 116 ? "KHR" : "USD";
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Receipt ${escapeHtml(client.clientId)}</title></head>
<body>
<h1>Payment receipt</h1>
<dl>
  <dt>Merchant</dt><dd id="merchant">${escapeHtml(client.slug)}</dd>
  <dt>Amount</dt><dd id="amount">${escapeHtml(client.amount)} ${currency}</dd>
  <dt>Client</dt><dd id="client-id">${escapeHtml(client.clientId)}</dd>
  <dt>Approved at</dt><dd id="approved-at">${approvedAtIso}</dd>
</dl>
</body>
</html>
`;
}

export function renderErrorPage(message: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Payment link unavailable</title></head>` +
    `<body><h1>Payment link unavailable</h1><p id="error">${escapeHtml(message)}</p></body></html>\n`
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
