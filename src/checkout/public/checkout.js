// The browser client of one payment, for the hosted checkout page and for merchants' own pages:
//   import { watchTransaction } from "https://<service>/checkout/checkout.js";
//   const w = watchTransaction({ url: "https://<service>", transactionId, clientToken }, (state) => …);
//   <payment-qr-checkout url="https://<service>" transaction-id="txn_…" client-token="ct_…"></payment-qr-checkout>
// It reads only the checkout view (status, amount, currency, QR, expiry, receipt, scanned, merchant name, deeplink)
// and the status changes of the graphql-ws subscription. No framework, no build step.
import { createClient } from "./vendor/graphql-ws/client.js";
import { formatMoney } from "./money.js";

export const TERMINAL = ["SUCCESS", "FAILED", "EXPIRED"];

const SUBSCRIPTION = `subscription($id: ID!, $last: ID) {
  transactionUpdated(transactionId: $id, lastEventId: $last) { id type transaction { status receiptUrl } }
}`;

const serviceBase = (url) => String(url ?? new URL("..", import.meta.url).href).replace(/\/+$/, "");

/**
 * Follows one transaction. `onUpdate(state)` runs with the whole checkout view each time something changes;
 * `state.connection` is "connecting", "live" or "reconnecting". A socket that drops is reopened with
 * `lastEventId`, so the changes it missed are replayed. Returns `{ stop(), state }`.
 */
