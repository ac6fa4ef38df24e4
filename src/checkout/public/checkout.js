// The browser client of one payment, for the hosted checkout page and for merchants' own pages:
//   import { watchTransaction } from "https://<service>/checkout/checkout.js";
//   const w = watchTransaction({ url: "https://<service>", transactionId, clientToken }, (state) => …);
//   <payment-qr-checkout url="https://<service>" transaction-id="txn_…" client-token="ct_…"></payment-qr-checkout>
// It reads only the checkout view (status, amount, currency, QR, expiry, merchant name, paid time, upstream reference,
// and what the app's areas add to it: a receipt, a scan, a deeplink) and the status changes of the graphql-ws
// subscription, which asks only what every transaction has. No framework, no build step.
import { createClient } from "./vendor/graphql-ws/client.js";
import { currencySymbol, formatMoney } from "./money.js";
import { LANGUAGES, STRINGS, formatDateTime, initialLanguage, storeLanguage, t } from "./i18n.js";

export const TERMINAL = ["SUCCESS", "FAILED", "EXPIRED"];

const SUBSCRIPTION = `subscription($id: ID!, $last: ID) {
  transactionUpdated(transactionId: $id, lastEventId: $last) { id type transaction { status } }
}`;

const serviceBase = (url) => String(url ?? new URL("..", import.meta.url).href).replace(/\/+$/, "");

/**
 * Follows one transaction. `onUpdate(state)` runs with the whole checkout view each time something changes —
 * the first time once the view has been read, so a first event that arrives before it (the subscription sends the
 * current state first: PENDING or CHECKOUT) never paints a half-empty screen. `state.connection` is "connecting",
 * "live" or "reconnecting". A final event is completed with a fresh read of the view (its paid time and reference)
 * before it is shown; any other event is shown at once, and the view read again alongside for what the areas add
 * (a scan, a deeplink: the event carries only the status). A socket that drops is reopened with `lastEventId`, so the changes it missed are replayed.
 * Returns `{ stop(), state }`.
 */
export function watchTransaction({ url, transactionId, clientToken }, onUpdate) {
  const watch = new TransactionWatch(serviceBase(url), transactionId, clientToken, onUpdate);
  watch.start();
  return {
    stop() {
      watch.disposed = true;
      watch.close();
    },
    get state() {
      return { ...watch.state };
    },
  };
}

/** The checkout view of one transaction, read with its client token; a refusal throws with the HTTP status. */
async function fetchView(base, transactionId, clientToken) {
  const res = await fetch(`${base}/checkout/view/${encodeURIComponent(transactionId)}`, {
    headers: { authorization: `Bearer ${clientToken}` },
    cache: "no-store",
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body?.error?.message ?? `HTTP ${res.status}`);
    err.status = res.status;
    throw err;
  }
  return body;
}

/** What one subscription event tells: the status and the event itself (the rest is the view's). */
const eventPatch = (e) => ({ status: e.transaction.status, lastEvent: { id: e.id, type: e.type } });

/** One watch's state and its steps (see watchTransaction): the subscription, its reconnects and its ending. */
class TransactionWatch {
  constructor(base, transactionId, clientToken, onUpdate) {
    Object.assign(this, { base, transactionId, clientToken, onUpdate });
    this.state = { transactionId, connection: "connecting" };
    this.lastEventId = undefined;
    this.client = null;
    this.closed = false;
    this.disposed = false;
    this.ready = false;
    this.failures = 0;
    this.timer = null;
    this.sawEvent = false;
    this.finishing = false;
    // View reads in the order asked: an answer older than one already shown is dropped.
    this.reads = 0;
    this.shownRead = 0;
  }

  /** Subscribe first, then read the view: a change between the two is not lost (the event wins; see withView). */
  start() {
    this.subscribe();
    this.loadView().then(
      (view) => {
        this.ready = true;
        // A later read (after an event) may have been shown first: then the state already holds it.
        this.publish(view ? this.withView(view) : {});
        if (TERMINAL.includes(this.state.status)) this.closeSoon();
      },
      (err) => {
        this.ready = true;
        this.publish({ error: err.message, errorStatus: err.status });
        this.closeSoon();
      },
    );
  }

  publish(patch) {
    if (this.disposed) return;
    // Never back out of a final state: a late or replayed answer cannot undo it.
    if (TERMINAL.includes(this.state.status) && patch.status !== undefined && patch.status !== this.state.status)
      return;
    this.state = { ...this.state, ...patch };
    if (this.ready) this.onUpdate({ ...this.state });
  }

