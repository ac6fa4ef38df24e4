import { createHash } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { postJson, startNetworkSimulator, type NetworkHarness } from "../support/upstream-servers.js";

const TOKEN = "sim-token-42";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const NOW = new Date("2025-03-04T05:06:07.000Z");

let seq = 0;
const md5 = () => createHash("md5").update(`sim-${process.pid}-${seq++}`).digest("hex");

describe("network simulator speaks the network's protocol", () => {
  let net: NetworkHarness;
  let single: string;
  let list: string;

  beforeAll(async () => {
    net = await startNetworkSimulator(TOKEN, () => NOW);
    single = `${net.apiBase}/v1/check_transaction_by_md5`;
    list = `${net.apiBase}/v1/check_transaction_by_md5_list`;
  });
  afterAll(() => net.close());
  afterEach(async () => {
    await postJson(`${net.base}/sim/network/fault`, { mode: "ok" });
  });

  it("answers a missing or wrong Bearer token with the unauthorized envelope", async () => {
    const unauthorized = { responseCode: 1, responseMessage: "Unauthorized", errorCode: 6, data: null };
    for (const headers of [{}, { authorization: "Bearer nope" }, { authorization: TOKEN }] as Record<
      string,
      string
    >[]) {
      const reply = await postJson(single, { md5: md5() }, headers);
      expect(reply.status).toBe(401);
      expect(reply.json).toEqual(unauthorized);
    }
  });

  it("answers an unknown md5 with errorCode 1", async () => {
    const reply = await postJson(single, { md5: md5() }, AUTH);
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({
      responseCode: 1,
      responseMessage: "Transaction could not be found. Please check and try again.",
      errorCode: 1,
      data: null,
    });
  });

  it("answers a paid md5 with responseCode 0 and the transaction", async () => {
    const m = md5();
    const paid = await postJson(`${net.base}/sim/network/pay`, {
      md5: m,
      toAccountId: "shop@devb",
      amount: "12.34",
      currency: "USD",
      description: "order 7",
    });
    expect(paid.status).toBe(200);
    const reply = await postJson(single, { md5: m }, AUTH);
    expect(reply.json).toEqual({
      responseCode: 0,
      responseMessage: "Getting transaction successfully.",
      errorCode: null,
      data: {
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        fromAccountId: expect.stringMatching(/^[a-z_]+@[a-z]+$/),
        toAccountId: "shop@devb",
        currency: "USD",
        amount: 12.34,
        description: "order 7",
        createdDateMs: expect.any(Number),
        acknowledgedDateMs: NOW.getTime(),
        externalRef: expect.stringMatching(/^100FT\d{10}$/),
      },
    });
  });

  it("pays another amount, currency or receiving account than the QR's when the body says so (the other facts stay the QR's)", async () => {
    // The answer's data fields as the Bakong Open API Documentation (v1.0.2, §5.3) lists them.
    const qr = { toAccountId: "shop@devb", amount: "1.50", currency: "USD" };
    const cases: [Record<string, string>, Record<string, unknown>][] = [
      [{ amount: "1.00" }, { toAccountId: "shop@devb", amount: 1, currency: "USD" }],
      [
        { amount: "6150", currency: "KHR" },
        { toAccountId: "shop@devb", amount: 6150, currency: "KHR" },
      ],
      [{ toAccountId: "someone_else@abaa" }, { toAccountId: "someone_else@abaa", amount: 1.5, currency: "USD" }],
    ];
    for (const [override, answered] of cases) {
      const m = md5();
      net.facts.set(m, qr);
      expect((await postJson(`${net.base}/sim/network/pay`, { md5: m, ...override })).status).toBe(200);
      const reply = await postJson(single, { md5: m }, AUTH);
      expect((reply.json as { data: Record<string, unknown> }).data).toMatchObject({
        ...answered,
        hash: expect.any(String),
      });
    }
  });

  it("answers a failed md5 with errorCode 3", async () => {
    const m = md5();
    await postJson(`${net.base}/sim/network/fail`, { md5: m });
    const reply = await postJson(single, { md5: m }, AUTH);
    expect(reply.json).toEqual({ responseCode: 1, responseMessage: "Transaction failed.", errorCode: 3, data: null });
  });

  it("answers a bulk request item by item, in the order asked", async () => {
    const [paid, failed, unknown] = [md5(), md5(), md5()];
    await postJson(`${net.base}/sim/network/pay`, {
      md5: paid,
      toAccountId: "shop@devb",
      amount: "100",
      currency: "KHR",
    });
    await postJson(`${net.base}/sim/network/fail`, { md5: failed });
    const reply = await postJson(list, [unknown, paid, failed], AUTH);
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ responseCode: 0, errorCode: null });
    const data = (reply.json as { data: Record<string, unknown>[] }).data;
    expect(data.map((d) => [d.md5, d.status])).toEqual([
      [unknown, "NOT_FOUND"],
      [paid, "SUCCESS"],
      [failed, "FAILED"],
    ]);
    expect(data[0]).toMatchObject({ message: expect.any(String), data: null });
    expect(data[1].data).toMatchObject({ toAccountId: "shop@devb", amount: 100, currency: "KHR" });
  });

  it("refuses bulk bodies that are not an array of 1 to 50 md5 strings", async () => {
    for (const body of [[], Array.from({ length: 51 }, () => md5()), { md5List: [md5()] }, [1, 2]]) {
      const reply = await postJson(list, body, AUTH);
      expect(reply.status).toBe(400);
      expect(reply.json).toMatchObject({ responseCode: 1, errorCode: 5, data: null });
    }
  });

  it("counts the calls that reach each endpoint", async () => {
    const before = { ...net.sim.state.calls };
    await postJson(single, { md5: md5() }, AUTH);
    await postJson(list, [md5(), md5()], AUTH);
    await postJson(list, [md5()], { authorization: "Bearer wrong" });
    expect(net.sim.state.calls).toEqual({
      md5: before.md5 + 1,
      md5List: before.md5List + 1,
      md5ListRefused: 0,
      deeplink: 0,
      rateLimited: 0,
      unauthorized: before.unauthorized + 1,
    });
  });

  it("refuses every token while told to, as it refuses an expired one (401, errorCode 6), and accepts them after", async () => {
    const limits = await postJson(`${net.base}/sim/network/limits`, { refuseTokens: true });
    expect(limits.json).toMatchObject({ refuseTokens: true, perSecond: null });
    for (const url of [single, list]) {
      const reply = await postJson(url, url === single ? { md5: md5() } : [md5()], AUTH);
      expect(reply.status).toBe(401);
      expect(reply.json).toEqual({ responseCode: 1, responseMessage: "Unauthorized", errorCode: 6, data: null });
    }
    await postJson(`${net.base}/sim/network/limits`, { refuseTokens: false });
    expect((await postJson(single, { md5: md5() }, AUTH)).status).toBe(200);
  });

  it("answers 429 with Retry-After past its per-second limit (seconds, an HTTP date, or none)", async () => {
    const call = () =>
      fetch(single, {
        method: "POST",
        headers: { ...AUTH, "content-type": "application/json" },
        body: JSON.stringify({ md5: md5() }),
      });
    try {
      await postJson(`${net.base}/sim/network/limits`, { perSecond: 2, retryAfterS: 7 });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push(await call());
      expect(statuses.map((r) => r.status)).toEqual([200, 200, 429, 429]);
      expect(statuses[2].headers.get("retry-after")).toBe("7");
      await postJson(`${net.base}/sim/network/limits`, { perSecond: 0, retryAfterAs: "date" });
      const dated = await call();
      expect(dated.status).toBe(429);
      expect(Date.parse(dated.headers.get("retry-after") ?? "")).toBe(NOW.getTime() + 7000);
      await postJson(`${net.base}/sim/network/limits`, { retryAfterAs: "none" });
      expect((await call()).headers.get("retry-after")).toBeNull();
      const bad = await postJson(`${net.base}/sim/network/limits`, { perSecond: -1, retryAfterAs: "later" });
      expect(bad.status).toBe(400);
    } finally {
      await postJson(`${net.base}/sim/network/limits`, { perSecond: null, retryAfterAs: "seconds", retryAfterS: 5 });
    }
  });

  it("injects faults into the API but not into the controls", async () => {
    await postJson(`${net.base}/sim/network/fault`, { mode: "error500" });
    expect((await postJson(single, { md5: md5() }, AUTH)).status).toBe(500);
    await postJson(`${net.base}/sim/network/fault`, { mode: "garbage" });
    const garbage = await postJson(single, { md5: md5() }, AUTH);
    expect(garbage.status).toBe(200);
    expect(garbage.json).toBeUndefined();
    await postJson(`${net.base}/sim/network/fault`, { mode: "slow", slowMs: 150 });
    const started = Date.now();
    expect((await postJson(single, { md5: md5() }, AUTH)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });
});