export function watchTransaction({ url, transactionId, clientToken }, onUpdate) {
  const base = serviceBase(url);
  let state = { transactionId, connection: "connecting" };
  let lastEventId;
  let client = null;
  let stopped = false;
  let failures = 0;
  let timer = null;
  let sawEvent = false;

  const publish = (patch) => {
    // Never back out of a final state: a late or replayed answer cannot undo it.
    if (TERMINAL.includes(state.status) && patch.status !== undefined && patch.status !== state.status) return;
    state = { ...state, ...patch };
    onUpdate({ ...state });
  };

  async function loadView() {
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

  function subscribe() {
    client = createClient({
      url: `${base.replace(/^http/, "ws")}/graphql`,
      connectionParams: { clientToken },
      retryAttempts: 0,
      lazy: true,
      on: { connected: () => publish({ connection: "live" }) },
    });
    client.subscribe(
      {
        query: SUBSCRIPTION,
        variables: lastEventId ? { id: transactionId, last: lastEventId } : { id: transactionId },
      },
      {
        next: ({ data, errors }) => {
          const e = data?.transactionUpdated;
          // An error here (e.g. a replay the server refuses) is not the payment's state: read the view, then go on.
          if (!e) {
            if (errors) {
              lastEventId = undefined;
              sawEvent = false;
              reconnect();
            }
            return;
          }
          lastEventId = e.id;
          sawEvent = true;
          failures = 0;
          const patch = { status: e.transaction.status, lastEvent: { id: e.id, type: e.type } };
          if (e.transaction.receiptUrl) patch.receiptUrl = e.transaction.receiptUrl;
          if (e.type === "payment.scanned") patch.scanned = true;
          publish(patch);
          if (TERMINAL.includes(state.status)) stop();
        },
        error: () => reconnect(),
        complete: () => {
          if (!TERMINAL.includes(state.status)) reconnect();
        },
      },
    );
  }

  function reconnect() {
    if (stopped) return;
    client?.dispose();
    client = null;
    publish({ connection: "reconnecting" });
    const delay = Math.min(5000, 200 * 2 ** failures++);
    timer = setTimeout(async () => {
      timer = null;
      if (stopped) return;
      // With an event id the subscription replays what was missed; without one, read the view again.
      if (!sawEvent) await loadView().then(publish, () => undefined);
      if (!stopped && !TERMINAL.includes(state.status)) subscribe();
    }, delay);
  }

  function stop() {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    client?.dispose();
    client = null;
  }

  // Subscribe first, then read the view: a change between the two is not lost (the event wins; see publish).
  subscribe();
  loadView().then(
    (view) => {
      if (stopped && !TERMINAL.includes(view.status)) return;
      publish(sawEvent ? { ...view, status: state.status, receiptUrl: state.receiptUrl ?? view.receiptUrl } : view);
      if (TERMINAL.includes(state.status)) stop();
    },
    (err) => {
      publish({ error: err.message, errorStatus: err.status });
      stop();
    },
  );
  return {
    stop,
    get state() {
      return { ...state };
    },
  };
}

const LABEL = {
  PENDING: "Waiting for payment",
  CHECKOUT: "Waiting for payment",
  SUCCESS: "Paid",
  FAILED: "Payment failed",
  EXPIRED: "Expired",
};

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const safeHttp = (u) => (typeof u === "string" && /^https?:\/\//i.test(u) ? u : null);

/** `<payment-qr-checkout url transaction-id client-token>`: the whole checkout, live. */
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
    this.parts = {
      box: el("section", "pqc"),
      merchant: el("h1", "pqc-merchant"),
      amount: el("p", "pqc-amount"),
      qr: el("img", "pqc-qr"),
      status: el("p", "pqc-status", "Loading…"),
      countdown: el("p", "pqc-countdown"),
      deeplink: el("a", "pqc-deeplink", "Open in your banking app"),
      receipt: el("a", "pqc-receipt", "View receipt"),
    };
    const p = this.parts;
    p.qr.alt = "Payment QR code";
    p.qr.width = 280;
    p.qr.height = 280;
    p.status.setAttribute("role", "status");
    p.status.setAttribute("aria-live", "polite");
    p.receipt.target = "_blank";
    p.receipt.rel = "noopener noreferrer";
    p.deeplink.hidden = true;
    p.receipt.hidden = true;
    p.box.append(p.merchant, p.amount, p.qr, p.status, p.countdown, p.deeplink, p.receipt);
    this.replaceChildren(...[...this.querySelectorAll("link[data-pqc]")], p.box);
  }

  render(s) {
    const p = this.parts;
    this.state = s;
    this.dataset.status = s.status ?? "";
    this.dataset.connection = s.connection ?? "";
    if (s.lastEvent) this.dataset.lastEvent = s.lastEvent.type;
    if (s.error) {
      p.status.textContent =
        s.errorStatus === 401 || s.errorStatus === 404 ? "This payment link is not valid" : s.error;
      this.dataset.status = "ERROR";
      return;
    }
    if (s.merchantName !== undefined) p.merchant.textContent = s.merchantName;
    if (s.amount !== undefined) p.amount.textContent = formatMoney(s.amount, s.currency);
    if (s.qrImage && p.qr.getAttribute("src") !== s.qrImage) p.qr.src = s.qrImage;
    const final = TERMINAL.includes(s.status);
    p.box.dataset.status = s.status ?? "";
    p.qr.hidden = final || !s.qrImage;
    let text = LABEL[s.status] ?? "Loading…";
    if (!final && s.scanned) text = "Scanned — confirm the payment in your app";
    if (!final && s.connection === "reconnecting") text += " (reconnecting…)";
    p.status.textContent = text;
    const deeplink = !final ? s.deeplink : null;
    p.deeplink.hidden = !deeplink;
    if (deeplink) p.deeplink.href = deeplink;
    const receipt = s.status === "SUCCESS" ? safeHttp(s.receiptUrl) : null;
    p.receipt.hidden = !receipt;
    if (receipt) p.receipt.href = receipt;
    this.tick();
  }

  tick() {
    const s = this.state;
    const p = this.parts;
    if (!s || !p || !s.expiredAt) return;
    if (TERMINAL.includes(s.status)) {
      p.countdown.textContent = "";
      clearInterval(this.ticker);
      return;
    }
    const left = Math.max(0, Math.ceil((Date.parse(s.expiredAt) - Date.now()) / 1000));
    const [h, m, sec] = [Math.floor(left / 3600), Math.floor(left / 60) % 60, left % 60];
    const two = (n) => String(n).padStart(2, "0");
    const clock = h > 0 ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
    p.countdown.textContent = left > 0 ? `Expires in ${clock}` : "Time is up — checking…";
    p.countdown.dataset.seconds = String(left);
  }
}

if (!customElements.get("payment-qr-checkout")) customElements.define("payment-qr-checkout", PaymentQrCheckout);
