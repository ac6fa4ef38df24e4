import { returnUrlProblem } from "../validation/return-url.js";
import { Checker } from "../validation/checker.js";
import type { Authenticator } from "./keys.js";

/**
 * The hosted checkout page of one transaction: `<base>/pay/<id>#token=<clientToken>`. The token rides in the
 * fragment, so browsers never send it to a server in the request line or a Referer, and access logs never see it.
 */
export function checkoutUrl(baseUrl: string, transactionId: string, clientToken: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/pay/${encodeURIComponent(transactionId)}#token=${encodeURIComponent(clientToken)}`;
}

/** What every generate answer carries for a browser: the read-only token and the page that uses it. */
export function issueCheckout(
  auth: Pick<Authenticator, "issueClientToken">,
  baseUrl: string,
  transactionId: string,
  expiresAt: Date,
  keyId: string,
): { clientToken: string; checkoutUrl: string } {
  const clientToken = auth.issueClientToken(transactionId, expiresAt, keyId);
  return { clientToken, checkoutUrl: checkoutUrl(baseUrl, transactionId, clientToken) };
}

/**
 * A generate request's `returnUrl`, checked against where this service answers (validation/return-url.ts): the
 * value to store, undefined when none was sent, BAD_USER_INPUT naming the field otherwise.
 */
export function checkedReturnUrl(value: unknown, baseUrl: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const c = new Checker();
  c.check("returnUrl", value, (v) => returnUrlProblem(v, baseUrl));
  c.done("Invalid request");
  return value as string;
}
