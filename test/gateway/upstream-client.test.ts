import { createHmac } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { AppError } from "../../src/errors.js";
import {
  createGatewayClient,
  type GatewayClient,
  type GatewayGenerateRequest,
} from "../../src/gateway/upstream-client.js";
import {
  closedPort,
  fakeKhqr,
  postJson,
  startGatewaySimulator,
  type GatewayHarness,
} from "../support/upstream-servers.js";

const CRED = { merchantId: "ec000002", apiKey: "3f9c1e7a5b2d4c6e8f0a1b2c3d4e5f60" };
const CLIENT_NOW = new Date("2025-02-13T06:55:45.999Z");

let seq = 0;
const tranId = () => `T${process.pid % 1000}-${Date.now() % 1e6}-${seq++}`.slice(0, 20);

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

function request(overrides: Partial<GatewayGenerateRequest> = {}): GatewayGenerateRequest {
  return {
    tranId: tranId(),
    amount: "10.50",
    currency: "USD",
    lifetimeMinutes: 6,
    qrImageTemplate: "template3_color",
    ...overrides,
  };
}

/** Items whose names are Khmer script (each letter 3 bytes of UTF-8, 4 characters of base64). */
const KHMER_ITEMS = [
  { name: "កាហ្វេទឹកដោះគោ", quantity: 2, price: 2.5 },
  { name: "នំបញ្ចុក", quantity: 1, price: 5.5 },
];

