import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createHash } from "node:crypto";
import { startTestApp, checkFailures, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { ABA_STATIC_MULTI_SCHEME } from "../khqr/fixtures.js";
import { waitFor } from "../support/wait.js";
import { faultBackoffMs } from "../../src/transactions/monitor.js";

/** startTestApp's QR_MONITOR_INTERVAL_MS: the monitor's recheck, the base of its backoff after a fault. */
const MONITOR_INTERVAL_MS = 500;

interface QrTx {
  transactionId: string;
  expiredAt: string;
  status: string;
  requestData: Record<string, unknown>;
  data: { qr: string; md5: string };
  clientToken?: string;
}

describe("generic QR area over REST", () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  const gen = (body: unknown, key = tenant.keys.qr) => post(`${t.url}/qr/generate`, body, AUTH.qr(key));
  const check = (md5: string, key = tenant.keys.qr) => post(`${t.url}/qr/check`, { md5 }, AUTH.qr(key));
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    other = await createTenant(t, { name: "Other" });
  });
  afterAll(async () => t?.stop());

  it("generate → the contract's shape, md5 of the QR, PENDING, expiry = issue + expiredAfter", async () => {
    const before = Date.now();
    const res = await gen({
      amount: 1.5,
      currency: 840,
      expiredAfter: 60000,
      meta: { orderRef: "A-1", nested: { x: [1, 2] } },
    });
    expect(res.status).toBe(200);
    const body = res.body as QrTx;
    expect(Object.keys(body).sort()).toEqual([
      "checkoutUrl",
      "clientToken",
      "data",
      "expiredAt",
      "requestData",
      "status",
      "transactionId",
    ]);
    expect(body.status).toBe("PENDING");
    expect(body.requestData).toEqual({
      amount: 1.5,
      currency: 840,
      expiredAfter: 60000,
      meta: { orderRef: "A-1", nested: { x: [1, 2] } },
    });
    expect(body.data.md5).toBe(createHash("md5").update(body.data.qr).digest("hex"));
    const exp = Date.parse(body.expiredAt);
    expect(exp).toBeGreaterThanOrEqual(before + 60000);
    expect(exp).toBeLessThan(Date.now() + 60000 + 1000);
    // The QR itself verifies and decodes to the merchant's account and the amount.
    const verify = await post(`${t.url}/qr/verify`, { qrData: body.data.qr }, AUTH.qr(tenant.keys.qr));
    expect(verify.body).toBe(true);
    const decoded = await post(`${t.url}/qr/decode`, { qrData: body.data.qr }, AUTH.qr(tenant.keys.qr));
    expect(decoded.body).toMatchObject({
      status: { code: 0, errorCode: null, message: null },
      data: {
        bankAccountID: "test_shop@devb",
        transactionAmount: "1.50",
        transactionCurrency: "840",
        merchantName: "Test Shop",
        countryCode: "KH",
      },
    });
  });

  it("pay on the network simulator → /qr/check shows SUCCESS within 10 s; the payer is kept", async () => {
    const body = (await gen({ amount: 2, currency: 840, expiredAfter: 120000 })).body as QrTx;
    expect((await post(`${t.url}/sim/network/pay`, { md5: body.data.md5 })).status).toBe(200);
    const started = Date.now();
    const done = await waitFor(async () => {
      const r = (await check(body.data.md5)).body as QrTx;
      return r.status === "SUCCESS" ? r : null;
    }, 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(done.transactionId).toBe(body.transactionId);
    const tx = await t.app.core.store.get(body.transactionId);
    expect(tx?.upstream.payment).toMatchObject({
      hash: expect.any(String),
      fromAccountId: expect.stringContaining("@"),
    });
  });

  it("fail on the network → FAILED", async () => {
    const body = (await gen({ amount: 3, currency: 840, expiredAfter: 120000 })).body as QrTx;
    await post(`${t.url}/sim/network/fail`, { md5: body.data.md5 });
    await waitFor(async () => ((await check(body.data.md5)).body as QrTx).status === "FAILED", 10_000);
  });

  it("left alone → EXPIRED after the check at its expiry says not paid; past the grace a read expires it itself", async () => {
    const body = (await gen({ amount: 4000, currency: 116, expiredAfter: 10000 })).body as QrTx;
    expect(((await check(body.data.md5)).body as QrTx).status).toBe("PENDING");
    t.clock.advance(10_001);
    await waitFor(async () => ((await check(body.data.md5)).body as QrTx).status === "EXPIRED", 10_000);
    // No worker needed once the grace (QR_EXPIRY_GRACE_MS, 10 min by default) is over.
    const other = (await gen({ amount: 4000, currency: 116, expiredAfter: 10000 })).body as QrTx;
    await post(`${t.url}/sim/network/fault`, { mode: "error500" });
    try {
      t.clock.advance(10_001 + 600_000);
      expect(((await check(other.data.md5)).body as QrTx).status).toBe("EXPIRED");
    } finally {
      await post(`${t.url}/sim/network/fault`, { mode: "ok" });
    }
  });

  it("a network outage keeps it PENDING (never terminal), then SUCCESS after recovery", async () => {
    const body = (await gen({ amount: 5, currency: 840, expiredAfter: 600000 })).body as QrTx;
    await post(`${t.url}/sim/network/fault`, { mode: "error500" });
    // Each failed check backs the next one off (1 s, 2 s, 4 s): the clock is moved past each backoff, not waited out.
    let failed = 0;
    try {
      await post(`${t.url}/sim/network/pay`, { md5: body.data.md5 });
      // Several monitor rounds against a failing network (each a failed check), and it is still PENDING.
      while (failed < 3) {
        if (failed > 0) t.clock.advance(faultBackoffMs(MONITOR_INTERVAL_MS, failed));
        const before = failed;
        failed = await waitFor(
          async () => {
            const n = await checkFailures(t, body.transactionId);
            return n > before ? n : null;
          },
          30_000,
          100,
          `failed check ${before + 1}`,
        );
      }
      expect(((await check(body.data.md5)).body as QrTx).status).toBe("PENDING");
    } finally {
      await post(`${t.url}/sim/network/fault`, { mode: "ok" });
    }
    t.clock.advance(faultBackoffMs(MONITOR_INTERVAL_MS, failed));
    await waitFor(async () => ((await check(body.data.md5)).body as QrTx).status === "SUCCESS", 20_000);
  });

  it("another key's md5 → 404 with the error body; unknown md5 → 404", async () => {
    const body = (await gen({ amount: 1, currency: 840, expiredAfter: 60000 })).body as QrTx;
    const res = await check(body.data.md5, other.keys.qr);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: "NOT_FOUND", message: expect.any(String), details: [] } });
    expect((await check("0".repeat(32))).status).toBe(404);
  });

  it("bad bodies → 400 naming each bad field; nothing is written", async () => {
    const [{ n: before }] = await t.app.core.db.query<{ n: string }>(`select count(*)::text as n from "transaction"`);
    const cases: [unknown, string[]][] = [
      [{ currency: 840, expiredAfter: 60000 }, ["amount"]],
      [{ amount: 0, currency: 840, expiredAfter: 60000 }, ["amount"]],
      [{ amount: -1, currency: 840, expiredAfter: 60000 }, ["amount"]],
      [{ amount: 1.234, currency: 840, expiredAfter: 60000 }, ["amount"]],
      [{ amount: 100.5, currency: 116, expiredAfter: 60000 }, ["amount"]],
      [{ amount: "1", currency: 840, expiredAfter: 60000 }, ["amount"]],
      [{ amount: 1, currency: 978, expiredAfter: 60000 }, ["currency"]],
      [{ amount: 1, currency: 840, expiredAfter: 5 }, ["expiredAfter"]],
      [{ amount: 1, currency: 840 }, ["expiredAfter"]],
      [{ amount: 1, currency: 840, expiredAfter: 60000, meta: [1] }, ["meta"]],
    ];
    for (const [body, fields] of cases) {
      const res = await gen(body);
      expect(res.status).toBe(400);
      const err = (res.body as { error: { code: string; details: { field: string }[] } }).error;
      expect(err.code).toBe("BAD_USER_INPUT");
      expect(err.details.map((d) => d.field)).toEqual(fields);
    }
    const [{ n: after }] = await t.app.core.db.query<{ n: string }>(`select count(*)::text as n from "transaction"`);
    expect(after).toBe(before);
  });

  it("verify answers a bare boolean; decode reports failures in status", async () => {
    for (const qrData of ["", "hello", "000201", "0".repeat(5000)]) {
      const v = await post(`${t.url}/qr/verify`, { qrData }, AUTH.qr(tenant.keys.qr));
      expect(v.status).toBe(200);
      expect(v.body).toBe(false);
      const d = await post(`${t.url}/qr/decode`, { qrData }, AUTH.qr(tenant.keys.qr));
      expect(d.status).toBe(200);
      expect((d.body as { status: { code: number; errorCode: number } }).status.code).not.toBe(0);
      expect(typeof (d.body as { status: { errorCode: number } }).status.errorCode).toBe("number");
    }
  });

  it("verify and decode accept a production ABA static QR whose tag 99 is ABA's own data, reported raw", async () => {
    const v = await post(`${t.url}/qr/verify`, { qrData: ABA_STATIC_MULTI_SCHEME }, AUTH.qr(tenant.keys.qr));
    expect(v.body).toBe(true);
    const d = await post(`${t.url}/qr/decode`, { qrData: ABA_STATIC_MULTI_SCHEME }, AUTH.qr(tenant.keys.qr));
    expect(d.body).toMatchObject({
      status: { code: 0, errorCode: null, message: null },
      data: {
        merchantType: "30",
        bankAccountID: "abaakhppxxx@abaa",
        merchantID: "316600770110242",
        acquiringBank: "abaa",
        pointOfInitiationMethod: "11",
        tag99: "001339CA026411FDA6803mmp",
      },
    });
    expect((d.body as { data: Record<string, unknown> }).data.creationTimestamp).toBeUndefined();
  });

  it("Idempotency-Key: a retry returns the first response; concurrent duplicates create one transaction; another body → 409", async () => {
    const headers = { ...AUTH.qr(tenant.keys.qr), "idempotency-key": "idem-1" };
    const body = { amount: 7, currency: 840, expiredAfter: 60000 };
    const results = await Promise.all([1, 2, 3, 4].map(() => post(`${t.url}/qr/generate`, body, headers)));
    const ids = new Set(results.map((r) => (r.body as QrTx).transactionId));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(ids.size).toBe(1);
    const [{ n }] = await t.app.core.db.query<{ n: string }>(
      `select count(*)::text as n from "transaction" where id = ?`,
      [[...ids][0]],
    );
    expect(n).toBe("1");
    const conflict = await post(`${t.url}/qr/generate`, { ...body, amount: 8 }, headers);
    expect(conflict.status).toBe(409);
    expect((conflict.body as { error: { code: string } }).error.code).toBe("IDEMPOTENCY_CONFLICT");
  });
});
