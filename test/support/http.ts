// A small HTTP client for the tests: `statusOf` for a status alone; for the fuzz suites, keep-alive node:http for
// well-formed requests (it can send duplicate headers and chunked bodies), and a raw socket for requests node:http
// refuses to build (CR, LF or NUL inside a header value, header blocks over the server's limit).
import http from "node:http";
import net from "node:net";

/**
 * The status of a request, its body read to the end: a body left unread holds its socket until the response is
 * garbage-collected, even after the server has gone (two such sockets outlived test/rest/openapi.test.ts).
 */
export async function statusOf(url: string, init?: RequestInit): Promise<number> {
  const res = await fetch(url, init);
  await res.arrayBuffer();
  return res.status;
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Raw header lines as received (names lower-cased), to see exactly what the server sent. */
  rawHeaderNames: string[];
  text: string;
  /** Parsed JSON, or undefined when the body is not JSON. */
  json: unknown;
  ms: number;
}

export interface OutRequest {
  method: string;
  path: string;
  /** Array values are sent as repeated header lines. */
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** Send the body with transfer-encoding: chunked (no content-length), in a few pieces. */
  chunked?: boolean;
}

function describe(r: OutRequest): string {
  const h = Object.fromEntries(
    Object.entries(r.headers)
      .filter(([k]) => !["x-api-key", "authorization"].includes(k))
      .map(([k, v]) => [k, String(v).slice(0, 40)]),
  );
  return `${r.method} ${r.path} body=${r.body?.length ?? 0}${r.chunked ? " chunked" : ""} ${JSON.stringify(h)}`;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class Client {
  readonly agent: http.Agent;
  private readonly host: string;
  private readonly port: number;

  /** `localAddress` (e.g. 127.0.0.2) makes the service see another client address over loopback. */
  constructor(
    baseUrl: string,
    sockets = 16,
    private readonly localAddress?: string,
  ) {
    const u = new URL(baseUrl);
    this.host = u.hostname;
    this.port = Number(u.port);
    // Idle sockets are dropped after 4 s, before the server's 5 s keep-alive timeout closes them under the client.
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets, timeout: 4000 });
  }

  /**
   * One request. A reused keep-alive socket that the server closed as idle just before the request left
   * fails with ECONNRESET; that request is retried once on a fresh socket (what Node's docs advise).
   */
  async send(r: OutRequest, timeoutMs = 30_000): Promise<Answer> {
    try {
      return await this.once(r, timeoutMs);
    } catch (err) {
      // A kept-alive socket the server closed as idle just as it was reused (the race Node's docs describe):
      // sent again once on a fresh socket, and counted. Resets of fresh sockets are failures.
      if ((err as NodeJS.ErrnoException).code === "ECONNRESET" && (err as { reusedSocket?: boolean }).reusedSocket) {
        this.retries++;
        if (this.resetSamples.length < 20)
          this.resetSamples.push(`${describe(r)}, after ${(err as { previous?: string }).previous ?? "?"}`);
        return this.once(r, timeoutMs);
      }
      throw err;
    }
  }

  /** Requests sent twice because the first attempt's connection was reset before any answer. */
  retries = 0;
  /** A few of them, described, for the summary. */
  readonly resetSamples: string[] = [];

  private once(r: OutRequest, timeoutMs: number): Promise<Answer> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | string[]> = { ...r.headers };
      if (r.body !== undefined && !r.chunked) headers["content-length"] = String(r.body.length);
      // Explicit: node:http frames chunked bodies by default for POST/PUT/PATCH only; a DELETE body would go out
      // unframed and be read by the server as the start of the next request.
      if (r.body !== undefined && r.chunked) headers["transfer-encoding"] = "chunked";
      const req = http.request(
        {
          host: this.host,
          port: this.port,
          localAddress: this.localAddress,
          method: r.method,
          path: r.path,
          agent: this.agent,
          headers,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const rawHeaderNames: string[] = [];
            for (let i = 0; i < res.rawHeaders.length; i += 2) rawHeaderNames.push(res.rawHeaders[i].toLowerCase());
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              rawHeaderNames,
              text,
              json: parse(text),
              ms: performance.now() - started,
            });
          });
          res.on("error", reject);
        },
      );
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on("error", (err) =>
        reject(
          Object.assign(err, {
            reusedSocket: req.reusedSocket,
            previous: (req.socket as unknown as { previousRequest?: string } | null)?.previousRequest,
          }),
        ),
      );
      req.on("socket", (sock) => {
        // What this socket carried before: the request a reset is most likely a consequence of.
        const prev = (sock as unknown as { lastRequest?: string }).lastRequest;
        (sock as unknown as { lastRequest?: string; previousRequest?: string }).previousRequest = prev;
        (sock as unknown as { lastRequest?: string }).lastRequest = describe(r);
      });
      if (r.body !== undefined && r.chunked) {
        const third = Math.ceil(r.body.length / 3) || 1;
        for (let i = 0; i < r.body.length; i += third) req.write(r.body.subarray(i, i + third));
      } else if (r.body !== undefined) {
        req.write(r.body);
      }
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * One request written byte for byte on a fresh connection, and one answer read (to its content-length,
 * or until the server closes). Returns status 0 when the server closed without answering.
 * `close` adds `connection: close`. Leave it off for large bodies: a server that answers early (401, 404)
 * and then closes because the client asked it to may reset the connection while the body still
 * arrives, and a reset discards the answer before the client reads it; kept alive, Node reads the rest
 * of the body off the wire and the answer survives.
 */
