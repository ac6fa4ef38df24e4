import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";

/**
 * A small reverse proxy on 127.0.0.1 in front of the service, doing what the compose file's nginx does
 * (deploy/nginx.conf): plain requests over kept-alive connections, websocket upgrades tunnelled, and
 * `X-Forwarded-For` set to the address it saw, replacing whatever the client sent. It connects to the service from
 * 127.0.0.1, so the service sees every client as that one peer.
 */
export interface ReverseProxy {
  url: string;
  /** Requests and upgrades carried. */
  carried: number;
  close(): Promise<void>;
}

/** The client's address as nginx's $remote_addr writes it (an IPv4-mapped one as IPv4). */
const seen = (socket: Socket) => (socket.remoteAddress ?? "").replace(/^::ffff:/, "");

function forwarded(headers: IncomingHttpHeaders, socket: Socket): IncomingHttpHeaders {
  return { ...headers, "x-forwarded-for": seen(socket) };
}

export async function startReverseProxy(target: string): Promise<ReverseProxy> {
  const { hostname, port } = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const sockets = new Set<Socket>();
  const proxy: ReverseProxy = { url: "", carried: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    proxy.carried++;
    const upstream = httpRequest(
      { host: hostname, port, method: req.method, path: req.url, headers: forwarded(req.headers, req.socket), agent },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  });
  server.on("upgrade", (req, client: Socket, head: Buffer) => {
    proxy.carried++;
    const upstream = connect({ host: hostname, port: Number(port) }, () => {
      const headers = forwarded(req.headers, client);
      const lines = Object.entries(headers).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${k}: ${x}`));
      upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
      s.on("error", () => undefined);
    }
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    for (const s of sockets) s.destroy();
    agent.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return proxy;
}