describe("network simulator controls validate their input", () => {
  let net: NetworkHarness;
  beforeAll(async () => {
    net = await startNetworkSimulator(TOKEN);
  });
  afterAll(() => net.close());

  it("rejects a pay request without a valid md5", async () => {
    const reply = await postJson(`${net.base}/sim/network/pay`, { md5: "xyz" });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({
      error: {
        code: "BAD_USER_INPUT",
        message: "invalid pay request",
        details: [{ field: "md5", message: "must be 32 hexadecimal characters" }],
      },
    });
  });

  it("asks for the payee when it cannot describe the md5", async () => {
    const reply = await postJson(`${net.base}/sim/network/pay`, { md5: md5() });
    expect(reply.status).toBe(400);
    const fields = (reply.json as { error: { details: { field: string }[] } }).error.details.map((d) => d.field);
    expect(fields).toEqual(["toAccountId", "amount", "currency"]);
  });

  it("rejects bad amounts and currencies", async () => {
    const reply = await postJson(`${net.base}/sim/network/pay`, {
      md5: md5(),
      toAccountId: "a@b",
      amount: "1,5",
      currency: "EUR",
    });
    expect(reply.status).toBe(400);
    const fields = (reply.json as { error: { details: { field: string }[] } }).error.details.map((d) => d.field);
    expect(fields).toEqual(["amount", "currency"]);
  });

  it("refuses to pay or fail an md5 twice", async () => {
    const m = md5();
    const body = { md5: m, toAccountId: "a@b", amount: "1", currency: "USD" };
    expect((await postJson(`${net.base}/sim/network/pay`, body)).status).toBe(200);
    const again = await postJson(`${net.base}/sim/network/pay`, body);
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ error: { code: "CONFLICT" } });
    expect((await postJson(`${net.base}/sim/network/fail`, { md5: m })).status).toBe(409);
  });

  it("rejects unknown fault modes and bad delays", async () => {
    const reply = await postJson(`${net.base}/sim/network/fault`, { mode: "explode", slowMs: -1 });
    expect(reply.status).toBe(400);
    const fields = (reply.json as { error: { details: { field: string }[] } }).error.details.map((d) => d.field);
    expect(fields).toEqual(["mode", "slowMs"]);
  });

  it("answers malformed JSON with our error body", async () => {
    const reply = await postJson(`${net.base}/sim/network/pay`, "{not json");
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ error: { code: "BAD_USER_INPUT", details: [] } });
  });
});
