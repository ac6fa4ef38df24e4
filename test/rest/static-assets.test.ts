import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import http from "node:http";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import net from "node:net";
import { startTestApp, type TestApp } from "../support/app.js";
import { waitFor } from "../support/wait.js";
import { chooseForm, inFolder, UNCOMPRESSED_PER_ADDRESS, type Coding } from "../../src/cache/static-assets.js";

// Static bundles were sent as they are on disk (swagger-ui's 1.7 MB for every /docs), so a client that never read
// one held that much of the host's TCP memory. Now the smallest form a client accepts, from memory, with an ETag.

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request whose answer is read as sent: no decoding (fetch would undo the content coding). */
function raw(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

const decode = (r: Raw): Buffer =>
  r.headers["content-encoding"] === "br"
    ? brotliDecompressSync(r.body)
    : r.headers["content-encoding"] === "gzip"
      ? gunzipSync(r.body)
      : r.body;

const require = createRequire(import.meta.url);
const BUNDLE_FILE = join(dirname(require.resolve("swagger-ui-dist/package.json")), "swagger-ui-bundle.js");
const BROWSER = "gzip, deflate, br, zstd";

describe("static assets: compressed, kept in memory, revalidated by ETag", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t?.stop());

  it("/docs' bundle: brotli for a browser (under 400 KB), gzip where only gzip is accepted, the file as is otherwise", async () => {
    const file = readFileSync(BUNDLE_FILE);
    const url = `${t.url}/docs/vendor/swagger-ui-bundle.js`;
    const br = await raw(url, { "accept-encoding": BROWSER });
    expect(br.status).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers["vary"]).toMatch(/accept-encoding/i);
    expect(br.headers["content-type"]).toMatch(/javascript/);
    expect(br.headers["cache-control"]).toBe("public, max-age=3600");
    expect(br.body.length).toBeLessThan(400_000);
    expect(Number(br.headers["content-length"])).toBe(br.body.length);
    expect(decode(br).equals(file)).toBe(true);

    const gz = await raw(url, { "accept-encoding": "gzip" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.body.length).toBeLessThan(480_000);
    expect(decode(gz).equals(file)).toBe(true);

    for (const asked of [undefined, "identity", "br;q=0, gzip;q=0"]) {
      const plain = await raw(url, asked === undefined ? {} : { "accept-encoding": asked });
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(plain.body.equals(file)).toBe(true);
    }
    // Each form has its own tag: a cache holding one form never answers with another.
    expect(new Set([br.headers.etag, gz.headers.etag]).size).toBe(2);
  });

  it("answers 304 with no body to If-None-Match naming the form's tag; HEAD has the headers only", async () => {
    const url = `${t.url}/docs/vendor/swagger-ui-bundle.js`;
    const first = await raw(url, { "accept-encoding": BROWSER });
    const again = await raw(url, { "accept-encoding": BROWSER, "if-none-match": first.headers.etag as string });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(first.headers.etag);
    const weak = await raw(url, { "accept-encoding": BROWSER, "if-none-match": `"other", W/${first.headers.etag}` });
    expect(weak.status).toBe(304);
    const stale = await raw(url, { "accept-encoding": BROWSER, "if-none-match": '"not-it"' });
    expect(stale.status).toBe(200);
    const head = await raw(url, { "accept-encoding": BROWSER }, "HEAD");
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(Number(head.headers["content-length"])).toBe(first.body.length);
  });

  it("the explorer's, the dashboard's and the checkout's files are served the same way", async () => {
    for (const [path, cache] of [
      ["/graphiql/vendor/graphiql.min.js", "public, max-age=3600"],
      ["/graphiql/vendor/graphiql.css", "public, max-age=3600"],
      ["/dashboard/vendor/chart.js/chart.umd.min.js", "public, max-age=3600"],
      ["/dashboard/vendor/graphql-ws/client.js", "public, max-age=3600"],
      ["/dashboard/app.css", "no-cache"],
      ["/checkout/checkout.js", "no-cache"],
      ["/checkout/vendor/graphql-ws/client.js", "public, max-age=3600"],
    ] as const) {
      const r = await raw(`${t.url}${path}`, { "accept-encoding": BROWSER });
      expect([path, r.status, r.headers["content-encoding"], r.headers["cache-control"]]).toEqual([
        path,
        200,
        "br",
        cache,
      ]);
      const again = await raw(`${t.url}${path}`, {
        "accept-encoding": BROWSER,
        "if-none-match": String(r.headers.etag),
      });
      expect([path, again.status]).toEqual([path, 304]);
    }
    // A file under 1 KB is not worth compressing; it has its tag all the same.
    const index = await raw(`${t.url}/dashboard/`, { "accept-encoding": BROWSER });
    expect(index.headers["content-encoding"]).toBeUndefined();
    expect(index.body.toString("utf8")).toContain("<pqr-app>");
    const indexAgain = await raw(`${t.url}/dashboard/`, { "if-none-match": String(index.headers.etag) });
    expect(indexAgain.status).toBe(304);
  });

  it("the OpenAPI document and the explorer's schema are compressed too", async () => {
    for (const path of ["/openapi.json", "/graphiql/schema.json"]) {
      const r = await raw(`${t.url}${path}`, { "accept-encoding": BROWSER });
      expect([path, r.status, r.headers["content-encoding"]]).toEqual([path, 200, "br"]);
      expect(JSON.parse(decode(r).toString("utf8"))).toBeInstanceOf(Object);
      expect(r.body.length).toBeLessThan(60_000);
    }
  });

  it("an address holds a few large uncompressed answers at once; over that, 429 until one of its connections closes", async () => {
    const u = new URL(t.url);
    const ask = (localAddress: string) =>
      new Promise<{ socket: net.Socket; head: Promise<string> }>((resolve) => {
        const socket = net.connect({ port: Number(u.port), host: u.hostname, localAddress });
        socket.on("error", () => undefined);
        let text = "";
        const head = new Promise<string>((done) =>
          socket.on("data", (c: Buffer) => {
            text += c.toString("latin1");
            if (text.includes("\r\n\r\n")) done(text.slice(0, text.indexOf("\r\n")));
          }),
        );
        socket.once("connect", () => {
          socket.write(
            `GET /docs/vendor/swagger-ui-bundle.js HTTP/1.1\r\nhost: x\r\naccept-encoding: identity\r\n\r\n`,
          );
          resolve({ socket, head });
        });
      });
    const held = [];
    try {
      for (let i = 0; i < UNCOMPRESSED_PER_ADDRESS; i++) held.push(await ask("127.0.0.7"));
      for (const h of held) expect(await h.head).toMatch(/ 200 /);
      const over = await ask("127.0.0.7");
      held.push(over);
      expect(await over.head).toMatch(/ 429 /);
      const compressed = await raw(`${t.url}/docs/vendor/swagger-ui-bundle.js`, { "accept-encoding": "gzip" });
      expect(compressed.status).toBe(200);
      const other = await ask("127.0.0.8");
      held.push(other);
      expect(await other.head).toMatch(/ 200 /);
      held[0].socket.destroy();
      await waitFor(async () => {
        const again = await ask("127.0.0.7");
        held.push(again);
        return / 200 /.test(await again.head);
      }, 5000);
    } finally {
      for (const h of held) h.socket.destroy();
    }
  });

  it("/dashboard goes to /dashboard/; names outside the served sets are 404", async () => {
    const redirect = await raw(`${t.url}/dashboard?x=1`);
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe("/dashboard/?x=1");
    for (const path of [
      "/docs/vendor/package.json",
      "/docs/vendor/../package.json",
      "/graphiql/vendor/constructor",
      "/graphiql/vendor/__proto__",
      "/dashboard/.hidden",
      "/dashboard/js/nope.js",
      "/dashboard/%2e%2e/index.ts",
      "/checkout/pay.html/x",
    ])
      expect([path, (await raw(`${t.url}${path}`)).status]).toEqual([path, 404]);
  });
});

