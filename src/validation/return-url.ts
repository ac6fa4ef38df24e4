// Where a payer's browser goes back to after the checkout page's final state (`returnUrl`, per generate request
// or per merchant). The page links to it, so it must be somewhere a browser may safely be sent: an https URL, or
// while the service itself answers on loopback http (demo, development) an http URL on loopback too.

import { Field } from "type-graphql";
import { Bounds, FieldRule } from "./rules.js";
import { storableText, UNSTORABLE } from "./storable.js";

export const RETURN_URL_MAX = 2000;
const MESSAGE = "must be an https URL (http only on localhost while the service itself runs on it)";

function loopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The shape every return URL has, whatever the service's own address: null when fine, else the message. */
export function returnUrlShapeProblem(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || v.length === 0 || v.length > RETURN_URL_MAX)
    return `must be a URL of at most ${RETURN_URL_MAX} characters`;
  if (!storableText(v)) return UNSTORABLE;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return MESSAGE;
  }
  if (url.username !== "" || url.password !== "") return "must not carry a user name or password";
  if (url.protocol === "https:") return null;
  return url.protocol === "http:" && loopbackHost(url.hostname) ? null : MESSAGE;
}

/**
 * The full rule for a service whose public address is `serviceBaseUrl`: an http (loopback) return URL only where
 * the service itself is on loopback http, i.e. never in a deployment.
 */
export function returnUrlProblem(v: unknown, serviceBaseUrl: string): string | null {
  const shape = returnUrlShapeProblem(v);
  if (shape !== null || typeof v !== "string") return shape;
  if (new URL(v).protocol === "https:") return null;
  let base: URL | null = null;
  try {
    base = new URL(serviceBaseUrl);
  } catch {
    base = null;
  }
  return base !== null && base.protocol === "http:" && loopbackHost(base.hostname) ? null : MESSAGE;
}

/** The shape rule as a field decorator (the service applies returnUrlProblem with its own address). */
export function ReturnUrl<T extends object>(): PropertyDecorator {
  return FieldRule<T>("returnUrl", (v) => returnUrlShapeProblem(v));
}

/** The optional `returnUrl` of every area's generate input: its GraphQL field and its shape rule. */
export function ReturnUrlField(): PropertyDecorator {
  const field = Field(() => String, {
    nullable: true,
    description:
      "Where the checkout page sends the payer back after the final state: https (http only on localhost while the service runs there)",
  });
  const rule = ReturnUrl();
  // The contract's part of the shape rule: a URL of 1 to 2000 characters with an http(s) scheme (any letter case,
  // as the URL parser reads it); which hosts http may name depends on where the service runs, so it is described.
  const bounds = Bounds({ minLength: 1, maxLength: RETURN_URL_MAX, format: "uri", pattern: "^[Hh][Tt][Tt][Pp][Ss]?:" });
  return (target, property) => {
    rule(target, property);
    bounds(target, property);
    field(target, property);
  };
}
