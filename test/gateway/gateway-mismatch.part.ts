import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import {
  startTestApp,
  createTenant,
  moreJobRuns,
  post,
  AUTH,
  ADMIN_TOKEN,
  type TestApp,
  type Tenant,
} from "../support/app.js";
import { WebhookReceiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";
import { gatewaySim } from "../support/simulators.js";
import { runAdminCli } from "../../src/admin/cli.js";

// Issue 36, item 2, hosted gateway: an approval whose payment_amount / payment_currency is not the order's is held
// (payment.mismatched, still CHECKOUT), never SUCCESS; the operator resolves it, here with the CLI.

interface Held {
  status: string;
  mismatch: {
    fields: string[];
    expected: { amount: string; currency: string };
    arrived: { amount: string | null; currency: string | null };
    reference: string | null;
    source: string;
    resolution: { action: string; by: string; note: string | null } | null;
  } | null;
  events: { type: string }[];
}

/** `npm run admin -- <args>` against the test service: its exit code and what it printed. */
async function cli(t: TestApp, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [log, error] = [console.log, console.error];
  console.log = (s: string) => void out.push(s);
  console.error = (s: string) => void err.push(s);
  try {
    const code = await runAdminCli(args, { PQR_URL: t.url, ADMIN_TOKEN });
    return { code, out: out.join("\n"), err: err.join("\n") };
  } finally {
    [console.log, console.error] = [log, error];
  }
}

describe("hosted gateway: an approval that is not the order's amount or currency is held", () => {
  let t: TestApp;
  let tenant: Tenant;
  const receiver = new WebhookReceiver();
  let n = 0;
  const gen = async (amount: number, currency: string) => {
    const orderId = `mm-${Date.now().toString(36)}-${n++}`;
    const r = await post(
      `${t.url}/gateway/generate-qr`,
      { qrData: { orderId, amount, currency } },
      AUTH.gateway(tenant.keys.gateway),
    );
    expect(r.status).toBe(200);
    return { orderId, transactionId: (r.body as { transactionId: string }).transactionId };
  };
  const status = async (orderId: string) =>
    (
      (await post(`${t.url}/gateway/check-status`, { orderId }, AUTH.gateway(tenant.keys.gateway))).body as {
        status: string;
      }
    ).status;
  const view = async (id: string) =>
    (
      await t.admin<{ transaction: Held }>(
        `query($id: ID!) { transaction(id: $id) { status mismatch { fields expected { amount currency }
          arrived { amount currency } reference source resolution { action by note } } events { type } } }`,
        { id },
      )
    ).transaction;
  const held = (id: string) =>
    waitFor(
      () => receiver.deliveries.find((d) => d.transactionId === id && d.type === "payment.mismatched" && d.signatureOk),
      20_000,
    );

  beforeAll(async () => {
    await receiver.up();
    t = await startTestApp();
    tenant = await createTenant(t, {
      webhooks: receiver,
      gatewayMerchantId: "gw_mm_1",
      gatewaySecret: "gw-mm-secret-0123456789",
    });
    await post(`${t.url}/sim/gateway/merchants`, { merchantId: "gw_mm_1", apiKey: "gw-mm-secret-0123456789" });
  });
  afterAll(async () => {
    await t?.stop();
    await receiver.down();
  });

  it("10.00 approved on a 10.50 order: CHECKOUT, what arrived recorded; a pushback and a right answer later change nothing", async () => {
    const order = await gen(10.5, "USD");
    const paid = await post(`${t.url}/sim/gateway/pay`, {
      tranId: order.orderId,
      outcome: "APPROVED",
      amount: "10.00",
    });
    expect(paid.status).toBe(200);
    expect((await held(order.transactionId)).status).toBe("CHECKOUT");
    expect(await status(order.orderId)).toBe("CHECKOUT");
    const v = await view(order.transactionId);
    expect(v.mismatch).toMatchObject({
      fields: ["amount"],
      expected: { amount: "10.50", currency: "USD" },
      arrived: { amount: "10.00", currency: "USD" },
      reference: (paid.body as { apv: string }).apv,
      source: "gateway check-transaction-2",
      resolution: null,
    });
    // The gateway now reports the order's amount, and its pushback asks for a check: a held payment is not checked.
    const sim = gatewaySim(t.app);
    delete [...sim.state.transactions.values()].find((x) => x.tranId === order.orderId)!.paidAmount;
    await post(`${t.url}/gateway/pushback/${tenant.gatewayConfigId}`, { tran_id: order.orderId, status: "0" });
    await moreJobRuns(t, "gateway.monitor", 3);
    expect(await status(order.orderId)).toBe("CHECKOUT");
    expect((await view(order.transactionId)).events.map((e) => e.type)).toEqual([
      "payment.created",
      "payment.mismatched",
    ]);
  });

  it("paid in KHR on a USD order → held; the CLI lists it and marks it failed, recording who", async () => {
    const order = await gen(2, "USD");
    await post(`${t.url}/sim/gateway/pay`, {
      tranId: order.orderId,
      outcome: "APPROVED",
      amount: "8200",
      currency: "KHR",
    });
    await held(order.transactionId);
    const list = await cli(t, ["mismatches"]);
    expect(list.code).toBe(0);
    const rows = (JSON.parse(list.out) as { transactions: { edges: { node: { id: string; mismatch: unknown } }[] } })
      .transactions.edges;
    expect(rows.find((r) => r.node.id === order.transactionId)?.node.mismatch).toMatchObject({
      fields: ["amount", "currency"],
      arrived: { amount: "8200", currency: "KHR" },
    });
    const resolved = await cli(t, [
      "mismatch:resolve",
      "--transactionId",
      order.transactionId,
      "--action",
      "fail",
      "--note",
      "refunded to the payer",
    ]);
    expect(resolved).toMatchObject({ code: 0, err: "" });
    expect(await status(order.orderId)).toBe("FAILED");
    const v = await view(order.transactionId);
    expect(v.mismatch?.resolution).toEqual({
      action: "failed",
      by: expect.stringMatching(/^cli \(.+@.+\)$/),
      note: "refunded to the payer",
    });
    expect(v.events.map((e) => e.type)).toEqual(["payment.created", "payment.mismatched", "payment.failed"]);
    const again = await cli(t, ["mismatch:resolve", "--transactionId", order.transactionId, "--action", "accept"]);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/is not held: it was failed by cli/);
  });

  it("an approval of the order's amount and currency still completes", async () => {
    const order = await gen(7.25, "USD");
    await post(`${t.url}/sim/gateway/pay`, { tranId: order.orderId, outcome: "APPROVED" });
    await waitFor(async () => (await status(order.orderId)) === "SUCCESS", 20_000);
    expect((await view(order.transactionId)).mismatch).toBeNull();
  });
});
