import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

/** Loopback, private, link-local and unique-local ranges: never a webhook target in production (SSRF). */
export function isPrivateAddress(ip: string): boolean {
  if (isIP(ip) === 4) {
    const [a, b] = ip.split(".").map(Number);
    return (
      a === 10 ||
      a === 127 ||
      a === 0 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  const v = ip.toLowerCase();
  if (v.startsWith("::ffff:")) return isPrivateAddress(v.slice(7));
  return v === "::1" || v === "::" || v.startsWith("fc") || v.startsWith("fd") || v.startsWith("fe80");
}

export function checkWebhookUrl(raw: string, allowPrivate: boolean): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return "must be a URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "must use http or https";
  if (u.username || u.password) return "must not contain credentials";
  if (!allowPrivate) {
    const host = u.hostname.replace(/^\[|\]$/g, "");
    if (host === "localhost" || host.endsWith(".localhost") || (isIP(host) !== 0 && isPrivateAddress(host)))
      return "must not point at a loopback or private address";
  }
  return null;
}

/** At delivery time the name is resolved again, so a DNS answer cannot smuggle a private address in. */
export async function resolvesToPrivate(raw: string): Promise<boolean> {
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0) return isPrivateAddress(host);
  const addrs = await lookup(host, { all: true }).catch(() => []);
  return addrs.some((a) => isPrivateAddress(a.address));
}