  /**
   * A view read joined with what the events said: once an event was seen its status is the newer word (the view
   * may have been read just before it); the paid time and reference are kept once known.
   */
  withView(view) {
    const state = this.state;
    return {
      ...view,
      status: this.sawEvent && state.status !== undefined ? state.status : view.status,
      paidAt: state.paidAt ?? view.paidAt ?? null,
      reference: state.reference ?? view.reference ?? null,
    };
  }

  /** The view, read now; `null` when a read asked after it has already been shown. */
  async loadView() {
    const read = ++this.reads;
    const view = await fetchView(this.base, this.transactionId, this.clientToken);
    if (read < this.shownRead) return null;
    this.shownRead = read;
    return view;
  }

  /** After a non-final event: the view again, for what the areas add to it (shown when it is the newest read). */
  refresh() {
    this.loadView().then(
      (view) => view && !this.finishing && this.publish(this.withView(view)),
      () => undefined,
    );
  }

  subscribe() {
    this.client = createClient({
      url: `${this.base.replace(/^http/, "ws")}/graphql`,
      connectionParams: { clientToken: this.clientToken },
      retryAttempts: 0,
      lazy: true,
      on: { connected: () => this.publish({ connection: "live" }) },
    });
    const id = this.transactionId;
    this.client.subscribe(
      { query: SUBSCRIPTION, variables: this.lastEventId ? { id, last: this.lastEventId } : { id } },
      {
        next: (message) => this.onMessage(message),
        error: () => this.reconnect(),
        complete: () => {
          // After the final event the server ends the stream itself: the socket is closed once it has.
          if (this.finishing) this.close();
          else if (!TERMINAL.includes(this.state.status)) this.reconnect();
        },
      },
    );
  }

  onMessage({ data, errors }) {
    const e = data?.transactionUpdated;
    // An error here (e.g. a replay the server refuses) is not the payment's state: read the view, then go on.
    if (!e) {
      if (errors) {
        this.lastEventId = undefined;
        this.sawEvent = false;
        this.reconnect();
      }
      return;
    }
    this.lastEventId = e.id;
    this.sawEvent = true;
    this.failures = 0;
    const patch = eventPatch(e);
    if (TERMINAL.includes(patch.status) && !TERMINAL.includes(this.state.status)) return this.finish(patch);
    this.publish(patch);
    if (!TERMINAL.includes(patch.status)) this.refresh();
  }

  /** The final event, shown with what only the view tells (paid time, reference); the event alone if it fails. */
  finish(patch) {
    // The stream ends with its final event: nothing more to follow.
    if (this.finishing) return;
    this.closeSoon();
    this.loadView().then(
      (view) => this.publish(view ? { ...this.withView(view), ...patch } : patch),
      () => this.publish(patch),
    );
  }

  reconnect() {
    if (this.closed) return;
    if (this.finishing) return this.close();
    this.client?.dispose();
    this.client = null;
    this.publish({ connection: "reconnecting" });
    const delay = Math.min(5000, 200 * 2 ** this.failures++);
    this.timer = setTimeout(() => this.resume(), delay);
  }

  /** After a reconnect's pause: subscribe again, or close if the payment ended meanwhile. */
  async resume() {
    this.timer = null;
    if (this.closed) return;
    // With an event id the subscription replays what was missed; without one, read the view again.
    if (!this.sawEvent)
      await this.loadView().then(
        (view) => view && this.publish(this.withView(view)),
        () => undefined,
      );
    if (this.closed) return;
    if (TERMINAL.includes(this.state.status)) this.close();
    else this.subscribe();
  }

  /**
   * Ends the watch without cutting the socket under the client: closing it while its subscription is still being
   * opened or completed makes the client write to a closing socket. The server ends a finished transaction's
   * stream itself (its `complete` or `error` closes the socket); a server that never does, in 3 s.
   */
  closeSoon() {
    if (this.finishing || this.closed) return;
    this.finishing = true;
    this.timer = setTimeout(() => this.close(), 3000);
  }

  close() {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.client?.dispose();
    this.client = null;
  }
}

const SVG = "http://www.w3.org/2000/svg";

/** References longer than this are shown as their first SHORT_REFERENCE characters on the Paid screen. */
const LONG_REFERENCE = 24;
const SHORT_REFERENCE = 8;

/** "3f7c9a12…" for the network's 64-hex hash; an order id or a client id as it is. */
export function shortReference(reference) {
  return reference.length > LONG_REFERENCE ? `${reference.slice(0, SHORT_REFERENCE)}…` : reference;
}

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const svg = (tag, attrs, children = []) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  e.append(...children);
  return e;
};