describe("static assets: the pieces", () => {
  const forms = (["br", "gzip", "identity"] as Coding[]).map((coding) => ({
    coding,
    body: Buffer.alloc(0),
    etag: coding,
  }));
  const pick = (header: string | undefined) => chooseForm(header, forms).coding;

  it("picks the highest q-value the client gives, the smaller form on a tie, identity unless refused", () => {
    expect(pick(undefined)).toBe("identity");
    expect(pick("")).toBe("identity");
    expect(pick("gzip, deflate, br")).toBe("br");
    expect(pick("gzip")).toBe("gzip");
    expect(pick("x-gzip")).toBe("gzip");
    expect(pick("br;q=0.5, gzip;q=0.8")).toBe("gzip");
    expect(pick("br;q=0, gzip;q=0")).toBe("identity");
    expect(pick("*")).toBe("br");
    expect(pick("*;q=0.1, identity;q=0.5")).toBe("identity");
    expect(pick("deflate")).toBe("identity");
    // Nothing we have is acceptable: identity all the same (RFC 9110 12.5.3).
    expect(pick("identity;q=0, deflate")).toBe("identity");
    expect(chooseForm("br", [forms[2]]).coding).toBe("identity");
  });

  it("a folder's resolver names files inside it only", () => {
    const at = inFolder("/srv/public", "index.html");
    expect(at("/")).toBe("/srv/public/index.html");
    expect(at("/js/main.js")).toBe("/srv/public/js/main.js");
    expect(at("/../secret")).toBeNull();
    expect(at("/js/../../secret")).toBeNull();
    expect(at("/.env")).toBeNull();
    expect(at("/js//x.js")).toBeNull();
    expect(inFolder("/srv/public")("/")).toBeNull();
  });
});
