import { createHash } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { AppError } from "../../src/errors.js";
import { createNetworkClient, type NetworkClient } from "../../src/qr/network-client.js";
import { networkMonitorPort } from "../../src/qr/qr-monitor.job.js";
import { closedPort, postJson, startNetworkSimulator, type NetworkHarness } from "../support/upstream-servers.js";

const TOKEN = "sit-token-7f3a";
const NOW = new Date("2025-06-01T03:04:05.678Z");

let seq = 0;
/** A fresh md5, as if of a newly issued QR. */
function md5(): string {
  return createHash("md5").update(`qr-${process.pid}-${seq++}`).digest("hex");
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

describe("network md5 client against the simulator", () => {
  let net: NetworkHarness;
  let client: NetworkClient;

  beforeAll(async () => {
    net = await startNetworkSimulator(TOKEN, () => NOW);
    // Clients that expect an answer give it 30 s (a loaded 2-core machine can hold one up for seconds); the timeout
    // tests have their own short ones.
    client = createNetworkClient({ baseUrl: net.apiBase, token: TOKEN, timeoutMs: 30_000 });
  });
  afterAll(() => net.close());
  afterEach(async () => {
    await postJson(`${net.base}/sim/network/fault`, { mode: "ok" });
  });

  async function pay(hash: string, body: Record<string, unknown> = {}): Promise<void> {
    const reply = await postJson(`${net.base}/sim/network/pay`, { md5: hash, ...body });
    expect(reply.status).toBe(200);
  }

  it("reads an md5 nobody paid yet as not found", async () => {
    await expect(client.checkByMd5(md5())).resolves.toEqual({ kind: "not_found" });
  });

  it("reads a paid md5 with hash, payer, payee, amount and dates", async () => {
    const m = md5();
    await pay(m, { toAccountId: "shop@devb", amount: "10.50", currency: "USD", fromAccountId: "dara_kim@abaa" });
    const result = await client.checkByMd5(m);
    expect(result).toEqual({
      kind: "paid",
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      fromAccountId: "dara_kim@abaa",
      toAccountId: "shop@devb",
      amount: "10.5",
      currency: "USD",
      acknowledgedDateMs: NOW.getTime(),
      createdDateMs: expect.any(Number),
      // The paying bank's reference, kept for reconciliation (the export's external_ref column).
      externalRef: expect.stringMatching(/^100FT\d+$/),
    });
    if (result.kind === "paid") expect(result.createdDateMs).toBeLessThan(NOW.getTime());
  });

  it("pays an md5 the app describes with nothing but the md5 in the control", async () => {
    const m = md5();
    net.facts.set(m, { toAccountId: "cafe@devb", amount: "40000", currency: "KHR" });
    await pay(m);
    await expect(client.checkByMd5(m.toUpperCase())).resolves.toMatchObject({
      kind: "paid",
      toAccountId: "cafe@devb",
      amount: "40000",
      currency: "KHR",
    });
  });

  it("reads a failed md5 as failed with the network's message", async () => {
    const m = md5();
    await postJson(`${net.base}/sim/network/fail`, { md5: m });
    await expect(client.checkByMd5(m)).resolves.toEqual({ kind: "failed", message: "Transaction failed." });
  });

  it("says so when the token is rejected, and never reads it as not paid", async () => {
    const wrong = createNetworkClient({ baseUrl: net.apiBase, token: "expired-token", timeoutMs: 30_000 });
    const single = await failure(wrong.checkByMd5(md5()));
    expect(single.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(single.message).toMatch(/unauthorized/i);
    expect(single.extra).toMatchObject({ upstream: "network", reason: "UNAUTHORIZED", httpStatus: 401 });
    const list = await failure(wrong.checkByMd5List([md5(), md5()]));
    expect(list.extra).toMatchObject({ reason: "UNAUTHORIZED" });
  });

  it("turns an HTTP 500 into UPSTREAM_UNAVAILABLE", async () => {
    await postJson(`${net.base}/sim/network/fault`, { mode: "error500" });
    const err = await failure(client.checkByMd5(md5()));
    expect(err.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(err.extra).toMatchObject({ reason: "HTTP_STATUS", httpStatus: 500 });
    expect((await failure(client.checkByMd5List([md5()]))).extra).toMatchObject({ httpStatus: 500 });
  });

  it("turns a non-JSON answer into UPSTREAM_UNAVAILABLE", async () => {
    await postJson(`${net.base}/sim/network/fault`, { mode: "garbage", variant: "text" });
    const err = await failure(client.checkByMd5(md5()));
    expect(err.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(err.extra).toMatchObject({ reason: "BAD_RESPONSE" });
  });

  it("turns JSON of the wrong shape into UPSTREAM_UNAVAILABLE", async () => {
    await postJson(`${net.base}/sim/network/fault`, { mode: "garbage", variant: "json" });
    expect((await failure(client.checkByMd5(md5()))).extra).toMatchObject({ reason: "BAD_RESPONSE" });
    expect((await failure(client.checkByMd5List([md5()]))).extra).toMatchObject({ reason: "BAD_RESPONSE" });
  });

  it("gives up after its timeout instead of waiting for a slow network", async () => {
    // An answer after 6 s, given up at 200 ms: well before the answer even when a loaded machine fires the timer late.
    await postJson(`${net.base}/sim/network/fault`, { mode: "slow", slowMs: 6000 });
    const quick = createNetworkClient({ baseUrl: net.apiBase, token: TOKEN, timeoutMs: 200 });
    const started = Date.now();
    const err = await failure(quick.checkByMd5(md5()));
    expect(Date.now() - started).toBeLessThan(4000);
    expect(err.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(err.extra).toMatchObject({ reason: "TIMEOUT" });
    expect(err.message).toContain("200 ms");
  });

  it("still answers when the network is slow but within the timeout", async () => {
    await postJson(`${net.base}/sim/network/fault`, { mode: "slow", slowMs: 100 });
    await expect(client.checkByMd5(md5())).resolves.toEqual({ kind: "not_found" });
  });

  it("turns a refused connection into UPSTREAM_UNAVAILABLE", async () => {
    const nowhere = createNetworkClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      token: TOKEN,
      timeoutMs: 30_000,
    });
    const err = await failure(nowhere.checkByMd5(md5()));
    expect(err.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(err.extra).toMatchObject({ reason: "CONNECTION" });
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it("checks 120 md5s in 3 bulk calls of at most 50 and maps every answer", async () => {
    const md5s = Array.from({ length: 120 }, () => md5());
    await pay(md5s[5], { toAccountId: "shop@devb", amount: "1.00", currency: "USD" });
    await pay(md5s[60], { toAccountId: "shop@devb", amount: "2.00", currency: "USD" });
    await pay(md5s[119], { toAccountId: "shop@devb", amount: "3.25", currency: "USD" });
    await postJson(`${net.base}/sim/network/fail`, { md5: md5s[100] });
    const callsBefore = net.sim.state.calls.md5List;
    const sizesBefore = net.sim.state.listBatchSizes.length;

    const results = await client.checkByMd5List(md5s);

    expect(net.sim.state.calls.md5List - callsBefore).toBe(3);
    expect(net.sim.state.listBatchSizes.slice(sizesBefore)).toEqual([50, 50, 20]);
    expect(results.size).toBe(120);
    expect(results.get(md5s[5])).toMatchObject({ kind: "paid", amount: "1" });
    expect(results.get(md5s[60])).toMatchObject({ kind: "paid", amount: "2" });
    expect(results.get(md5s[119])).toMatchObject({ kind: "paid", amount: "3.25" });
    expect(results.get(md5s[100])).toEqual({ kind: "failed", message: "Transaction failed." });
    const notFound = [...results.values()].filter((r) => r.kind === "not_found");
    expect(notFound).toHaveLength(116);
  });

  it("honours a smaller batch size", async () => {
    const small = createNetworkClient({ baseUrl: net.apiBase, token: TOKEN, timeoutMs: 30_000, batchSize: 7 });
    const sizesBefore = net.sim.state.listBatchSizes.length;
    await small.checkByMd5List(Array.from({ length: 20 }, () => md5()));
    expect(net.sim.state.listBatchSizes.slice(sizesBefore)).toEqual([7, 7, 6]);
  });

  it("asks once for an md5 given twice, answering under both spellings", async () => {
    const m = md5();
    await pay(m, { toAccountId: "shop@devb", amount: "5", currency: "USD" });
    const sizesBefore = net.sim.state.listBatchSizes.length;
    const results = await client.checkByMd5List([m, m.toUpperCase(), m]);
    expect(net.sim.state.listBatchSizes.slice(sizesBefore)).toEqual([1]);
    expect(results.get(m)).toMatchObject({ kind: "paid" });
    expect(results.get(m.toUpperCase())).toMatchObject({ kind: "paid" });
  });

  it("makes no call for an empty list", async () => {
    const before = net.sim.state.calls.md5List;
    await expect(client.checkByMd5List([])).resolves.toEqual(new Map());
    expect(net.sim.state.calls.md5List).toBe(before);
  });

  it("rejects malformed md5s before calling the network", async () => {
    const before = net.sim.state.calls.md5 + net.sim.state.calls.md5List;
    const err = await failure(client.checkByMd5List([md5(), "not-an-md5"]));
    expect(err.code).toBe("BAD_USER_INPUT");
    expect(err.details).toEqual([{ field: "md5s[1]", message: "must be 32 hexadecimal characters" }]);
    expect((await failure(client.checkByMd5("abc"))).details[0].field).toBe("md5");
    expect(net.sim.state.calls.md5 + net.sim.state.calls.md5List).toBe(before);
  });

  it("refuses a batch size the network does not accept", () => {
    expect(() => createNetworkClient({ baseUrl: net.apiBase, token: TOKEN, timeoutMs: 1000, batchSize: 51 })).toThrow(
      AppError,
    );
    expect(() => createNetworkClient({ baseUrl: net.apiBase, token: TOKEN, timeoutMs: 1000, batchSize: 0 })).toThrow(
      /batchSize/,
    );
  });
});

describe("md5-list endpoint refused (403/404): single checks, re-probe", () => {
  let net: NetworkHarness;
  let now = 0;
  const modes: string[] = [];
  let client: NetworkClient;
  beforeAll(async () => {
    net = await startNetworkSimulator(TOKEN, () => NOW);
    client = createNetworkClient({
      baseUrl: net.apiBase,
      token: TOKEN,
      timeoutMs: 30_000,
      batchSize: 5,
      singleConcurrency: 3,
      listReprobeMs: 60_000,
      now: () => now,
      onMode: (mode) => modes.push(mode),
    });
  });
  afterAll(() => net.close());

  it("falls back to bounded single calls, re-probes the list endpoint later, and says which mode it is in", async () => {
    const md5s = Array.from({ length: 12 }, () => md5());
    await postJson(`${net.base}/sim/network/pay`, {
      md5: md5s[0],
      toAccountId: "a@b",
      amount: "1.00",
      currency: "USD",
    });
    await postJson(`${net.base}/sim/network/fail`, { md5: md5s[1] });
    expect((await postJson(`${net.base}/sim/network/fault`, { mode: "md5list-forbidden" })).status).toBe(200);
    // The list endpoint itself answers a bare nginx 403 page.
    const raw = await fetch(`${net.apiBase}/v1/check_transaction_by_md5_list`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify([md5s[0]]),
    });
    expect(raw.status).toBe(403);
    expect(await raw.text()).toContain("<center>nginx</center>");
    const refused = net.sim.state.calls.md5ListRefused;

    const results = await client.checkByMd5List(md5s);
    expect(results.get(md5s[0])).toMatchObject({ kind: "paid", amount: "1" });
    expect(results.get(md5s[1])).toEqual({ kind: "failed", message: "Transaction failed." });
    expect(md5s.slice(2).map((m) => results.get(m))).toEqual(md5s.slice(2).map(() => ({ kind: "not_found" })));
    expect(client.mode()).toBe("single");
    expect(modes).toEqual(["single"]);
    expect(net.sim.state.calls.md5).toBe(12);
    expect(net.sim.state.maxInFlight).toBeLessThanOrEqual(3);
    // One refused probe, then no list call until the re-probe interval has passed.
    expect(net.sim.state.calls.md5ListRefused).toBe(refused + 1);
    await client.checkByMd5List(md5s.slice(0, 5));
    expect(net.sim.state.calls.md5ListRefused).toBe(refused + 1);
    expect(net.sim.state.calls.md5).toBe(17);

    await postJson(`${net.base}/sim/network/fault`, { mode: "ok" });
    now += 60_000;
    const again = await client.checkByMd5List(md5s.slice(0, 5));
    expect(again.get(md5s[0])).toMatchObject({ kind: "paid" });
    expect(client.mode()).toBe("list");
    expect(modes).toEqual(["single", "list"]);
    expect(net.sim.state.calls.md5List).toBe(1);
    expect(net.sim.state.calls.md5).toBe(17);
  });
});

describe("every call refused with 403 (geo-restriction)", () => {
  let net: NetworkHarness;
  afterAll(() => net.close());

  it("is told once (one log line), not per call, with what was refused; and once more when answered again", async () => {
    net = await startNetworkSimulator(TOKEN, () => NOW);
    const told: unknown[] = [];
    const client = createNetworkClient({
      baseUrl: net.apiBase,
      token: TOKEN,
      timeoutMs: 30_000,
      onRefused: (r) => told.push(r),
    });
    await postJson(`${net.base}/sim/network/fault`, { mode: "geo-blocked" });
    const md5s = [md5(), md5(), md5()];
    for (let i = 0; i < 5; i++) {
      const results = await client.checkByMd5List(md5s);
      expect([...results.values()].every((r) => r.kind === "fault")).toBe(true);
    }
    expect(told).toEqual([
      {
        since: expect.any(String),
        endpoints: ["/v1/check_transaction_by_md5", "/v1/check_transaction_by_md5_list"],
      },
    ]);
    await postJson(`${net.base}/sim/network/fault`, { mode: "ok" });
    await client.checkByMd5(md5());
    expect(told).toEqual([expect.anything(), null]);
  });
});

describe("the network's own limits: a refused token, 429 and Retry-After, paced single calls", () => {
  let net: NetworkHarness;
  let now = NOW.getTime();
  const told: unknown[] = [];
  const pauses: { waitMs: number; retryAfter: string | null }[] = [];
  let client: NetworkClient;
  beforeAll(async () => {
    net = await startNetworkSimulator(TOKEN, () => new Date(now));
    client = createNetworkClient({
      baseUrl: net.apiBase,
      token: TOKEN,
      timeoutMs: 30_000,
      now: () => now,
      onTokenRefused: (r) => told.push(r),
      onRateLimited: (p) => pauses.push(p),
    });
  });
  afterAll(() => net.close());
  const limits = (body: Record<string, unknown>) => postJson(`${net.base}/sim/network/limits`, body);
  /** What a failed test leaves to undo, so the next one starts clean. */
  let afterDone: () => Promise<unknown> = async () => undefined;
  afterEach(async () => {
    await afterDone();
    afterDone = async () => undefined;
  });

  it("tells a refused token once when it starts and once when it ends, however many calls are refused between", async () => {
    afterDone = () => limits({ refuseTokens: false });
    await limits({ refuseTokens: true });
    for (let i = 0; i < 6; i++) {
      const err = await failure(client.checkByMd5List([md5(), md5()]));
      expect(err.extra.reason).toBe("UNAUTHORIZED");
    }
    expect(told).toEqual([
      { since: NOW.toISOString(), endpoint: "/v1/check_transaction_by_md5_list", httpStatus: 401 },
    ]);
    await limits({ refuseTokens: false });
    await client.checkByMd5List([md5()]);
    await client.checkByMd5List([md5()]);
    expect(told).toEqual([expect.objectContaining({ httpStatus: 401 }), null]);
  });

  it("honours a 429: no call until Retry-After has passed (seconds, an HTTP date, absent, absurd)", async () => {
    const reached = () => net.sim.state.calls.rateLimited + net.sim.state.calls.md5List;
    afterDone = () => limits({ perSecond: null, retryAfterAs: "seconds" });
    for (const [limit, waitMs] of [
      [{ retryAfterS: 30, retryAfterAs: "seconds" }, 30_000],
      [{ retryAfterS: 45, retryAfterAs: "date" }, 45_000],
      [{ retryAfterAs: "none" }, 60_000],
      [{ retryAfterS: 86_400, retryAfterAs: "seconds" }, 600_000],
    ] as const) {
      await limits({ perSecond: 0, ...limit });
      const first = await failure(client.checkByMd5List([md5()]));
      expect(first.extra).toMatchObject({ reason: "RATE_LIMITED", httpStatus: 429 });
      // An HTTP date has whole seconds: the pause ends at that second, less than a second early at most.
      const paused = pauses.at(-1)?.waitMs as number;
      expect(first.extra.retryAfterMs).toBe(paused);
      expect(paused).toBeGreaterThan(waitMs - 1000);
      expect(paused).toBeLessThanOrEqual(waitMs);
      const before = reached();
      now += paused - 1000;
      // Still paused: refused here, without a call the network would count against us.
      expect((await failure(client.checkByMd5List([md5()]))).extra.reason).toBe("RATE_LIMITED");
      expect((await failure(client.checkByMd5(md5()))).message).toMatch(/calls wait until/);
      expect(reached()).toBe(before);
      await limits({ perSecond: null });
      now += 1000;
      await expect(client.checkByMd5(md5())).resolves.toEqual({ kind: "not_found" });
    }
    expect(pauses).toHaveLength(4);
  });

  it("in single mode a monitor round claims only what the rate checks within the claim's lease", async () => {
    const paced = createNetworkClient({ baseUrl: net.apiBase, token: TOKEN, timeoutMs: 30_000, singleRate: 20 });
    afterDone = () => Promise.all([paced.close(), postJson(`${net.base}/sim/network/fault`, { mode: "ok" })]);
    const port = networkMonitorPort(paced, () => new Date(), 20);
    // The list endpoint answers: a round is the monitor's whole batch.
    expect(port.batchLimit?.(2750)).toBe(Infinity);
    await postJson(`${net.base}/sim/network/fault`, { mode: "md5list-forbidden" });
    await paced.checkByMd5List([md5()]);
    expect(paced.mode()).toBe("single");
    // 20 calls a second for 2.75 s: 55 md5s, so none is still waiting its turn when another worker may claim it.
    expect(port.batchLimit?.(2750)).toBe(55);
  });

  it("starts single-md5 calls at most NETWORK_SINGLE_RATE a second, with jitter", async () => {
    const paced = createNetworkClient({ baseUrl: net.apiBase, token: TOKEN, timeoutMs: 30_000, singleRate: 20 });
    afterDone = () => Promise.all([paced.close(), postJson(`${net.base}/sim/network/fault`, { mode: "ok" })]);
    await postJson(`${net.base}/sim/network/fault`, { mode: "md5list-forbidden" });
    const from = net.sim.state.md5CallTimes.length;
    const results = await paced.checkByMd5List(Array.from({ length: 41 }, () => md5()));
    expect([...results.values()].every((r) => r.kind === "not_found")).toBe(true);
    const times = net.sim.state.md5CallTimes.slice(from);
    expect(times).toHaveLength(41);
    // In any second, at most 20 calls started (a cap: 41 calls take at least two seconds).
    const busiest = Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 1000).length));
    expect(busiest).toBeLessThanOrEqual(20);
    expect((times.at(-1) as number) - times[0]).toBeGreaterThanOrEqual(2000 - 50);
    // Jitter: the gaps are not all alike (processes started together drift apart).
    const gaps = times.slice(1).map((t, i) => Math.round(t - times[i]));
    expect(new Set(gaps).size).toBeGreaterThan(3);
  });
});
