import { createServer, request as httpRequest, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A small forward proxy on 127.0.0.1 (CONNECT tunnels, and absolute-URI HTTP requests), recording every
 * target it carried: what the upstream clients' proxy settings are tested against.
 */
export interface TestProxy {
  url: string;
  /** "CONNECT host:port" or "GET http://…" per request carried. */
  seen: string[];
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** The address the proxy connects out from (127.0.0.2: an address other than its callers'). */
  localAddress?: string;
  /** Required Proxy-Authorization (Basic user:pass); without it the proxy answers 407. */
  credentials?: { username: string; password: string };
}

export async function startProxy(opts: ProxyOptions = {}): Promise<TestProxy> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const expected = opts.credentials
    ? `Basic ${Buffer.from(`${opts.credentials.username}:${opts.credentials.password}`).toString("base64")}`
    : null;
  const authorised = (header: string | undefined) => expected === null || header === expected;
  const server: Server = createServer((req, res) => {
    if (!authorised(req.headers["proxy-authorization"])) {
      res.writeHead(407, { "proxy-authenticate": 'Basic realm="test"' }).end();
      return;
    }
    seen.push(`${req.method} ${req.url}`);
    const target = new URL(req.url ?? "");
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        localAddress: opts.localAddress,
        path: target.pathname + target.search,
        method: req.method,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on("connect", (req, client: Socket, head: Buffer) => {
    if (!authorised(req.headers["proxy-authorization"])) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n');
      return;
    }
    seen.push(`CONNECT ${req.url}`);
    const [host, port] = (req.url ?? "").split(":");
    const upstream = connect({ port: Number(port), host, localAddress: opts.localAddress }, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