const safeHttp = (u) => (typeof u === "string" && /^https?:\/\//i.test(u) ? u : null);

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The link back to the shop after a final state, from the view's `returnUrl` when it has one: https, or http on
 * this machine's loopback (a shop in development); anything else (javascript:, data:, plain http) is not shown.
 */
export function safeReturnUrl(u) {
  if (typeof u !== "string") return null;
  try {
    const url = new URL(u);
    if (url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.test(url.hostname))) return url.href;
  } catch {
    /* not a URL */
  }
  return null;
}

/**
 * The KHQR currency mark laid over the centre of the QR, as the national card draws it (src/qr/card.ts): a white
 * ring and a black disc with the currency's sign. In the QR's own units (viewBox 100 = the image's width): a ring
 * 13 wide covers about 1.3 % of the symbol, well within what level H (30 %) recovers.
 */
function currencyMark() {
  const sign = svg("text", { x: 50, y: 50, "text-anchor": "middle", "dominant-baseline": "central" });
  return svg("svg", { class: "pqc-mark", viewBox: "0 0 100 100", "aria-hidden": "true", focusable: "false" }, [
    svg("circle", { cx: 50, cy: 50, r: 6.5, fill: "#fff" }),
    svg("circle", { cx: 50, cy: 50, r: 5.2, fill: "#000" }),
    sign,
  ]);
}

/** The final screens' signs: a tick (paid), a cross (failed), a clock (expired). */
const ICONS = {
  SUCCESS: ["M7 12.5l3.2 3.2L17 9"],
  FAILED: ["M8.5 8.5l7 7", "M15.5 8.5l-7 7"],
  EXPIRED: ["M12 7v5l3.2 2"],
};

function resultIcon(status) {
  return svg("svg", { class: "pqc-icon", viewBox: "0 0 24 24", "aria-hidden": "true", focusable: "false" }, [
    svg("circle", { cx: 12, cy: 12, r: 10.5 }),
    ...(ICONS[status] ?? []).map((d) => svg("path", { d })),
  ]);
}

const STATUS_TEXT = { PENDING: "waiting", CHECKOUT: "waiting", SUCCESS: "paid", FAILED: "failed", EXPIRED: "expired" };
const FINAL_NOTE = { SUCCESS: "paidNote", FAILED: "failedNote", EXPIRED: "expiredNote" };

/**
 * `<payment-qr-checkout url transaction-id client-token>`: the whole checkout as the national KHQR card (red
 * header, merchant, amount, dashed line, QR with the currency mark), live, in Khmer or English.
 */
export class PaymentQrCheckout extends HTMLElement {
  static get observedAttributes() {
    return ["url", "transaction-id", "client-token"];
  }

  connectedCallback() {
    this.start();
  }

  disconnectedCallback() {
    this.watch?.stop();
    clearInterval(this.ticker);
  }

  attributeChangedCallback() {
    if (this.isConnected) this.start();
  }

  start() {
    this.watch?.stop();
    clearInterval(this.ticker);
    const transactionId = this.getAttribute("transaction-id");
    const clientToken = this.getAttribute("client-token");
    if (!transactionId || !clientToken) return;
    this.language ??= initialLanguage();
    this.build();
    const url = this.getAttribute("url") ?? undefined;
    this.watch = watchTransaction({ url, transactionId, clientToken }, (s) => this.render(s));
    this.ticker = setInterval(() => this.tick(), 250);
  }

