import { createHmac } from "node:crypto";
import { DOCUMENTED_QR_IMAGE_TEMPLATES } from "../support/gateway-documents.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import express from "express";
import {
  listen,
  postJson,
  startGatewaySimulator,
  type GatewayHarness,
  type Running,
} from "../support/upstream-servers.js";
import { waitFor } from "../support/wait.js";

const MERCHANT = "sim-merchant";
/** The ten templates the QR API page lists (its qr_image_template field). */
const gwTemplates = DOCUMENTED_QR_IMAGE_TEMPLATES;
const KEY = "sim-key-0123456789";
const GENERATE = "/api/payment-gateway/v1/payments/generate-qr";
const CHECK = "/api/payment-gateway/v1/payments/check-transaction-2";
const ORDER = [
  "req_time",
  "merchant_id",
  "tran_id",
  "amount",
  "items",
  "first_name",
  "last_name",
  "email",
  "phone",
  "purchase_type",
  "payment_option",
  "callback_url",
  "return_deeplink",
  "currency",
  "custom_fields",
  "return_params",
  "payout",
  "lifetime",
  "qr_image_template",
];

/** The test's own signer: String() of each value in the gateway's order, absent or null as "" (PHP's `.`). */
function signed(fields: Record<string, unknown>, key = KEY): Record<string, unknown> {
  const message = ORDER.map((f) => (fields[f] === undefined || fields[f] === null ? "" : String(fields[f]))).join("");
  return { ...fields, hash: createHmac("sha512", key).update(message).digest("base64") };
}

function signedCheck(tranId: string, merchantId = MERCHANT, key = KEY): Record<string, unknown> {
  const reqTime = "20250101000000";
  const hash = createHmac("sha512", key)
    .update(reqTime + merchantId + tranId)
    .digest("base64");
  return { req_time: reqTime, merchant_id: merchantId, tran_id: tranId, hash };
}

let seq = 0;
function order(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    req_time: "20250101000000",
    merchant_id: MERCHANT,
    tran_id: `S${process.pid % 1000}-${seq++}`,
    amount: 1.25,
    payment_option: "abapay_khqr",
    currency: "USD",
    lifetime: 10,
    qr_image_template: "template3_color",
    ...overrides,
  };
}

