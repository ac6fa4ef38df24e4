import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { startTestApp, createTenant, capturedLogger, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { Client, halfOpen, type HalfOpen } from "../support/http.js";
import { addressKey, RefusalLog } from "../../src/rest/connection-caps.js";
import { defaultMaxConnections, loadConfig, openFilesLimit } from "../../src/config.js";
import { waitFor } from "../support/wait.js";

// The finding: 19,900 half-sent requests from one address used every file descriptor; /healthz and every
// tenant's generate failed, nothing was logged. Caps per address and per listener, short header timers.

const PER_ADDRESS = 5;
const TOTAL = 24;
const HEADERS_TIMEOUT_MS = 1500;

describe("connection caps per client address and per listener, and the request timers", () => {
  let t: TestApp;
  let tenant: Tenant;
  const log = capturedLogger("warn");
  const held: HalfOpen[] = [];
  beforeAll(async () => {
    t = await startTestApp(
      {
        LOG_LEVEL: "warn",
        HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
        HTTP_MAX_CONNECTIONS: String(TOTAL),
        HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        HTTP_REQUEST_TIMEOUT_MS: "3000",
      },
      { logger: log.logger },
    );
    tenant = await createTenant(t);
  });
  afterEach(() => {
    for (const h of held.splice(0)) h.socket.destroy();
  });
  afterAll(async () => t?.stop());

  /** Opens connections from `address` one after another (so the server sees them in this order). */
  const hold = async (address: string, n: number) => {
    const out: HalfOpen[] = [];
    for (let i = 0; i < n; i++) out.push(await halfOpen(t.url, address));
    held.push(...out);
    return out;
  };
  const refusalLines = (field: string) => log.lines.filter((l) => l.includes(field) && l.includes("limit"));

  it("over the cap, an address's connections are closed at once; another address's /healthz and generate answer", async () => {
    const kept = await hold("127.0.0.3", PER_ADDRESS);
    const over = await hold("127.0.0.3", 3);
    for (const o of over) {
      const end = await o.closed;
      expect(end.text).toBe(""); // reset before a byte was parsed or answered
    }
    // Closed while the connections under the cap are still held: long before any request timer.
    expect(kept.every((k) => k.open)).toBe(true);

    const other = new Client(t.url, 1, "127.0.0.2");
    try {
      const health = await other.send({ method: "GET", path: "/healthz", headers: {} });
      expect(health.status).toBe(200);
      const body = Buffer.from(JSON.stringify({ amount: 1, currency: 840, expiredAfter: 60000 }));
      const generate = await other.send({
        method: "POST",
        path: "/qr/generate",
        headers: { "content-type": "application/json", ...AUTH.qr(tenant.keys.qr) },
        body,
      });
      expect(generate.status).toBe(200);
      expect((generate.json as { transactionId?: string }).transactionId).toMatch(/^txn_/);
    } finally {
      other.close();
    }
    expect(kept.every((k) => k.open)).toBe(true);

    // One warn line for the address, not one per refused connection.
    const lines = refusalLines('"address":"127.0.0.3"');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 40, listener: "public", limit: PER_ADDRESS, refused: 1 });
  });

  it("a half-sent request is closed with 408 within the headers timeout (plus the timer's check interval)", async () => {
    const [h] = await hold("127.0.0.4", 1);
    const end = await h.closed;
    const after = end.at - h.sentAt;
    expect(after).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    // The check runs every headersTimeout / 4 here; a second of slack for a loaded machine.
    expect(after).toBeLessThan(HEADERS_TIMEOUT_MS + HEADERS_TIMEOUT_MS / 4 + 1000);
    expect(end.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(end.text.slice(end.text.indexOf("\r\n\r\n") + 4))).toMatchObject({
      error: { code: "BAD_USER_INPUT", details: [] },
    });
  });

  it("the listener's total is capped too: a fresh address is refused while it is full, and logged once", async () => {
    // Kept-alive connections from addresses that each stay under their own cap, until the listener is full.
    const clients: Client[] = [];
    const healthz = (c: Client) => c.send({ method: "GET", path: "/healthz", headers: {} }, 5000);
    try {
      let refused = 0;
      for (let a = 10; a < 10 + TOTAL && refused === 0; a++) {
        const c = new Client(t.url, PER_ADDRESS - 1, `127.0.0.${a}`);
        clients.push(c);
        const answers = await Promise.allSettled(Array.from({ length: PER_ADDRESS - 1 }, () => healthz(c)));
        refused = answers.filter((r) => r.status === "rejected").length;
      }
      expect(refused).toBeGreaterThan(0);
      const fresh = await halfOpen(t.url, "127.0.0.99");
      expect((await fresh.closed).text).toBe("");
      const lines = refusalLines('"listener":"public"').filter((l) => !l.includes('"address"'));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0])).toMatchObject({ limit: TOTAL, refused: 1 });
    } finally {
      for (const c of clients) c.close();
    }
    // Once the server has seen them close (the clients' FINs arrive a moment later), the address is let in.
    const again = new Client(t.url, 1, "127.0.0.99");
    try {
      await waitFor(
        () =>
          healthz(again).then(
            (r) => r.status === 200,
            () => false,
          ),
        5000,
        50,
      );
    } finally {
      again.close();
    }
  });
});

describe("connection caps: the pieces", () => {
  it("an address is an IPv4 address (mapped ones too) or an IPv6 /64", () => {
    expect(addressKey("127.0.0.3")).toBe("127.0.0.3");
    expect(addressKey("::ffff:127.0.0.3")).toBe("127.0.0.3");
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:2:bbbb::9")).toBe("2001:db8:1:2::/64");
  });

  it("a refusal is logged once per quiet period, with the count of those only counted", () => {
    let now = 0;
    const log = new RefusalLog(() => now, 60_000);
    expect(log.refused("a")).toBe(1);
    expect(log.refused("a")).toBeNull();
    expect(log.refused("b")).toBe(1);
    now += 59_999;
    expect(log.refused("a")).toBeNull();
    now += 1;
    expect(log.refused("a")).toBe(3);
  });

  it("the default total sits well under the open-files limit, read from /proc/self/limits", () => {
    const limits =
      "Limit  Soft Limit  Hard Limit  Units\nMax open files            20000                20000                files     \n";
    expect(openFilesLimit(() => limits)).toBe(20000);
    expect(openFilesLimit(() => "Max open files  unlimited  unlimited  files\n")).toBeNull();
    expect(
      openFilesLimit(() => {
        throw new Error("no /proc");
      }),
    ).toBeNull();
    expect(defaultMaxConnections(20000)).toBe(8000);
    expect(defaultMaxConnections(1024)).toBe(409);
    const config = loadConfig({}, 1024);
    expect(config.http).toMatchObject({ maxConnections: 409, maxConnectionsPerAddress: 102, headersTimeoutMs: 10_000 });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: "40000" })).toThrow(/HTTP_REQUEST_TIMEOUT_MS/);
  });
});