  build() {
    if (!this.querySelector("link[data-pqc]") && !document.querySelector("link[data-pqc]")) {
      const css = document.createElement("link");
      css.rel = "stylesheet";
      css.href = new URL("./checkout.css", import.meta.url).href;
      css.dataset.pqc = "";
      this.append(css);
    }
    const p = (this.parts = {
      box: el("section", "pqc"),
      languages: el("div", "pqc-lang"),
      card: el("div", "pqc-card"),
      head: el("div", "pqc-head"),
      merchant: el("h1", "pqc-merchant"),
      amount: el("p", "pqc-amount"),
      amountValue: el("span", "pqc-amount-value"),
      currency: el("span", "pqc-currency"),
      divider: el("div", "pqc-divider"),
      body: el("div", "pqc-body"),
      qrBox: el("div", "pqc-qr-box"),
      qr: el("img", "pqc-qr"),
      mark: currencyMark(),
      icon: el("div", "pqc-result"),
      status: el("p", "pqc-status"),
      note: el("p", "pqc-note"),
      countdown: el("p", "pqc-countdown"),
      details: el("dl", "pqc-details"),
      deeplink: el("a", "pqc-deeplink"),
      receipt: el("a", "pqc-receipt"),
      // The link back to the shop after the final state: shown from the view's `returnUrl` when it carries one.
      back: el("a", "pqc-back"),
      buttons: {},
      terms: {},
      values: {},
    });
    p.languages.setAttribute("role", "group");
    for (const language of LANGUAGES) {
      const b = el("button", "pqc-lang-option", STRINGS[language].languageName);
      b.type = "button";
      b.lang = language;
      b.dataset.language = language;
      b.addEventListener("click", () => this.setLanguage(language));
      p.buttons[language] = b;
      p.languages.append(b);
    }
    p.head.append(el("span", "pqc-wordmark", "KHQR"));
    p.amount.append(p.amountValue, " ", p.currency);
    p.divider.setAttribute("role", "presentation");
    p.qr.width = 280;
    p.qr.height = 280;
    p.qr.hidden = true;
    p.qrBox.hidden = true;
    p.qrBox.append(p.qr, p.mark);
    p.icon.hidden = true;
    p.status.setAttribute("role", "status");
    p.status.setAttribute("aria-live", "polite");
    for (const key of ["amount", "paidAt", "reference"]) {
      const row = el("div", `pqc-detail pqc-detail-${key}`);
      p.terms[key] = el("dt");
      p.values[key] = el("dd");
      row.append(p.terms[key], p.values[key]);
      p.details.append(row);
    }
    p.details.hidden = true;
    for (const a of [p.receipt, p.back]) {
      a.target = "_blank";
      a.rel = "noopener noreferrer";
    }
    p.back.target = "_top";
    p.deeplink.hidden = true;
    p.receipt.hidden = true;
    p.back.hidden = true;
    p.body.append(p.qrBox, p.icon, p.status, p.note, p.countdown, p.details, p.deeplink, p.receipt, p.back);
    p.card.append(p.head, p.merchant, p.amount, p.divider, p.body);
    p.box.append(p.languages, p.card);
    this.replaceChildren(...[...this.querySelectorAll("link[data-pqc]")], p.box);
    this.applyLanguage();
  }

  /** The switch: the page's words change at once, and the choice is kept for the next visit on this browser. */
  setLanguage(language) {
    if (!LANGUAGES.includes(language) || language === this.language) return;
    this.language = language;
    storeLanguage(language);
    this.applyLanguage();
    if (this.state) this.render(this.state);
  }

  applyLanguage() {
    const p = this.parts;
    const say = (key, vars) => t(this.language, key, vars);
    p.box.lang = this.language;
    this.dataset.language = this.language;
    p.languages.setAttribute("aria-label", say("languageSwitch"));
    for (const [language, b] of Object.entries(p.buttons))
      b.setAttribute("aria-pressed", String(language === this.language));
    p.qr.alt = say("qrAlt");
    p.deeplink.textContent = say("openApp");
    p.receipt.textContent = say("viewReceipt");
    p.back.textContent = say("backToShop");
    p.terms.amount.textContent = say("amountLabel");
    p.terms.paidAt.textContent = say("paidAtLabel");
    p.terms.reference.textContent = say("referenceLabel");
    if (!this.state) p.status.textContent = say("loading");
    this.dispatchEvent(new CustomEvent("pqc-change", { bubbles: true, detail: this.summary() }));
  }

  summary() {
    return {
      language: this.language,
      status: this.state?.status ?? null,
      merchantName: this.state?.merchantName ?? "",
    };
  }