describe("gateway simulator speaks the gateway's protocol", () => {
  let gw: GatewayHarness;
  let now = new Date("2025-01-01T00:00:00Z");
  const code = async (body: Record<string, unknown>) => {
    const reply = await postJson(`${gw.apiBase}${GENERATE}`, body);
    return [reply.status, (reply.json as { status: { code: string } }).status.code];
  };

  beforeAll(async () => {
    gw = await startGatewaySimulator(() => now, false);
    gw.sim.registerMerchant(MERCHANT, KEY);
  });
  afterAll(() => gw.close());
  afterEach(async () => {
    await postJson(`${gw.base}/sim/gateway/fault`, { mode: "ok" });
  });

  it("answers a signed request with the QR, image, links and status 0", async () => {
    const reply = await postJson(`${gw.apiBase}${GENERATE}`, signed(order({ currency: "usd", amount: "1.00" })));
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({
      status: { code: "0", message: "Success.", trace_id: expect.any(String) },
      amount: 1,
      currency: "USD",
      qrString: expect.stringContaining("5303840"),
      qrImage: expect.stringMatching(/^data:image\/png;base64,iVBORw0KGgo/),
      abapay_deeplink: expect.stringMatching(/^abamobilebank:\/\/ababank\.com\?type=payway&qrcode=/),
      app_store: expect.stringMatching(/^https:\/\/itunes\.apple\.com\//),
      play_store: expect.stringMatching(/^https:\/\/play\.google\.com\//),
    });
  });

  it("refuses a wrong or missing hash with 403 and code 1", async () => {
    expect(await code(signed(order(), "other-key"))).toEqual([403, "1"]);
    expect(await code(order())).toEqual([403, "1"]);
    const tampered = { ...signed(order()), amount: 999 };
    expect(await code(tampered)).toEqual([403, "1"]);
  });

  it("refuses an unknown merchant with code 96", async () => {
    expect(await code(signed(order({ merchant_id: "ghost" })))).toEqual([403, "96"]);
  });

  it("applies the QR API page's parameter rules (docs/gateway-simulator.md)", async () => {
    const without = (field: string) => Object.fromEntries(Object.entries(order()).filter(([k]) => k !== field));
    expect(await code(signed(order({ currency: "EUR" })))).toEqual([400, "12"]);
    expect(await code(signed(order({ currency: "KHR", amount: 99.5 })))).toEqual([400, "47"]);
    expect(await code(signed(order({ amount: 0.001 })))).toEqual([400, "48"]);
    expect(await code(signed(order({ lifetime: 2 })))).toEqual([400, "48"]);
    expect(await code(signed(order({ lifetime: 43_201 })))).toEqual([400, "48"]);
    expect(await code(signed(order({ req_time: "2025-01-01" })))).toEqual([400, "48"]);
    expect(await code(signed(order({ tran_id: "x".repeat(21) })))).toEqual([400, "48"]);
    expect(await code(signed(order({ tran_id: "order_1" })))).toEqual([400, "48"]);
    expect(await code(signed(order({ tran_id: "order.1" })))).toEqual([400, "48"]);
    expect(await code(signed(order({ qr_image_template: "qr_template1" })))).toEqual([400, "48"]);
    for (const required of ["qr_image_template", "lifetime", "currency", "payment_option", "tran_id", "amount"])
      expect([required, await code(signed(without(required)))]).toEqual([required, [400, "48"]]);
    expect(await code(signed(order({ items: "bm90IGpzb24=" })))).toEqual([400, "48"]);
    const eleven = Buffer.from(
      JSON.stringify(Array.from({ length: 11 }, () => ({ name: "a", quantity: 1, price: 1 }))),
    ).toString("base64");
    expect(await code(signed(order({ items: eleven })))).toEqual([400, "48"]);
    expect(await code(signed(order({ callback_url: Buffer.from("ftp://x").toString("base64") })))).toEqual([400, "48"]);
    expect(await code(signed(order({ payment_option: "wechat" })))).toEqual([400, "23"]);
    expect(await code(signed(order({ first_name: "R2D2" })))).toEqual([400, "16"]);
    expect(await code(signed(order({ first_name: "Jean-Luc" })))).toEqual([400, "16"]);
    expect(await code(signed(order({ last_name: "x".repeat(21) })))).toEqual([400, "17"]);
    expect(await code(signed(order({ last_name: "O'Brien" })))).toEqual([400, "17"]);
    expect(await code(signed(order({ phone: "call me" })))).toEqual([400, "18"]);
    expect(await code(signed(order({ phone: "012 345 678" })))).toEqual([400, "18"]);
    expect(await code(signed(order({ email: "nope" })))).toEqual([400, "19"]);
    expect(await code(signed(order({ email: `${"a".repeat(45)}@b.com` })))).toEqual([400, "19"]);
  });

  it("accepts Khmer names, Khmer items up to 500 characters encoded, the longest lifetime, every template", async () => {
    const encode = (items: unknown) => Buffer.from(JSON.stringify(items)).toString("base64");
    const items = encode([{ name: "កាហ្វេ", quantity: "1", price: "2.50" }]);
    const body = order({
      first_name: "សុខា",
      last_name: "Chan",
      email: "a@b.kh",
      phone: "+85512345678",
      items,
      purchase_type: "purchase",
      qr_image_template: "template6_color",
      lifetime: 43_200,
    });
    expect(await code(signed(body))).toEqual([200, "0"]);
    // 500 characters of base64 is the page's limit: a Khmer name that lands exactly on it passes, one letter more not.
    let name = "ក";
    while (encode([{ name: name + "ក", quantity: 1, price: 1 }]).length <= 500) name += "ក";
    expect(encode([{ name, quantity: 1, price: 1 }]).length).toBeGreaterThan(490);
    expect(await code(signed(order({ items: encode([{ name, quantity: 1, price: 1 }]) })))).toEqual([200, "0"]);
    const over = encode([{ name: name + "ក", quantity: 1, price: 1 }]);
    expect(over.length).toBeGreaterThan(500);
    expect(await code(signed(order({ items: over })))).toEqual([400, "48"]);
    for (const template of gwTemplates)
      expect([template, await code(signed(order({ qr_image_template: template })))]).toEqual([template, [200, "0"]]);
  });

  it("takes optional fields sent as null or empty, as the page's example and public clients send them", async () => {
    const body = order({ items: null, callback_url: null, return_deeplink: null, first_name: "", phone: "" });
    expect(await code(signed(body))).toEqual([200, "0"]);
  });

  it("reads the amount as sent: text is hashed as text ('10.50'), a number as its JSON value", async () => {
    expect(await code(signed(order({ amount: "10.50" })))).toEqual([200, "0"]);
    expect(await code(signed(order({ currency: "KHR", amount: "4000" })))).toEqual([200, "0"]);
    // Hashed as "10.50" but sent as the number 10.5: the gateway reads "10.5", so the hash is wrong.
    const mismatched = { ...signed(order({ amount: "10.50" })), amount: 10.5 };
    expect(await code(mismatched)).toEqual([403, "1"]);
  });

  it("refuses a tran_id used before by the same merchant with code 403", async () => {
    const body = order();
    expect(await code(signed(body))).toEqual([200, "0"]);
    expect(await code(signed({ ...body, amount: 2 }))).toEqual([400, "403"]);
  });

  it("answers malformed JSON with code 48", async () => {
    const reply = await postJson(`${gw.apiBase}${GENERATE}`, "{oops");
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ status: { code: "48" } });
  });

  it("checks a transaction: 8 for an unknown merchant, 1 for a wrong hash, 6 when unknown, 00 with data", async () => {
    const body = order({ amount: 3 });
    await code(signed(body));
    const tranId = body.tran_id as string;
    const ghost = await postJson(`${gw.apiBase}${CHECK}`, signedCheck(tranId, "ghost"));
    expect([ghost.status, ghost.json]).toEqual([
      403,
      { status: { code: "8", message: "Invalid merchant profile", tran_id: tranId } },
    ]);
    expect((await postJson(`${gw.apiBase}${CHECK}`, signedCheck(tranId, MERCHANT, "bad"))).status).toBe(403);
    const unknown = await postJson(`${gw.apiBase}${CHECK}`, signedCheck("nobody-knows"));
    expect([unknown.status, unknown.json]).toEqual([
      200,
      { status: { code: "6", message: "Transaction not found.", tran_id: "nobody-knows" } },
    ]);
    const found = await postJson(`${gw.apiBase}${CHECK}`, signedCheck(tranId));
    expect(found.json).toEqual({
      data: {
        payment_status_code: 2,
        total_amount: 3,
        original_amount: 3,
        refund_amount: 0,
        discount_amount: 0,
        payment_amount: 0,
        payment_currency: "USD",
        apv: "",
        payment_status: "PENDING",
        transaction_date: "2025-01-01 07:00:00",
      },
      status: { code: "00", message: "Success!", tran_id: tranId },
    });
  });

  it("forgets transactions older than 7 days, like check-transaction-2", async () => {
    const body = order();
    await code(signed(body));
    now = new Date(now.getTime() + 8 * 24 * 3600_000);
    const reply = await postJson(`${gw.apiBase}${CHECK}`, signedCheck(body.tran_id as string));
    expect(reply.json).toMatchObject({ status: { code: "6" } });
  });

  it("never answers in timeout mode", async () => {
    await postJson(`${gw.base}/sim/gateway/fault`, { mode: "timeout" });
    const attempt = fetch(`${gw.apiBase}${CHECK}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      signal: AbortSignal.timeout(200),
    });
    await expect(attempt).rejects.toMatchObject({ name: "TimeoutError" });
  });

  it("answers 503 when down and non-JSON when garbage, but keeps its controls working", async () => {
    await postJson(`${gw.base}/sim/gateway/fault`, { mode: "down" });
    expect((await postJson(`${gw.apiBase}${CHECK}`, {})).status).toBe(503);
    await postJson(`${gw.base}/sim/gateway/fault`, { mode: "garbage" });
    const garbage = await postJson(`${gw.apiBase}${CHECK}`, {});
    expect([garbage.status, garbage.json]).toEqual([200, undefined]);
  });
});

describe("gateway simulator controls", () => {
  let gw: GatewayHarness;
  let receiver: Running;
  const pushbacks: unknown[] = [];

  beforeAll(async () => {
    gw = await startGatewaySimulator();
    const app = express();
    app.post("/pushback", express.json(), (req, res) => {
      pushbacks.push(req.body);
      res.sendStatus(200);
    });
    receiver = await listen(app);
  });
  afterAll(async () => {
    await gw.close();
    await receiver.close();
  });

  const generate = (body: Record<string, unknown>, key = KEY) =>
    postJson(`${gw.apiBase}${GENERATE}`, signed(body, key));

  it("registers merchants and validates them", async () => {
    const bad = await postJson(`${gw.base}/sim/gateway/merchants`, { merchantId: "x".repeat(31) });
    expect(bad.status).toBe(400);
    expect((bad.json as { error: { details: { field: string }[] } }).error.details.map((d) => d.field)).toEqual([
      "merchantId",
      "apiKey",
    ]);
    expect((await postJson(`${gw.base}/sim/gateway/merchants`, { merchantId: MERCHANT, apiKey: KEY })).json).toEqual({
      merchantId: MERCHANT,
    });
    expect((await generate(order())).status).toBe(200);
  });

  it("pays a pending transaction once, and says 404 for an unknown one", async () => {
    const body = order();
    await generate(body);
    const unknown = await postJson(`${gw.base}/sim/gateway/pay`, { tranId: "missing", outcome: "APPROVED" });
    expect([unknown.status, unknown.json]).toEqual([
      404,
      { error: { code: "NOT_FOUND", message: "no gateway transaction with tranId missing", details: [] } },
    ]);
    const bad = await postJson(`${gw.base}/sim/gateway/pay`, { tranId: body.tran_id, outcome: "MAYBE" });
    expect(bad.status).toBe(400);
    const paid = await postJson(`${gw.base}/sim/gateway/pay`, { tranId: body.tran_id, outcome: "APPROVED" });
    expect(paid.json).toEqual({
      merchantId: MERCHANT,
      tranId: body.tran_id,
      paymentStatus: "APPROVED",
      apv: expect.stringMatching(/^\d{6}$/),
    });
    expect((await postJson(`${gw.base}/sim/gateway/pay`, { tranId: body.tran_id, outcome: "DECLINED" })).status).toBe(
      409,
    );
  });

  it("an approval can be of another amount or currency than the order's: payment_amount, payment_currency say so", async () => {
    const body = order({ amount: 10.5 });
    await generate(body);
    const bad = await postJson(`${gw.base}/sim/gateway/pay`, {
      tranId: body.tran_id,
      outcome: "APPROVED",
      amount: "ten",
      currency: "EUR",
    });
    expect((bad.json as { error: { details: { field: string }[] } }).error.details.map((d) => d.field)).toEqual([
      "amount",
      "currency",
    ]);
    await postJson(`${gw.base}/sim/gateway/pay`, {
      tranId: body.tran_id,
      outcome: "APPROVED",
      amount: "43050",
      currency: "KHR",
    });
    const found = await postJson(`${gw.apiBase}${CHECK}`, signedCheck(body.tran_id as string));
    expect((found.json as { data: Record<string, unknown> }).data).toMatchObject({
      payment_status: "APPROVED",
      total_amount: 10.5,
      payment_amount: 43050,
      payment_currency: "KHR",
    });
  });

  it("asks for merchantId when two merchants share a tranId", async () => {
    await postJson(`${gw.base}/sim/gateway/merchants`, { merchantId: "second", apiKey: "k2" });
    const body = order();
    await generate(body);
    await generate({ ...body, merchant_id: "second" }, "k2");
    expect((await postJson(`${gw.base}/sim/gateway/pay`, { tranId: body.tran_id, outcome: "APPROVED" })).status).toBe(
      409,
    );
    const paid = await postJson(`${gw.base}/sim/gateway/pay`, {
      tranId: body.tran_id,
      outcome: "APPROVED",
      merchantId: "second",
    });
    expect(paid.json).toMatchObject({ merchantId: "second", paymentStatus: "APPROVED" });
  });

  it("posts a pushback to the callback URL after an approval", async () => {
    const body = order({ callback_url: Buffer.from(`${receiver.base}/pushback`).toString("base64") });
    await generate(body);
    const paid = await postJson(`${gw.base}/sim/gateway/pay`, { tranId: body.tran_id, outcome: "APPROVED" });
    const apv = (paid.json as { apv: string }).apv;
    await waitFor(() => pushbacks.length > 0, 10_000, 20, "the pushback");
    expect(pushbacks).toEqual([{ tran_id: body.tran_id, apv, status: "00" }]);
  });

  it("validates fault requests", async () => {
    const reply = await postJson(`${gw.base}/sim/gateway/fault`, { mode: "flaky", variant: "xml" });
    expect(reply.status).toBe(400);
    expect((reply.json as { error: { details: { field: string }[] } }).error.details.map((d) => d.field)).toEqual([
      "mode",
      "variant",
    ]);
  });
});