describe("gateway QR client against the simulator", () => {
  let gw: GatewayHarness;
  let client: GatewayClient;
  let simNow = new Date("2025-02-13T06:55:46Z");

  beforeAll(async () => {
    gw = await startGatewaySimulator(() => simNow);
    gw.sim.registerMerchant(CRED.merchantId, CRED.apiKey);
    // Clients that expect an answer give it 30 s (a loaded 2-core machine can hold one up for seconds); the timeout
    // tests have their own short ones.
    client = createGatewayClient({ baseUrl: gw.apiBase, timeoutMs: 30_000, clock: () => CLIENT_NOW });
  });
  afterAll(() => gw.close());
  afterEach(async () => {
    await postJson(`${gw.base}/sim/gateway/fault`, { mode: "ok" });
  });

  const pay = (id: string, outcome: "APPROVED" | "DECLINED") =>
    postJson(`${gw.base}/sim/gateway/pay`, { tranId: id, outcome });

  it("generates a KHQR with a PNG image, deeplink and store links", async () => {
    const req = request({
      firstName: "Dara",
      lastName: "Sok",
      email: "dara@example.com",
      phone: "012345678",
      items: [
        { name: "Coffee", quantity: 2, price: 2.5 },
        { name: "Cake", quantity: 1, price: 5.5 },
      ],
      qrImageTemplate: "template3_color",
      callbackUrl: "https://shop.example/payway/pushback",
    });
    const result = await client.generateQr(CRED, req);

    expect(result).toEqual({
      qrString: fakeKhqr("10.5", "USD"),
      qrImage: expect.stringMatching(/^data:image\/png;base64,/),
      deeplink: `abamobilebank://ababank.com?type=payway&qrcode=${encodeURIComponent(fakeKhqr("10.5", "USD"))}`,
      appStore: expect.stringMatching(/^https:\/\//),
      playStore: expect.stringMatching(/^https:\/\/play\.google\.com\//),
      amount: 10.5,
      currency: "USD",
      status: { code: "0", message: "Success." },
    });
    const png = Buffer.from((result.qrImage as string).split(",")[1], "base64");
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
  });

  it("sends the gateway's fields: UTC req_time, base64 items and callback, the amount as hashed, and a hash over them", async () => {
    const req = request({
      firstName: "Dara",
      email: "dara@example.com",
      items: [{ name: "Coffee", quantity: 2, price: 2.5 }],
      callbackUrl: "https://shop.example/cb?x=1",
      qrImageTemplate: "template1",
    });
    await client.generateQr(CRED, req);
    const sent = gw.received.at(-1) as Record<string, unknown>;

    const itemsB64 = Buffer.from('[{"name":"Coffee","quantity":2,"price":2.5}]').toString("base64");
    const callbackB64 = Buffer.from("https://shop.example/cb?x=1").toString("base64");
    expect(sent).toEqual({
      req_time: "20250213065545",
      merchant_id: "ec000002",
      tran_id: req.tranId,
      amount: "10.50",
      items: itemsB64,
      first_name: "Dara",
      email: "dara@example.com",
      purchase_type: "purchase",
      payment_option: "abapay_khqr",
      callback_url: callbackB64,
      currency: "USD",
      lifetime: 6,
      qr_image_template: "template1",
      hash: expect.any(String),
    });
    const message = `20250213065545ec000002${req.tranId}10.50${itemsB64}Daradara@example.compurchaseabapay_khqr${callbackB64}USD6template1`;
    expect(sent.hash).toBe(createHmac("sha512", CRED.apiKey).update(message).digest("base64"));
  });

  it("is rejected with the gateway's wrong-hash status when the key is wrong", async () => {
    const err = await failure(client.generateQr({ ...CRED, apiKey: "not-the-key" }, request()));
    expect(err.code).toBe("UPSTREAM_REJECTED");
    expect(err.extra).toMatchObject({ gatewayStatus: { code: "1", message: "Wrong Hash." } });
  });

  it("is rejected with code 96 for a merchant the gateway does not know", async () => {
    const err = await failure(client.generateQr({ merchantId: "nobody", apiKey: "k" }, request()));
    expect(err.code).toBe("UPSTREAM_REJECTED");
    expect(err.extra).toMatchObject({ gatewayStatus: { code: "96" } });
  });

  it("is rejected with code 403 for a tran_id used before", async () => {
    const req = request();
    await client.generateQr(CRED, req);
    const err = await failure(client.generateQr(CRED, { ...req, amount: "7.77" }));
    expect(err.code).toBe("UPSTREAM_REJECTED");
    expect(err.extra).toMatchObject({ gatewayStatus: { code: "403", message: "Duplicated Transaction ID" } });
  });

  it("accepts 100 KHR, sent and hashed as whole riels", async () => {
    const req = request({ amount: "100", currency: "KHR", lifetimeMinutes: 43_200 });
    await expect(client.generateQr(CRED, req)).resolves.toMatchObject({ amount: 100, currency: "KHR" });
    const sent = gw.received.at(-1) as Record<string, unknown>;
    expect([sent.amount, sent.lifetime, sent.qr_image_template]).toEqual(["100", 43_200, "template3_color"]);
    const message = `20250213065545ec000002${req.tranId}100purchaseabapay_khqrKHR43200template3_color`;
    expect(sent.hash).toBe(createHmac("sha512", CRED.apiKey).update(message).digest("base64"));
  });

  it("refuses what the QR API's pages forbid before calling the gateway, naming the field and the rule", async () => {
    const cases: [Partial<GatewayGenerateRequest>, string, RegExp][] = [
      [{ amount: "1.234" }, "amount", /at most 2 decimals/],
      [{ amount: "99", currency: "KHR" }, "amount", /at least 100 KHR/],
      [{ amount: "100.5", currency: "KHR" }, "amount", /whole riels/],
      [{ tranId: "X".repeat(21) }, "tranId", /at most 20/],
      [{ tranId: "order_1" }, "tranId", /letters A-Z and a-z, digits and '-'/],
      [{ tranId: "order.1" }, "tranId", /letters A-Z and a-z, digits and '-'/],
      [{ firstName: "R2D2" }, "firstName", /codes 16 and 17/],
      [{ lastName: "O'Brien" }, "lastName", /codes 16 and 17/],
      [{ firstName: "x".repeat(21) }, "firstName", /at most 20/],
      [{ email: "not-an-email" }, "email", /code 19/],
      [{ email: `${"a".repeat(45)}@b.com` }, "email", /at most 50/],
      [{ phone: "012 345 678" }, "phone", /code 18/],
      [{ phone: "1234567" }, "phone", /8 to 20 digits/],
      [{ lifetimeMinutes: 2 }, "lifetimeMinutes", /3 to 43200/],
      [{ lifetimeMinutes: 43_201 }, "lifetimeMinutes", /3 to 43200/],
      [{ qrImageTemplate: "" }, "qrImageTemplate", /template3_color/],
      [{ qrImageTemplate: "qr_template1" }, "qrImageTemplate", /template3_color/],
      [{ items: Array.from({ length: 11 }, () => ({ name: "a", quantity: 1, price: 1 })) }, "items", /at most 10/],
      [{ items: [{ name: "ក".repeat(120), quantity: 1, price: 1 }] }, "items", /at most 500/],
    ];
    const before = { bodies: gw.received.length, calls: gw.sim.state.calls.generate };
    for (const [overrides, field, rule] of cases) {
      const err = await failure(client.generateQr(CRED, request(overrides)));
      expect({ field, code: err.code }).toEqual({ field, code: "BAD_USER_INPUT" });
      expect(err.details).toEqual([{ field, message: expect.stringMatching(rule) }]);
    }
    // The simulator (strict, like the gateway) never saw any of them.
    expect({ bodies: gw.received.length, calls: gw.sim.state.calls.generate }).toEqual(before);
  });

  // The amount as the service holds it (shortest exact decimal) and as it travels and is hashed.
  const matrix: ["USD" | "KHR", string, string, boolean][] = [
    ["USD", "3.1", "3.10", false],
    ["USD", "3.1", "3.10", true],
    ["KHR", "12000", "12000", false],
    ["KHR", "12000", "12000", true],
  ];
  it.each(matrix)(
    "generates and checks %s %s, sent as %s (Khmer items: %s), against the strict simulator",
    async (currency, amount, wire, khmer) => {
      const items = khmer ? KHMER_ITEMS : undefined;
      const req = request({ currency, amount, items, firstName: "សុខា", lastName: "Chan" });
      const qr = await client.generateQr(CRED, req);
      expect(qr).toMatchObject({ currency, status: { code: "0" } });
      const sent = gw.received.at(-1) as Record<string, unknown>;
      expect(sent.amount).toBe(wire);
      if (items) {
        const decoded = JSON.parse(Buffer.from(sent.items as string, "base64").toString("utf8")) as unknown;
        expect(decoded).toEqual(items);
        expect((sent.items as string).length).toBeLessThanOrEqual(500);
      } else expect(sent).not.toHaveProperty("items");
      await expect(client.checkTransaction(CRED, req.tranId)).resolves.toMatchObject({
        paymentStatus: "PENDING",
        statusCode: "00",
      });
    },
  );

  it("follows a transaction from PENDING to APPROVED", async () => {
    const req = request();
    await client.generateQr(CRED, req);
    const pending = await client.checkTransaction(CRED, req.tranId);
    expect(pending).toMatchObject({ paymentStatus: "PENDING", statusCode: "00", message: "Success!" });
    expect(pending.raw).toMatchObject({
      data: { payment_status_code: 2, payment_amount: 0, original_amount: 10.5, apv: "" },
    });

    expect((await pay(req.tranId, "APPROVED")).status).toBe(200);
    const approved = await client.checkTransaction(CRED, req.tranId);
    expect(approved.paymentStatus).toBe("APPROVED");
    expect(approved.raw).toMatchObject({
      data: {
        payment_status_code: 0,
        payment_amount: 10.5,
        payment_currency: "USD",
        apv: expect.stringMatching(/^\d{6}$/),
      },
      status: { code: "00", tran_id: req.tranId },
    });
  });

  it("reads a declined transaction as DECLINED", async () => {
    const req = request({ amount: "2500", currency: "KHR" });
    await client.generateQr(CRED, req);
    await pay(req.tranId, "DECLINED");
    await expect(client.checkTransaction(CRED, req.tranId)).resolves.toMatchObject({
      paymentStatus: "DECLINED",
      statusCode: "00",
    });
  });

  it("reads an unknown tran_id as NOT_FOUND (code 6)", async () => {
    await expect(client.checkTransaction(CRED, "never-issued")).resolves.toMatchObject({
      paymentStatus: "NOT_FOUND",
      statusCode: "6",
    });
  });

  it("is rejected when the check is signed with the wrong key", async () => {
    const err = await failure(client.checkTransaction({ ...CRED, apiKey: "wrong" }, "whatever"));
    expect(err.code).toBe("UPSTREAM_REJECTED");
    expect(err.extra).toMatchObject({ gatewayStatus: { code: "1" } });
  });

  it("keeps an unpaid transaction PENDING past its lifetime, and refuses payment then", async () => {
    const req = request({ lifetimeMinutes: 3 });
    await client.generateQr(CRED, req);
    simNow = new Date(simNow.getTime() + 3 * 60_000 + 1000);
    const late = await pay(req.tranId, "APPROVED");
    expect(late.status).toBe(409);
    expect(late.json).toMatchObject({ error: { code: "CONFLICT", message: expect.stringContaining("expired") } });
    await expect(client.checkTransaction(CRED, req.tranId)).resolves.toMatchObject({ paymentStatus: "PENDING" });
  });

  it("turns a 503 into UPSTREAM_UNAVAILABLE", async () => {
    await postJson(`${gw.base}/sim/gateway/fault`, { mode: "down" });
    for (const call of [client.generateQr(CRED, request()), client.checkTransaction(CRED, "x")]) {
      const err = await failure(call);
      expect(err.code).toBe("UPSTREAM_UNAVAILABLE");
      expect(err.extra).toMatchObject({ upstream: "gateway", reason: "HTTP_STATUS", httpStatus: 503 });
    }
  });

  it("gives up at its own timeout when the gateway never answers", async () => {
    await postJson(`${gw.base}/sim/gateway/fault`, { mode: "timeout" });
    const quick = createGatewayClient({ baseUrl: gw.apiBase, timeoutMs: 250, clock: () => CLIENT_NOW });
    const started = Date.now();
    const err = await failure(quick.checkTransaction(CRED, "x"));
    // Given up at 250 ms; the bound leaves room for a loaded machine firing the timer late.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(err.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(err.extra).toMatchObject({ reason: "TIMEOUT" });
  });

  it("turns a 200 that is not JSON, or JSON of another shape, into UPSTREAM_UNAVAILABLE", async () => {
    for (const variant of ["text", "json"]) {
      await postJson(`${gw.base}/sim/gateway/fault`, { mode: "garbage", variant });
      for (const call of [client.generateQr(CRED, request()), client.checkTransaction(CRED, "x")]) {
        const err = await failure(call);
        expect(err.code).toBe("UPSTREAM_UNAVAILABLE");
        expect(err.extra).toMatchObject({ reason: "BAD_RESPONSE" });
      }
    }
  });

  it("answers normally when the gateway is slow but within the timeout", async () => {
    await postJson(`${gw.base}/sim/gateway/fault`, { mode: "slow", slowMs: 100 });
    await expect(client.checkTransaction(CRED, "x")).resolves.toMatchObject({ paymentStatus: "NOT_FOUND" });
  });

  it("turns a refused connection into UPSTREAM_UNAVAILABLE", async () => {
    const nowhere = createGatewayClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, timeoutMs: 30_000 });
    const err = await failure(nowhere.generateQr(CRED, request()));
    expect(err.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(err.extra).toMatchObject({ reason: "CONNECTION" });
    expect(err.message).toContain("ECONNREFUSED");
  });
});
