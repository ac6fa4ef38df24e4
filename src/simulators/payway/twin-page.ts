// The HTML of the PayWay twin's payment-link page: server-rendered, its state in `window.__NUXT__` the way
// Nuxt writes it (every '/' of a string as \u002F), an amount field and a Continue button whose script asks
// the API on the other origin for a QR and then polls its status every few seconds, as the real page does.

import { PAYWAY_PATHS } from "../../upstreams/payway.js";
import type { TwinVisit } from "./twin-store.js";
import { formHtml, requiredFieldsState, TWIN_WORDS } from "./twin-layout.js";

export interface TwinPageConfig {
  visit: TwinVisit;
  /** The API's origin, as the real page has pwapp.ababank.com built in. */
  apiOrigin: string;
  pollMs: number;
  routePath: string;
  /** Scripts of a hostile-test mode (twin-hostile.ts), run before the page's own. */
  prelude?: string;
}

/** JSON as Nuxt serialises page state into a script: '/' as \u002F, and nothing that could end the script. */
export function nuxtJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/\//g, "\\u002F")
    .replace(/</g, "\\u003C")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

function nuxtState(cfg: TwinPageConfig) {
  const { visit } = cfg;
  return {
    layout: "default",
    data: [{}],
    error: null,
    serverRendered: true,
    routePath: cfg.routePath,
    state: {
      i18n: { locale: visit.link.language },
      // An empty summary beside the one with the data, as chmabapay saw the real page's state.
      checkout: { transaction_summary: {} },
      payment: {
        aba_data: visit.abaData,
        request_time: visit.requestTime,
        transaction_summary: {
          order_details: {
            title: visit.link.title,
            currency: visit.link.currency,
            amount: visit.link.fixedAmount ?? "",
          },
          merchant: { name: visit.link.merchant },
        },
        required_fields: requiredFieldsState(visit.link, visit.link.minAmount, visit.link.maxAmount),
      },
    },
  };
}

// Plain script (no framework), kept as a string so it runs as written; its settings come as JSON. Until it hydrates
// the page (at once, or after the link's hydrationMs) the controls are as the server rendered them and do nothing.
const PAGE_SCRIPT = String.raw`
(function () {
  "use strict";
  var cfg = JSON.parse(document.getElementById("pw-config").textContent);
  var st = window.__NUXT__.state.payment;
  var input = document.getElementById("pw-amount");
  var button = document.getElementById("pw-continue");
  var form = document.getElementById("pw-form");
  var extras = Array.prototype.slice.call(document.querySelectorAll("[data-pw-field]"));
  var errorBox = document.getElementById("pw-error");
  var qrBox = document.getElementById("pw-qr");
  var statusBox = document.getElementById("pw-status");
  var amountField = st.required_fields.amount || { rules: [] };
  var rules = amountField.rules.filter(function (r) { return r.min_value !== undefined; })[0] || {};
  var clientId = null, token = null, busy = false;
  var ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

  function hex(buf) {
    return Array.prototype.map.call(new Uint8Array(buf), function (b) { return b.toString(16).padStart(2, "0"); }).join("");
  }
  function sha512(text) { return crypto.subtle.digest("SHA-512", new TextEncoder().encode(text)).then(hex); }
  function deviceId() {
    var bytes = new Uint8Array(10);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ALPHABET[b % ALPHABET.length]; }).join("");
  }
  function setError(m) { errorBox.textContent = m || ""; errorBox.hidden = !m; }
  function post(path, body, headers) {
    var h = { "content-type": "application/json", language: "en" };
    for (var k in headers || {}) h[k] = headers[k];
    return fetch(cfg.api + path, { method: "POST", credentials: "include", headers: h, body: JSON.stringify(body) })
      .then(function (res) {
        return res.text().then(function (t) {
          var j = null;
          try { j = JSON.parse(t); } catch (e) { j = null; }
          if (!res.ok) throw new Error((j && j.status && j.status.message) || ("HTTP " + res.status));
          return j;
        });
      });
  }
  function poll() {
    var device = deviceId();
    sha512(clientId + device + st.request_time)
      .then(function (hash) {
        var body = { device_id: device, request_time: st.request_time, client_id: clientId, hash: hash };
        return post(cfg.paths.status, body, { token: token });
      })
      .then(function (r) {
        var action = r && r.data && r.data.action;
        statusBox.textContent = action || "";
        statusBox.setAttribute("data-action", action || "");
        if (action === "approved" || action === "declined") return;
        setTimeout(poll, cfg.pollMs);
      }, function (e) {
        setError("Connection problem: " + e.message);
        setTimeout(poll, cfg.pollMs);
      });
  }
  function go() {
    if (busy || clientId) return;
    var n = Number(input.value);
    if (!input.value || !(n > 0)) return setError("Please enter an amount");
    if (rules.min_value !== undefined && n < Number(rules.min_value)) return setError("The amount is below " + rules.min_value);
    if (rules.max_value !== undefined && n > Number(rules.max_value)) return setError("The amount is above " + rules.max_value);
    var fields = { amount: n.toFixed(2) };
    for (var i = 0; i < extras.length; i++) {
      var e = extras[i];
      fields[e.name] = e.value.trim();
      if (e.required && !fields[e.name]) return setError(e.name + " " + cfg.required);
    }
    busy = true;
    setError("");
    var additional = JSON.stringify(fields);
    sha512(st.request_time + st.aba_data + additional)
      .then(function (hash) {
        return post(cfg.paths.list, { additional_fields: additional, request_time: st.request_time, aba_data: st.aba_data, hash: hash });
      })
      .then(function (r) {
        var d = r && r.qr_string ? r : (r && r.data) || {};
        var status = (r && r.status) || d.status || {};
        if (!(d.qr_string && d.token && d.client_id) && status.code !== "00") throw new Error(status.message || "Payment unavailable");
        clientId = d.client_id;
        token = d.token;
        qrBox.textContent = d.qr_string;
        qrBox.hidden = false;
        setTimeout(poll, cfg.pollMs);
      })
      .catch(function (e) { setError(e.message); })
      .then(function () { busy = false; });
  }
  // As a framework's hydration: the state's values replace what the server rendered, the controls come alive.
  function hydrate() {
    if (!input.readOnly) input.value = "";
    input.disabled = false;
    extras.forEach(function (e) { e.disabled = false; });
    button.disabled = false;
    button.removeAttribute("aria-disabled");
    button.classList.remove("pw-disabled");
    if (form) form.addEventListener("submit", function (e) { e.preventDefault(); go(); });
    else button.addEventListener("click", go);
  }
  if (cfg.hydrationMs > 0) setTimeout(hydrate, cfg.hydrationMs);
  else hydrate();
})();
`;

