import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { lookup as dnsLookupAsync } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { Agent, buildConnector } from "undici";

/**
 * The one egress policy for addresses the service is told to reach by someone else (webhook endpoints,
 * payment-link pages): in production only public unicast addresses (docs/decisions/0116-one-egress-policy.md).
 *
 * - ipaddr.js classifies the address; anything but `unicast` is refused (loopback, private, link-local,
 *   carrier-grade NAT, documentation/benchmark/reserved ranges, multicast, broadcast, Teredo, ...).
 * - IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-compatible (`::a.b.c.d`) forms are judged as the IPv4 address;
 *   6to4 (2002::/16) and NAT64 (64:ff9b::/96) addresses are judged by the IPv4 address they embed.
 * - `permissive` (EGRESS_ALLOW_PRIVATE_URLS, on unless NODE_ENV=production) allows every address: the demo
 *   delivers to its own loopback receiver and tests use loopback servers.
 */
export interface EgressPolicy {
  readonly permissive: boolean;
}

export const REFUSED_TEXT = "refused: the target did not resolve to a public address";

/** A target the policy refuses. Its message is deliberately coarse (no address, no port: no scan oracle). */
export class EgressRefused extends Error {
  readonly code = "EGRESS_REFUSED";
  constructor() {
    super(REFUSED_TEXT);
  }
}

function embeddedV4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const b = v6.toByteArray();
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  // IPv4-compatible ::a.b.c.d (deprecated, but some stacks still route it); :: and ::1 are classified as IPv6.
  if (zero(0, 12) && !zero(12, 14)) return new ipaddr.IPv4(b.slice(12, 16));
  const range = v6.range();
  if (range === "6to4") return new ipaddr.IPv4(b.slice(2, 6));
  // The well-known NAT64 prefix only (64:ff9b::/96); the local-use prefix 64:ff9b:1::/48 stays refused.
  if (range === "rfc6052" && zero(4, 12) && b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b)
    return new ipaddr.IPv4(b.slice(12, 16));
  return null;
}

/** Whether one literal address is a public unicast address (the only kind allowed in strict mode). */
export function isPublicAddress(address: string): boolean {
  const literal = address.replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(literal)) return false;
  const parsed = ipaddr.parse(literal);
  if (parsed.kind() === "ipv6") {
    const v4 = embeddedV4(parsed as ipaddr.IPv6);
    if (v4 !== null) return v4.range() === "unicast";
  }
  return parsed.range() === "unicast";
}

export function allows(policy: EgressPolicy, address: string): boolean {
  return policy.permissive || isPublicAddress(address);
}

/**
 * A URL's host as the policy judges it: without IPv6 brackets and without trailing dots, because `localhost.`
 * (the fully qualified spelling) is `localhost`. The WHATWG parser has already lower-cased names and turned
 * IPv4 spellings such as `127.1`, `0x7f.1` or `2130706433` into dotted quads.
 */
const hostOf = (u: URL) => u.hostname.replace(/^\[|\]$/g, "").replace(/\.+$/, "");

/**
 * Names that mean this machine whatever DNS answers: `localhost` and every name under it (RFC 6761), and the
 * loopback names Linux distributions put in /etc/hosts.
 */
const LOOPBACK_NAMES: ReadonlySet<string> = new Set([
  "localhost",
  "localhost.localdomain",
  "localhost6",
  "localhost6.localdomain6",
  "ip6-localhost",
  "ip6-loopback",
]);

export function isLoopbackName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, "");
  return LOOPBACK_NAMES.has(name) || name.endsWith(".localhost");
}

/**
 * The shape check of a URL given by a user (at registration): http(s), no credentials, and in strict mode
 * no literal non-public address and no loopback name in any spelling. Names are checked again at every
 * connection.
 */
export function checkTargetUrl(raw: string, policy: EgressPolicy): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return "must be a URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "must use http or https";
  if (u.username || u.password) return "must not contain credentials";
  if (policy.permissive) return null;
  const host = hostOf(u);
  if (host === "") return "must name a host";
  if (isLoopbackName(host) || (isIP(host) !== 0 && !isPublicAddress(host)))
    return "must not point at a loopback, private or reserved address";
  return null;
}

/**
 * Resolve a URL's host now and say whether every address is allowed. For targets another program connects to
 * (Chromium) a name that does not resolve is refused; `unresolved` says what it is instead (webhook
 * registration passes it: each delivery resolves the name again and fails closed). The webhook sender itself
 * does better at connect time, see egressAgent.
 */
export async function resolvesAllowed(raw: string, policy: EgressPolicy, unresolved = false): Promise<boolean> {
  if (policy.permissive) return true;
  const host = hostOf(new URL(raw));
  if (isIP(host) !== 0) return isPublicAddress(host);
  const addrs = await dnsLookupAsync(host, { all: true, verbatim: true }).catch(() => null);
  if (addrs === null || addrs.length === 0) return unresolved;
  return addrs.every((a) => isPublicAddress(a.address));
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A dns.lookup replacement for sockets: resolves once, refuses the connection when any address is not
 * allowed or when resolution fails (fail closed), and hands the checked addresses to the socket, so the
 * address that was checked is the one connected to (no second resolution, no DNS-rebinding window).
 */
export function guardedLookup(policy: EgressPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : (options.family ?? 0);
    dnsLookup(hostname, { family, all: true, verbatim: true }, (err, addrs) => {
      // Fail closed; in strict mode a failed resolution reads like any refusal (no "this name exists" oracle).
      if (err) return callback(policy.permissive ? err : new EgressRefused(), []);
      if (addrs.length === 0 || !addrs.every((a) => allows(policy, a.address)))
        return callback(new EgressRefused(), []);
      if (options.all === true) return callback(null, addrs);
      const first = addrs[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * An undici dispatcher enforcing the policy at connect time: literal addresses are checked before the
 * socket opens, names through guardedLookup. Every outbound request to a user-given URL goes through it.
 */
export function egressAgent(policy: EgressPolicy, opts: { connectTimeoutMs?: number } = {}): Agent {
  const base = buildConnector({ lookup: guardedLookup(policy), timeout: opts.connectTimeoutMs ?? 10_000 });
  return new Agent({
    connect(options, callback) {
      const host = options.hostname.replace(/^\[|\]$/g, "");
      if (isIP(host) !== 0 && !allows(policy, host)) return callback(new EgressRefused(), null);
      return base(options, callback);
    },
  });
}

/** The log text of a failed delivery: a refused target says only that, so the log is no port-scan oracle. */
export function isEgressRefusal(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as never, i++)
    if (e.code === "EGRESS_REFUSED") return true;
  return false;
}
