// Why a payment page produced no QR, in words a merchant can act on: the 502 of a generate says it, and the FAILED
// transaction keeps it (readable as `failureReason`). Three causes are told apart: the page's own refusal (its API
// answered a status code other than success: the code and the message it gave), a page that could not be reached
// (the network error Chromium met), and one that did not answer in time. Anything else says what went wrong as is.

import { BrowserPoolError } from "./browser.js";
import { LinkDriverError } from "./link-driver.js";
import { PageTrafficError } from "./page-traffic.js";

/** The reason, lower case (stored on the transaction); the answer's message is it capitalised. */
export function noQrReason(err: unknown): string {
  const why = err instanceof Error ? err.message : String(err);
  const cause = err instanceof LinkDriverError ? err.cause : undefined;
  if (cause instanceof PageTrafficError && cause.pageRefusal) return `the payment page refused: ${why}`;
  const network = networkError(why);
  if (network !== null) {
    // A failed call of the page's API reads "network error on request_qr: …"; the page itself, just the error.
    const whose = /^network error on /.test(why) ? "the payment page's API" : "the payment page";
    return `${whose} could not be reached: ${network}`;
  }
  // A deadline passed on the page's side (a full browser pool is ours, and says so below).
  if (err instanceof LinkDriverError && err.kind === "timeout" && !(cause instanceof BrowserPoolError))
    return `the payment page did not answer in time: ${why}`;
  return `the payment page did not produce a QR: ${why}`;
}

/**
 * Chromium's name for a network error, as its own error pages and logs write it (net::ERR_CONNECTION_REFUSED).
 * The DevTools protocol reports the same errors in camel case (ConnectionRefused, NameNotResolved, TimedOut).
 */
function networkError(message: string): string | null {
  const m = /net::ERR_([A-Za-z_]+)/.exec(message);
  if (m === null) return null;
  const name = m[1].includes("_") || m[1] === m[1].toUpperCase() ? m[1] : m[1].replace(/(?<!^)([A-Z])/g, "_$1");
  return `net::ERR_${name.toUpperCase()}`;
}