/**
 * The `stylesheet` option's head: the form hidden by the page's inline style until its stylesheet (relative to the
 * page: <page path>/_nuxt/link.css, where Nuxt serves its CSS) shows it, as pages that hide their content until
 * styled do (against a flash of unstyled content). A browser that does not load the stylesheet never sees the form.
 */
const STYLED_HEAD = ' .pw-form { visibility: hidden; }</style>\n<link rel="stylesheet" href="_nuxt/link.css">';

/** The stylesheet of a page with the `stylesheet` option: it shows the form. */
export const TWIN_STYLESHEET =
  ".pw-form { visibility: visible; }\n.pw-link { max-width: 28rem; margin: 0 auto; font-family: sans-serif; }\n";

export function renderTwinPage(cfg: TwinPageConfig): string {
  const { link } = cfg.visit;
  const settings = JSON.stringify({
    api: cfg.apiOrigin,
    pollMs: cfg.pollMs,
    hydrationMs: link.hydrationMs,
    required: TWIN_WORDS[link.language].required,
    paths: { list: PAYWAY_PATHS.listPaymentOptions, status: PAYWAY_PATHS.checkPaymentStatus },
  }).replace(/</g, "\\u003C");
  return `<!doctype html>
<html lang="${link.language}"><head><meta charset="utf-8"><title>${esc(link.title)} | ABA PayWay</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>.pw-disabled { pointer-events: none; opacity: 0.5; }${link.stylesheet ? STYLED_HEAD : "</style>"}</head>
<body><div id="__nuxt"><div id="__layout"><main class="pw-link">
<header><button type="button" class="pw-lang">${TWIN_WORDS[link.language].language}</button>
<h1>${esc(link.merchant)}</h1><p>${esc(link.title)}</p></header>
${link.stylesheet ? `<div class="pw-form">\n${formHtml(link, link.currency, esc)}\n</div>` : formHtml(link, link.currency, esc)}
<pre id="pw-qr" hidden></pre><p id="pw-status" data-action=""></p>
</main></div></div>
<script type="application/json" id="pw-config">${settings}</script>${cfg.prelude ? `\n<script>${cfg.prelude}</script>` : ""}
<script>window.__NUXT__=${nuxtJson(nuxtState(cfg))};</script>
<script>${PAGE_SCRIPT}</script>
</body></html>`;
}

export function renderTwinNotice(title: string, text: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head>` +
    `<body><h1>${esc(title)}</h1><p>${esc(text)}</p></body></html>`
  );
}

/** What Cloudflare answers a refused caller: an HTML block page with HTTP 403. */
export function cloudflareBlockPage(): string {
  return renderTwinNotice("Attention Required! | Cloudflare", "Sorry, you have been blocked. Cloudflare Ray ID: twin");
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
