import { ProxyAgent, fetch as undiciFetch } from "undici";

/** What the upstream clients call instead of the global fetch. */
export type UpstreamFetch = (url: string, init: RequestInit) => Promise<Response>;

export interface UpstreamHttp {
  fetch: UpstreamFetch;
  /** The proxy in use (credentials removed), or null. */
  proxy: string | null;
  close(): Promise<void>;
}

/**
 * The HTTP client of one upstream: the global fetch, or, with a proxy URL (`http://[user:pass@]host:port`,
 * NETWORK_API_PROXY / GATEWAY_API_PROXY), undici's fetch through a ProxyAgent (a CONNECT tunnel to the
 * upstream; the proxy's credentials, if any, as Proxy-Authorization).
 */
export function upstreamHttp(proxyUrl: string | null): UpstreamHttp {
  if (proxyUrl === null) return { fetch: (url, init) => fetch(url, init), proxy: null, close: async () => undefined };
  // Always a tunnel, for http: upstreams too (undici 8 would forward those as plain proxy requests).
  const agent = new ProxyAgent({ uri: proxyUrl, proxyTunnel: true });
  const shown = new URL(proxyUrl);
  shown.username = "";
  shown.password = "";
  return {
    // undici's own fetch with its own agent: the global fetch's bundled undici may be another version.
    fetch: (url, init) =>
      undiciFetch(url, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher: agent,
      }) as unknown as Promise<Response>,
    proxy: shown.origin,
    close: () => agent.close(),
  };
}
