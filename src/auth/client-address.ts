import type { IncomingHttpHeaders } from "node:http";
import type ipaddr from "ipaddr.js";
import { parseCidr, strictAddress } from "../config.js";

/**
 * Who a request comes from, for every budget kept per client address (the failed-credential throttle, the
 * rate limiter's anonymous buckets, the pushback's buckets, websockets per address): the TCP peer, unless the
 * peer is one of TRUSTED_PROXIES, in which case the address that proxy forwarded in X-Forwarded-For — the
 * rightmost hop that is not itself a trusted proxy (docs/decisions/0168-trusted-proxies.md). Anything a client
 * writes into the header itself sits to the left of what the proxies appended, so it is never reached.
 */

/** What the express request and the websocket upgrade's request both are, as far as this reads them. */
export interface AddressedRequest {
  socket: { remoteAddress?: string };
  headers: IncomingHttpHeaders;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** The parsed ranges of each validated list (config.ts gives the same array for the life of the process). */
const compiled = new WeakMap<readonly string[], Range[]>();

function rangesOf(trusted: readonly string[]): Range[] {
  let ranges = compiled.get(trusted);
  if (ranges === undefined) {
    ranges = trusted.map(parseCidr);
    compiled.set(trusted, ranges);
  }
  return ranges;
}

/** One X-Forwarded-For hop: an address, with the `[v6]:port` or `v4:port` some proxies write reduced to it. */
function hopAddress(hop: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(hop);
  if (bracketed) return strictAddress(bracketed[1] as string);
  const v4port = /^([\d.]+):\d{1,5}$/.exec(hop);
  return strictAddress(v4port ? (v4port[1] as string) : hop);
}

function isTrusted(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: Range[]): boolean {
  return ranges.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
}

/** Whether `address` (a socket's remote address) is one of the trusted proxies. */
export function isTrustedProxy(address: string | undefined, trusted: readonly string[]): boolean {
  if (address === undefined || trusted.length === 0) return false;
  const parsed = strictAddress(address);
  return parsed !== null && isTrusted(parsed, rangesOf(trusted));
}

/**
 * The client address of a request (see the top of this file). Only X-Forwarded-For is read, never RFC 7239's
 * `Forwarded`: a proxy that sets one header and passes a client's copy of the other through would otherwise let
 * the client choose its address. A hop that is not an address ends the walk at the last proxy that is.
 */
export function clientAddress(req: AddressedRequest, trusted: readonly string[]): string {
  const peer = req.socket.remoteAddress ?? "unknown";
  if (trusted.length === 0) return peer;
  const ranges = rangesOf(trusted);
  let address = strictAddress(peer);
  if (address === null || !isTrusted(address, ranges)) return peer;
  const header = req.headers["x-forwarded-for"];
  const hops = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress((hops[i] as string).trim());
    if (hop === null) break;
    address = hop;
    if (!isTrusted(hop, ranges)) break;
  }
  return address.toString();
}