export function sendRaw(
  baseUrl: string,
  head: Buffer,
  body: Buffer = Buffer.alloc(0),
  opts: { timeoutMs?: number; chunked?: boolean; close?: boolean } = {},
): Promise<Answer> {
  const { timeoutMs = 15_000, chunked = false, close = true } = opts;
  const u = new URL(baseUrl);
  const started = performance.now();
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      s.destroy();
      const all = Buffer.concat(chunks);
      const split = all.indexOf("\r\n\r\n");
      const headText = (split < 0 ? all : all.subarray(0, split)).toString("latin1");
      const [statusLine = "", ...lines] = headText.split("\r\n");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
      const headers: http.IncomingHttpHeaders = {};
      const rawHeaderNames: string[] = [];
      for (const line of lines) {
        const i = line.indexOf(":");
        if (i < 0) continue;
        const name = line.slice(0, i).trim().toLowerCase();
        rawHeaderNames.push(name);
        headers[name] = line.slice(i + 1).trim();
      }
      let bodyBuf: Buffer = split < 0 ? Buffer.alloc(0) : all.subarray(split + 4);
      if (/chunked/i.test(String(headers["transfer-encoding"] ?? ""))) bodyBuf = dechunk(bodyBuf);
      const text = bodyBuf.toString("utf8");
      resolve({ status, headers, rawHeaderNames, text, json: parse(text), ms: performance.now() - started });
    };
    s.on("data", (c: Buffer) => {
      chunks.push(c);
      // Done once the head and content-length bytes of body are in.
      const all = Buffer.concat(chunks);
      const split = all.indexOf("\r\n\r\n");
      const len =
        split < 0 ? NaN : Number(/\r\ncontent-length:\s*(\d+)/i.exec(all.subarray(0, split).toString("latin1"))?.[1]);
      if (Number.isFinite(len) && all.length - split - 4 >= len) finish();
    });
    s.on("end", finish);
    s.on("close", finish);
    s.on("error", () => setTimeout(finish, 50));
    s.setTimeout(timeoutMs, finish);
    s.on("connect", () => {
      s.write(
        Buffer.concat([
          head,
          Buffer.from(`${chunked ? "transfer-encoding: chunked\r\n" : ""}${close ? "connection: close\r\n" : ""}\r\n`),
        ]),
      );
      // The body goes in pieces, and stops as soon as an answer arrives: a server may answer early
      // (401, 413) and close, as HTTP allows; writing on would only earn an EPIPE.
      const piece = 16 * 1024;
      let at = 0;
      const more = () => {
        while (at < body.length && chunks.length === 0 && !done) {
          const part = body.subarray(at, at + piece);
          at += part.length;
          const framed = chunked
            ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n")])
            : part;
          if (!s.write(framed)) return void s.once("drain", more);
        }
        if (at >= body.length && chunked && chunks.length === 0 && !done) s.write("0\r\n\r\n");
      };
      more();
    });
  });
}

function dechunk(b: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  while (i < b.length) {
    const eol = b.indexOf("\r\n", i);
    if (eol < 0) break;
    const size = parseInt(b.subarray(i, eol).toString("latin1"), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(b.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** Runs tasks with at most `width` in flight; results in input order. */
export async function pool<T, R>(items: T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

/** A connection that sent half a request and waits: how the server ended it. */
export interface HalfOpen {
  socket: net.Socket;
  /** When the partial request was written (performance.now()). */
  sentAt: number;
  /** Resolves when the server closes or resets it: what it answered (empty for a reset) and when. */
  closed: Promise<{ at: number; text: string; reset: boolean }>;
  /** Whether it is still open. */
  readonly open: boolean;
}

/**
 * Connects from `localAddress` (another 127.x address is another client on loopback), waits for the TCP
 * handshake, and sends a request head without its final blank line: the server holds it until its headers
 * timeout, or refuses the connection.
 */
export function halfOpen(baseUrl: string, localAddress: string): Promise<HalfOpen> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(u.port), host: u.hostname, localAddress });
    const chunks: Buffer[] = [];
    let reset = false;
    let isOpen = true;
    const closed = new Promise<{ at: number; text: string; reset: boolean }>((done) =>
      socket.once("close", () => {
        isOpen = false;
        done({ at: performance.now(), text: Buffer.concat(chunks).toString("utf8"), reset });
      }),
    );
    const handle = (sentAt: number): HalfOpen => ({
      socket,
      sentAt,
      closed,
      get open() {
        return isOpen;
      },
    });
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNRESET" || err.code === "EPIPE") reset = true;
      else reject(err);
    });
    // A reset can arrive before the client has seen its own handshake complete: that is a refusal too.
    void closed.then(() => resolve(handle(performance.now())));
    socket.once("connect", () => {
      socket.write(`GET /healthz HTTP/1.1\r\nhost: ${u.host}\r\nx-half: `);
      resolve(handle(performance.now()));
    });
  });
}
