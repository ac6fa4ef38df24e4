import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, moreJobRuns, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { WebhookReceiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";
import { simulatedQr } from "../../src/simulators/upstream-qr.js";

// Issue 36, item 2, payment link (real Chromium on the PayWay twin): an approval of a QR that is not what was asked
// (its KHQR amount) is held — payment.mismatched, still PENDING past the 180 s, never SUCCESS — with the receipt it
// came with, until an operator accepts it as paid.

interface View {
  status: string;
  receiptUrl: string | null;
  mismatch: {
    fields: string[];
    expected: { amount: string; currency: string };
    arrived: { amount: string; currency: string };
    reference: string;
    source: string;
    resolution: { action: string; by: string } | null;
  } | null;
  events: { type: string }[];
}

describe("payment link: an approval of another amount is held, never SUCCESS", () => {
  let t: TestApp;
  let tenant: Tenant;
  const receiver = new WebhookReceiver();
  const check = async (transactionId: string) =>
    (
      (await post(`${t.url}/gateway-link/check`, { transactionId }, AUTH.gatewayLink(tenant.keys.gatewayLink)))
        .body as { status: string }
    ).status;
  const view = async (id: string) =>
    (
      await t.admin<{ transaction: View }>(
        `query($id: ID!) { transaction(id: $id) { status receiptUrl mismatch { fields expected { amount currency }
          arrived { amount currency } reference source resolution { action by } } events { type } } }`,
        { id },
      )
    ).transaction;

  beforeAll(async () => {
    await receiver.up();
    t = await startTestApp();
    tenant = await createTenant(t, { webhooks: receiver });
  });
  afterAll(async () => {
    await t?.stop();
    await receiver.down();
  });

  it("a 4000 KHR QR paid for a 5000 KHR request: held with its receipt, PENDING past the 180 s; accepted → SUCCESS", async () => {
    const g = await post(
      `${t.url}/gateway-link/generate-qr`,
      { amount: 5000, currency: 116 },
      AUTH.gatewayLink(tenant.keys.gatewayLink),
    );
    expect(g.status).toBe(200);
    const { transactionId, data } = g.body as { transactionId: string; data: { clientId: string } };
    // The QR the payer paid says 4000 (a page that issued another amount than it was asked: the stored QR is it).
    const paidQr = simulatedQr("sim_payway@abaa", "Sim PayWay Shop")("4000", 116);
    await t.app.core.db.query(`update "transaction" set qr = ? where id = ?`, [paidQr, transactionId]);
    expect((await post(`${t.url}/sim/link/approve`, { clientId: data.clientId })).status).toBe(200);
    const delivery = await waitFor(
      () =>
        receiver.deliveries.find(
          (d) => d.transactionId === transactionId && d.type === "payment.mismatched" && d.signatureOk,
        ),
      30_000,
    );
    expect(delivery.status).toBe("PENDING");
    const held = await view(transactionId);
    expect(held).toMatchObject({
      status: "PENDING",
      receiptUrl: expect.stringContaining("download-receipt"),
      mismatch: {
        fields: ["amount"],
        expected: { amount: "5000", currency: "KHR" },
        arrived: { amount: "4000", currency: "KHR" },
        reference: data.clientId,
        source: "payment-link page's QR",
        resolution: null,
      },
    });
    // The link's 180 s pass: a held payment is not expired (reads, the sweep).
    t.clock.advance(200_000);
    await moreJobRuns(t, "link.expire", 2);
    expect(await check(transactionId)).toBe("PENDING");
    await t.admin(`mutation($i: ResolveMismatchInput!) { resolveMismatch(input: $i) { status } }`, {
      i: { transactionId, action: "ACCEPT_AS_PAID", by: "ops" },
    });
    expect(await check(transactionId)).toBe("SUCCESS");
    // PayWay reports processing-payment before the approval: the payer's scan.
    expect((await view(transactionId)).events.map((e) => e.type)).toEqual([
      "payment.created",
      "payment.scanned",
      "payment.mismatched",
      "payment.completed",
    ]);
  });
});
