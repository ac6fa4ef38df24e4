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
