import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { startTestApp, createTenant, capturedLogger, post, AUTH, ADMIN_TOKEN } from "../support/app.js";
import type { TestApp, Tenant } from "../support/app.js";
import { waitFor } from "../support/wait.js";
import { networkSim } from "../support/simulators.js";
import { loadConfig, EnvReader } from "../../src/config.js";
import { qrSettings } from "../../src/qr/settings.js";

// Issue 36, item 3: a token the network refuses, a network that answers 429, and single-md5 mode's rate, as an
// operator lives with them: one error line when the refusal starts and one when it ends (never a warning per
// batch), a /readyz detail and a metric; Retry-After honoured; single calls under NETWORK_SINGLE_RATE.

/** NETWORK_SINGLE_RATE of the test app, and its NETWORK_SINGLE_CONCURRENCY (the default). */
const RATE = 40;
const CONCURRENCY = 4;

interface LogLine {
  level: number;
  msg: string;
}

describe("the network's limits, as the operator sees them", () => {
  let t: TestApp;
  let tenant: Tenant;
  const log = capturedLogger("info");
  const lines = () => log.lines.map((l) => JSON.parse(l) as LogLine);
  const sim = () => networkSim(t.app);
  const limits = (body: Record<string, unknown>) => post(`${t.url}/sim/network/limits`, body);
  const readyz = async () =>
    (await (await fetch(`${t.url}/readyz`)).json()) as { ok: boolean; details?: Record<string, unknown> };
  const metric = async (name: string) => {
    const text = await (
      await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    return text.split("\n").find((l) => l.startsWith(`${name} `));
  };
  const generate = async () =>
    (await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 3_600_000 }, AUTH.qr(tenant.keys.qr)))
      .body as { transactionId: string; data: { md5: string } };
  const status = async (md5: string) =>
    ((await post(`${t.url}/qr/check`, { md5 }, AUTH.qr(tenant.keys.qr))).body as { status: string }).status;
  /** What the monitor warned per batch: never said of a refused token or a 429 pause. */
  const batchWarnings = () => lines().filter((l) => l.level === 40 && /upstream check failed/.test(l.msg));

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: "info", NETWORK_SINGLE_RATE: String(RATE) }, { logger: log.logger });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());
  afterEach(async () => {
    await limits({ refuseTokens: false, perSecond: null, retryAfterAs: "seconds" });
    await post(`${t.url}/sim/network/fault`, { mode: "ok" });
  });

  it("a refused token: one error line at its start and one at its end over many batches; /readyz and the metric", async () => {
    const pending = [await generate(), await generate(), await generate()];
    const from = log.lines.length;
    await limits({ refuseTokens: true });
    // Five rounds of refused batches: the clock moves past each backoff, so the monitor asks again each time.
    for (let round = 0; round < 5; round++) {
      const refused = sim().state.calls.unauthorized;
      t.clock.advance(61_000);
      await waitFor(async () => sim().state.calls.unauthorized > refused, 15_000);
    }
    const during = lines().slice(from);
    const refusedLines = during.filter((l) => /token is refused/.test(l.msg));
    expect(refusedLines).toEqual([expect.objectContaining({ level: 50 })]);
    expect(refusedLines[0].msg).toMatch(/HTTP 401 .* payments cannot be followed and stay pending: replace the token/);
    expect(batchWarnings()).toEqual([]);
    for (const p of pending) expect(await status(p.data.md5)).toBe("PENDING");
    const ready = await readyz();
    expect(ready.ok).toBe(true); // issuing QRs still works
    expect(ready.details?.networkToken).toMatchObject({
      refusedSince: expect.any(String),
      warning: expect.stringMatching(/the network refuses the API token/),
    });
    expect(await metric("network_token_refused")).toBe("network_token_refused 1");

    await limits({ refuseTokens: false });
    await post(`${t.url}/sim/network/pay`, { md5: pending[0].data.md5 });
    t.clock.advance(61_000);
    await waitFor(async () => (await status(pending[0].data.md5)) === "SUCCESS", 15_000);
    t.clock.advance(61_000);
    await waitFor(async () => sim().state.calls.md5List > 0 && (await metric("network_token_refused"))?.endsWith(" 0"));
    const after = lines().slice(from);
    expect(after.filter((l) => /token is refused/.test(l.msg))).toHaveLength(1);
    expect(after.filter((l) => /token is accepted again/.test(l.msg))).toEqual([
      expect.objectContaining({ level: 50 }),
    ]);
    expect((await readyz()).details?.networkToken).toBeUndefined();
    expect(batchWarnings()).toEqual([]);
  }, 120_000);

  it("a 429: no call before Retry-After, one warning, /readyz says until when; then payments are followed", async () => {
    const from = log.lines.length;
    await limits({ perSecond: 0, retryAfterS: 120 });
    const tx = await generate();
    await waitFor(async () => sim().state.calls.rateLimited > 0, 15_000);
    const reached = () => sim().state.calls.rateLimited + sim().state.calls.md5List;
    const before = reached();
    // The monitor runs every second and the transaction's backoff is a second or two: it is claimed and checked
    // again meanwhile (each a fault, counted), but the client does not call the network before the pause is over.
    await waitFor(async () => {
      const [row] = await t.app.core.db.query<{ f: number }>(
        `select check_failures as f from "transaction" where id = ?`,
        [tx.transactionId],
      );
      return row.f >= 2;
    }, 20_000);
    expect(reached()).toBe(before);
    expect(
      lines()
        .slice(from)
        .filter((l) => /HTTP 429/.test(l.msg)),
    ).toEqual([expect.objectContaining({ level: 40, msg: expect.stringMatching(/Retry-After 120/) })]);
    expect(batchWarnings()).toEqual([]);
    expect((await readyz()).details?.networkRateLimited).toMatchObject({
      until: expect.any(String),
      retryAfter: "120",
    });
    expect(await status(tx.data.md5)).toBe("PENDING");

    await limits({ perSecond: null });
    await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5 });
    t.clock.advance(121_000);
    await waitFor(async () => (await status(tx.data.md5)) === "SUCCESS", 15_000);
    expect((await readyz()).details?.networkRateLimited).toBeUndefined();
  }, 60_000);

  it(`single-md5 mode with 88 pending QRs stays under NETWORK_SINGLE_RATE (${RATE} a second)`, async () => {
    for (let i = 0; i < 11; i++) await Promise.all(Array.from({ length: 8 }, () => generate()));
    await post(`${t.url}/sim/network/fault`, { mode: "md5list-forbidden" });
    const from = sim().state.md5CallTimes.length;
    t.clock.advance(61_000); // everything due at once
    await waitFor(async () => sim().state.md5CallTimes.length - from >= 80, 30_000);
    const times = sim().state.md5CallTimes.slice(from);
    const busiest = Math.max(...times.map((a) => times.filter((b) => b >= a && b < a + 1000).length));
    // A cap measured where the calls arrive: the rate, plus the calls in flight at once that may arrive together.
    expect(busiest).toBeLessThanOrEqual(RATE + CONCURRENCY);
    expect(busiest).toBeGreaterThanOrEqual(RATE / 2); // paced, not stalled
    expect(sim().state.listBatchSizes.every((n) => n <= 50)).toBe(true);
  }, 60_000);
});

describe("the network's settings", () => {
  const config = loadConfig({ NODE_ENV: "test" }, 4096);
  const read = (env: Record<string, string>) => qrSettings(new EnvReader(env), config);

  it("NETWORK_SINGLE_RATE defaults to 10 a second; NETWORK_BATCH_SIZE above the network's 50 is refused", () => {
    expect(read({})).toMatchObject({ singleRate: 10, batchSize: 50 });
    expect(read({ NETWORK_SINGLE_RATE: "3" }).singleRate).toBe(3);
    expect(() => read({ NETWORK_SINGLE_RATE: "0" })).toThrow("NETWORK_SINGLE_RATE must be between 1 and 1000, got 0");
    expect(() => read({ NETWORK_BATCH_SIZE: "51" })).toThrow("NETWORK_BATCH_SIZE must be between 1 and 50, got 51");
  });
});
