import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { AppError } from "../../src/errors.js";
import { createUpstreamClient, type UpstreamClient } from "../../src/upstreams/http-client.js";
import { closedPort } from "../support/upstream-servers.js";

// The one HTTP client of the upstreams: what every upstream call gets whatever its protocol (the area clients'
// own tests cover their protocols through it).

describe("the upstreams' HTTP client", () => {
  let server: Server;
  let base: string;
  let client: UpstreamClient;
  let hasty: UpstreamClient;
  const seen: { headers: IncomingMessage["headers"]; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        seen.push({ headers: req.headers, body });
        if (req.url === "/slow") setTimeout(() => res.end("late"), 5000).unref();
        else if (req.url === "/moved") res.writeHead(302, { location: "/elsewhere" }).end("moved");
        else res.writeHead(503, { "content-type": "text/html" }).end("<h1>busy</h1>");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Answers are given 30 s: on a loaded 2-core machine the file's first call once took more than 200 ms to come
    // back. The timeouts are the hasty client's (200 ms) and a call's own, against an answer that takes 5 s.
    client = createUpstreamClient({
      upstream: "test",
      label: "test API",
      baseUrl: `${base}/`,
      timeoutMs: 30_000,
      proxy: null,
    });
    hasty = createUpstreamClient({ upstream: "test", label: "test API", baseUrl: base, timeoutMs: 200, proxy: null });
  });
  afterAll(async () => {
    await client.close();
    await hasty.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("posts JSON with the JSON headers, and hands back any status as an answer (a 3xx is not followed)", async () => {
    // The answer's headers come back too (a 429's Retry-After is read from them).
    const moved = await client.postJson("/moved", { a: 1 }, { authorization: "Bearer t" });
    expect(moved).toMatchObject({ status: 302, text: "moved", headers: { location: "/elsewhere" } });
    expect(await client.post({ path: "/x", body: "{}" })).toMatchObject({ status: 503, text: "<h1>busy</h1>" });
    expect(seen[0].body).toBe('{"a":1}');
    expect(seen[0].headers).toMatchObject({
      "content-type": "application/json",
      accept: "application/json",
      authorization: "Bearer t",
    });
    expect(seen.map((s) => s.headers.host)).toEqual([new URL(base).host, new URL(base).host]);
    expect(seen[0].headers["user-agent"]).toBeUndefined();
    // The network and gateway clients keep the User-Agent Node's fetch sent them; a call's own header wins.
    const named = createUpstreamClient({
      upstream: "test",
      label: "test API",
      baseUrl: base,
      timeoutMs: 30_000,
      proxy: null,
      userAgent: "node",
    });
    await named.postJson("/x", {});
    await named.post({ path: "/x", body: "{}", headers: { "user-agent": "Mozilla/5.0" } });
    await named.close();
    expect(seen.slice(2).map((s) => s.headers["user-agent"])).toEqual(["node", "Mozilla/5.0"]);
  });

  it("no answer in time → UPSTREAM_UNAVAILABLE TIMEOUT naming the upstream, the endpoint and the timeout", async () => {
    const started = Date.now();
    const err = (await hasty.post({ path: "/slow", body: "{}" }).catch((e: unknown) => e)) as AppError;
    expect(Date.now() - started).toBeLessThan(4000);
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(err.message).toBe("test API /slow: no answer within 200 ms");
    expect(err.extra).toEqual({ upstream: "test", endpoint: "/slow", reason: "TIMEOUT" });
    // A call's own timeout wins; exchange() says the same without throwing.
    expect(await client.exchange({ path: "/slow", body: "{}", timeoutMs: 100 })).toEqual({
      ok: false,
      reason: "TIMEOUT",
      what: "no answer within 100 ms",
    });
  });

  it("no connection → UPSTREAM_UNAVAILABLE CONNECTION with the socket's error code", async () => {
    const nowhere = createUpstreamClient({
      upstream: "test",
      label: "test API",
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      timeoutMs: 2000,
      proxy: null,
    });
    const err = (await nowhere.postJson("/x", {}).catch((e: unknown) => e)) as AppError;
    await nowhere.close();
    expect(err.message).toBe("test API /x: cannot connect (ECONNREFUSED)");
    expect(err.extra).toEqual({ upstream: "test", endpoint: "/x", reason: "CONNECTION" });
  });

  it("a status that means no answer is the same error shape, and a proxy is shown without its credentials", async () => {
    expect(client.statusFault("/x", 502).extra).toEqual({
      upstream: "test",
      endpoint: "/x",
      reason: "HTTP_STATUS",
      httpStatus: 502,
    });
    expect(client.statusFault("/x", 502).message).toBe("test API /x: HTTP 502");
    const proxied = createUpstreamClient({
      upstream: "test",
      label: "test API",
      timeoutMs: 1000,
      proxy: "http://user:s3cret@127.0.0.1:3128",
    });
    expect(proxied.proxy).toBe("http://127.0.0.1:3128");
    await proxied.close();
  });
});