  render(s) {
    const p = this.parts;
    const say = (key, vars) => t(this.language, key, vars);
    this.state = s;
    this.dataset.status = s.status ?? "";
    this.dataset.connection = s.connection ?? "";
    if (s.lastEvent) this.dataset.lastEvent = s.lastEvent.type;
    if (s.error) {
      p.status.textContent = s.errorStatus === 401 || s.errorStatus === 404 ? say("linkInvalid") : say("loadFailed");
      p.status.title = s.error;
      p.box.dataset.status = "ERROR";
      this.dataset.status = "ERROR";
      p.qr.hidden = p.qrBox.hidden = true;
      return;
    }
    if (s.merchantName !== undefined) p.merchant.textContent = s.merchantName;
    const money = s.amount !== undefined ? formatMoney(s.amount, s.currency) : "";
    const cut = money.lastIndexOf(" ");
    p.amountValue.textContent = cut > 0 ? money.slice(0, cut) : money;
    p.currency.textContent = cut > 0 ? money.slice(cut + 1) : "";
    const sign = p.mark.querySelector("text");
    sign.textContent = currencySymbol(s.currency ?? "");
    sign.dataset.currency = s.currency ?? "";
    if (s.qrImage && p.qr.getAttribute("src") !== s.qrImage) p.qr.src = s.qrImage;
    const final = TERMINAL.includes(s.status);
    p.box.dataset.status = s.status ?? "";
    p.qr.hidden = p.qrBox.hidden = final || !s.qrImage;
    if (final && p.icon.dataset.status !== s.status) {
      p.icon.replaceChildren(resultIcon(s.status));
      p.icon.dataset.status = s.status;
    }
    p.icon.hidden = !final;
    let text = STATUS_TEXT[s.status] ? say(STATUS_TEXT[s.status]) : say("loading");
    if (!final && s.scanned) text = say("scanned");
    if (!final && s.connection === "reconnecting") text += ` ${say("reconnecting")}`;
    p.status.textContent = text;
    p.note.textContent = final ? say(FINAL_NOTE[s.status]) : s.scanned || !s.qrImage ? "" : say("scanHint");
    this.renderDetails(s);
    const deeplink = !final ? s.deeplink : null;
    p.deeplink.hidden = !deeplink;
    if (deeplink) p.deeplink.href = deeplink;
    const receipt = s.status === "SUCCESS" ? safeHttp(s.receiptUrl) : null;
    p.receipt.hidden = !receipt;
    if (receipt) p.receipt.href = receipt;
    const back = final ? safeReturnUrl(s.returnUrl) : null;
    p.back.hidden = !back;
    if (back) p.back.href = back;
    this.tick();
    this.dispatchEvent(new CustomEvent("pqc-change", { bubbles: true, detail: this.summary() }));
  }

  /** Paid: the amount, when (Phnom Penh time, with the date) and the bank's or gateway's reference. */
  renderDetails(s) {
    const p = this.parts;
    const paid = s.status === "SUCCESS";
    p.details.hidden = !paid;
    if (!paid) return;
    p.values.amount.textContent = s.amount !== undefined ? formatMoney(s.amount, s.currency) : "";
    const when = s.paidAt ? formatDateTime(s.paidAt, this.language) : "";
    p.values.paidAt.replaceChildren(
      el("time", "pqc-paid-at", when),
      ...(when ? [el("span", "pqc-zone", t(this.language, "timeZoneNote"))] : []),
    );
    if (s.paidAt) p.values.paidAt.firstChild.dateTime = s.paidAt;
    p.values.paidAt.parentElement.hidden = !when;
    p.values.reference.replaceChildren(...(s.reference ? this.referenceParts(s.reference) : []));
    p.values.reference.parentElement.hidden = !s.reference;
  }

  /**
   * A reference a person reads: a long one (the network's 64-hex hash) as its first characters, the whole one under
   * "Full reference", selectable and copyable; a short one (an order id, a client id) whole
   * (docs/decisions/0255-a-short-reference-on-the-paid-screen.md).
   */
  referenceParts(reference) {
    const short = shortReference(reference);
    const shown = el("span", "pqc-ref-short", short);
    if (short === reference) return [shown];
    shown.title = reference;
    const full = el("details", "pqc-ref-full");
    const copy = el("button", "pqc-ref-copy", t(this.language, "copy"));
    copy.type = "button";
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(reference);
        copy.textContent = t(this.language, "copied");
      } catch {
        // No clipboard here (an http page, a refused permission): the reference is selected to copy by hand.
        window.getSelection()?.selectAllChildren(code);
      }
    });
    const code = el("code", "pqc-ref-whole", reference);
    full.append(el("summary", "", t(this.language, "fullReference")), code, copy);
    return [shown, full];
  }

  tick() {
    const s = this.state;
    const p = this.parts;
    if (!s || !p || !s.expiredAt) return;
    if (TERMINAL.includes(s.status) || s.error) {
      p.countdown.textContent = "";
      delete p.countdown.dataset.seconds;
      clearInterval(this.ticker);
      return;
    }
    const left = Math.max(0, Math.ceil((Date.parse(s.expiredAt) - Date.now()) / 1000));
    const [h, m, sec] = [Math.floor(left / 3600), Math.floor(left / 60) % 60, left % 60];
    const two = (n) => String(n).padStart(2, "0");
    const clock = h > 0 ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
    p.countdown.textContent = left > 0 ? t(this.language, "expiresIn", { clock }) : t(this.language, "timeUp");
    p.countdown.dataset.seconds = String(left);
  }
}

if (!customElements.get("payment-qr-checkout")) customElements.define("payment-qr-checkout", PaymentQrCheckout);
