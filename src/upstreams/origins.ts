/**
 * Where an upstream answers when its configuration names no address: demo mode's simulators (src/demo/) register
 * the origins they listen on, and the area that calls the upstream reads them when it calls. The areas themselves
 * import no simulator; without demo mode nothing registers, and the configuration's address is the only one.
 */
export class UpstreamOrigins {
  private readonly origins = new Map<string, string>();

  set(upstream: string, origin: string): void {
    this.origins.set(upstream, origin);
  }

  get(upstream: string): string | undefined {
    return this.origins.get(upstream);
  }
}

/** The PayWay link page's API (gateway-link/payway-protocol.ts), on an origin of its own as in production. */
export const PAYWAY_API = "payway-api";
