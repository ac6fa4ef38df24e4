import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import {
  startTestApp,
  createTenant,
  capturedLogger,
  moreJobRuns,
  post,
  AUTH,
  type TestApp,
  type Tenant,
} from "../support/app.js";
import { WebhookReceiver } from "../support/webhook-receiver.js";
import { subscribe } from "../support/ws.js";
import { waitFor } from "../support/wait.js";
import { networkSim } from "../support/simulators.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// Issue 36, item 2: the network's "found" answer is checked against the QR. A transfer of 1.00 on a 1.50 QR, a KHR
// transfer on a USD QR, a transfer to another receiving account: none is ever SUCCESS. The payment is held
// (payment.mismatched: signed webhook, subscription, one error line), stays PENDING past its expiry, is checked no
// more, and an operator resolves it (docs/decisions/0183-held-payments.md).

const FIELDS = `status latePayment mismatch { fields expected { amount currency account } arrived { amount currency account }
  reference source detectedAt late resolution { action by at note } }
  events { type transaction { status late mismatch { fields resolution { action by } } } }`;

interface Mismatch {
  fields: string[];
  expected: { amount: string; currency: string; account: string | null };
  arrived: { amount: string | null; currency: string | null; account: string | null };
  reference: string | null;
  source: string;
  detectedAt: string;
  late: boolean;
  resolution: { action: string; by: string; at: string; note: string | null } | null;
}
interface TxView {
  status: string;
  latePayment: boolean;
  mismatch: Mismatch | null;
  events: { type: string; transaction: { status: string; late: boolean | null; mismatch: Partial<Mismatch> | null } }[];
}
type Live = { transactionUpdated: { type: string; transaction: { status: string; mismatch: { fields: string[] } } } };

describe("generic QR: a paid answer that is not what the QR asked is held, never SUCCESS", () => {
  let t: TestApp;
  let tenant: Tenant;
  const receiver = new WebhookReceiver();
  const log = capturedLogger("warn");
  const gen = async (amount: number, currency: number, expiredAfter = 60_000) =>
    (await post(`${t.url}/qr/generate`, { amount, currency, expiredAfter }, AUTH.qr(tenant.keys.qr))).body as {
      transactionId: string;
      data: { md5: string };
    };
  const status = async (md5: string) =>
    ((await post(`${t.url}/qr/check`, { md5 }, AUTH.qr(tenant.keys.qr))).body as { status: string }).status;
  const view = async (id: string) =>
    (await t.admin<{ transaction: TxView }>(`query($id: ID!) { transaction(id: $id) { ${FIELDS} } }`, { id }))
      .transaction;
  const resolve = (transactionId: string, action: string, by?: string, note?: string) =>
    t.admin<{ resolveMismatch: { status: string } }>(
      `mutation($i: ResolveMismatchInput!) { resolveMismatch(input: $i) { status } }`,
      { i: { transactionId, action, by, note } },
    );
  const heldEvent = (id: string) =>
    waitFor(
      () =>
        receiver.deliveries.find((d) => d.transactionId === id && d.type === "payment.mismatched" && d.signatureOk) ??
        null,
      20_000,
    );

  beforeAll(async () => {
    await receiver.up();
    t = await startTestApp(
      {
        LOG_LEVEL: "warn",
        QR_EXPIRY_GRACE_MS: "30000",
        QR_LATE_WATCH_MS: "3600000",
        QR_LATE_CHECK_INTERVAL_MS: "500",
      },
      { logger: log.logger },
    );
    tenant = await createTenant(t, { webhooks: receiver });
  });
  afterAll(async () => {
    await t?.stop();
    await receiver.down();
  });

  it("1.00 paid on a 1.50 QR: PENDING with what arrived, event + signed webhook + subscription + one error line", async () => {
    const tx = await gen(1.5, 840);
    const { client, sub } = subscribe<Live>(
      t.url,
      AUTH.qr(tenant.keys.qr),
      `subscription($id: ID!) { transactionUpdated(transactionId: $id) { type transaction { status mismatch { fields } } } }`,
      { id: tx.transactionId },
    );
    try {
      await waitFor(() => sub.events.length >= 1, 10_000);
      expect((await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5, amount: "1.00" })).status).toBe(200);
      const delivery = await heldEvent(tx.transactionId);
      expect(delivery).toMatchObject({ status: "PENDING", headersOk: true });
      expect(await status(tx.data.md5)).toBe("PENDING");
      const v = await view(tx.transactionId);
      expect(v.status).toBe("PENDING");
      expect(v.mismatch).toMatchObject({
        fields: ["amount"],
        expected: { amount: "1.50", currency: "USD", account: tenant.bakongAccountId },
        arrived: { amount: "1.00", currency: "USD", account: tenant.bakongAccountId },
        source: "network check_transaction_by_md5",
        late: false,
        resolution: null,
      });
      expect(v.mismatch?.reference).toMatch(/^[0-9a-f]{64}$/);
      expect(v.events.map((e) => [e.type, e.transaction.status])).toEqual([
        ["payment.created", "PENDING"],
        ["payment.mismatched", "PENDING"],
      ]);
      // The webhook carries what arrived, as the OpenAPI document's webhooks section describes it.
      const body = JSON.parse(receiver.received.find((r) => r.headers["x-event-id"] === delivery.eventId)!.body);
      expect(body.data.transaction.mismatch).toMatchObject({ fields: ["amount"], arrived: { amount: "1.00" } });
      const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
        webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: object }> } } }>;
      };
      const ajv = new Ajv2020({ strict: false });
      (addFormats as unknown as (a: Ajv2020) => void)(ajv);
      const validate = ajv.compile(
        doc.webhooks["payment.mismatched"].post.requestBody.content["application/json"].schema,
      );
      expect({ ok: validate(body), errors: validate.errors }).toEqual({ ok: true, errors: null });
      await waitFor(() => sub.events.some((e) => e.transactionUpdated.type === "payment.mismatched"), 10_000);
      const live = sub.events.find((e) => e.transactionUpdated.type === "payment.mismatched")!;
      expect(live.transactionUpdated.transaction).toEqual({ status: "PENDING", mismatch: { fields: ["amount"] } });
      const lines = log.lines.filter((l) => l.includes(tx.transactionId) && l.includes('"level":50'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("HELD");
      expect(lines[0]).toContain("1.00 USD");
    } finally {
      sub.close();
      await client.dispose();
    }
  });

  it("past its expiry it stays PENDING (reads and monitor), a later paid answer never makes it SUCCESS; accept → SUCCESS, who and when recorded", async () => {
    const tx = await gen(2.5, 840, 30_000);
    await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5, amount: "2.49" });
    await heldEvent(tx.transactionId);
    // The network now answers the right amount: a later paid answer. The monitor does not ask for a held payment,
    // and the one transition function refuses to complete it whoever asks.
    const sim = networkSim(t.app);
    sim.state.transactions.get(tx.data.md5)!.amount = "2.50";
    t.clock.advance(31_000 + 30_000);
    await moreJobRuns(t, "qr.monitor", 3);
    const direct = await t.app.core.store.transition({
      id: tx.transactionId,
      to: "SUCCESS",
      event: "payment.completed",
    });
    expect(direct.won).toBe(false);
    expect(await status(tx.data.md5)).toBe("PENDING");
    const pending = await t.admin<{ transactions: { edges: { node: { id: string } }[] } }>(
      `{ transactions(first: 100, filter: { status: PENDING, mismatched: true }) { edges { node { id } } } }`,
    );
    expect(pending.transactions.edges.map((e) => e.node.id)).toContain(tx.transactionId);
    expect((await view(tx.transactionId)).events.map((e) => e.type)).toEqual(["payment.created", "payment.mismatched"]);

    const before = t.clock.now().getTime();
    expect(
      (await resolve(tx.transactionId, "ACCEPT_AS_PAID", "ops: Dara", "customer paid 0.01 short; accepted"))
        .resolveMismatch.status,
    ).toBe("SUCCESS");
    const v = await view(tx.transactionId);
    expect(v.status).toBe("SUCCESS");
    expect(v.mismatch?.resolution).toMatchObject({
      action: "accepted",
      by: "ops: Dara",
      note: "customer paid 0.01 short; accepted",
    });
    expect(Date.parse(v.mismatch!.resolution!.at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(v.mismatch!.resolution!.at)).toBeLessThanOrEqual(t.clock.now().getTime());
    expect(v.events.map((e) => [e.type, e.transaction.status])).toEqual([
      ["payment.created", "PENDING"],
      ["payment.mismatched", "PENDING"],
      ["payment.completed", "SUCCESS"],
    ]);
    expect(v.events[2].transaction.mismatch).toEqual({
      fields: ["amount"],
      resolution: { action: "accepted", by: "ops: Dara" },
    });
    await waitFor(
      () => receiver.deliveries.find((d) => d.transactionId === tx.transactionId && d.type === "payment.completed"),
      20_000,
    );
    // Resolved once: a second resolution says who resolved it.
    await expect(resolve(tx.transactionId, "MARK_FAILED")).rejects.toThrow(/is not held: it was accepted by ops: Dara/);
  });

  it("KHR paid on a USD QR → held; marked failed → FAILED (payment.failed), recorded as by the admin API", async () => {
    const tx = await gen(1, 840);
    await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5, amount: "1", currency: "KHR" });
    await heldEvent(tx.transactionId);
    expect((await view(tx.transactionId)).mismatch).toMatchObject({
      fields: ["currency"],
      arrived: { amount: "1", currency: "KHR" },
      expected: { amount: "1.00", currency: "USD" },
    });
    expect((await resolve(tx.transactionId, "MARK_FAILED")).resolveMismatch.status).toBe("FAILED");
    const v = await view(tx.transactionId);
    expect(v.mismatch?.resolution).toMatchObject({ action: "failed", by: "admin API", note: null });
    expect(v.events.at(-1)?.type).toBe("payment.failed");
  });

  it("paid to another receiving account → held; a payment that is what was asked still completes", async () => {
    const other = await gen(3, 840);
    await post(`${t.url}/sim/network/pay`, { md5: other.data.md5, toAccountId: "someone_else@abaa" });
    await heldEvent(other.transactionId);
    expect((await view(other.transactionId)).mismatch).toMatchObject({
      fields: ["account"],
      arrived: { amount: "3.00", currency: "USD", account: "someone_else@abaa" },
    });
    // The same account in other letters is the same account; the amount as the network writes it (3) is 3.00.
    const fine = await gen(3, 840);
    await post(`${t.url}/sim/network/pay`, { md5: fine.data.md5, toAccountId: tenant.bakongAccountId.toUpperCase() });
    await waitFor(async () => (await status(fine.data.md5)) === "SUCCESS", 20_000);
    expect((await view(fine.transactionId)).mismatch).toBeNull();
    expect(await status(other.data.md5)).toBe("PENDING");
  });

  it("a late payment that differs: held while EXPIRED (late); accepted → SUCCESS with late: true", async () => {
    const tx = await gen(5, 840, 30_000);
    t.clock.advance(31_000);
    await waitFor(async () => (await status(tx.data.md5)) === "EXPIRED", 20_000);
    await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5, amount: "4.00" });
    const delivery = await heldEvent(tx.transactionId);
    expect(delivery.status).toBe("EXPIRED");
    const held = await view(tx.transactionId);
    expect(held.mismatch).toMatchObject({ fields: ["amount"], late: true, resolution: null });
    expect(held.status).toBe("EXPIRED");
    await resolve(tx.transactionId, "ACCEPT_AS_PAID", "dashboard");
    const v = await view(tx.transactionId);
    expect(v).toMatchObject({ status: "SUCCESS", latePayment: true });
    expect(v.events.map((e) => [e.type, e.transaction.status])).toEqual([
      ["payment.created", "PENDING"],
      ["payment.expired", "EXPIRED"],
      ["payment.mismatched", "EXPIRED"],
      ["payment.completed", "SUCCESS"],
    ]);
  });

  it("only a held payment can be resolved, only by the admin token", async () => {
    const tx = await gen(1, 840);
    await expect(resolve(tx.transactionId, "ACCEPT_AS_PAID")).rejects.toThrow(
      /is not held: it has no payment that differs/,
    );
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTH.qr(tenant.keys.qr) },
      body: JSON.stringify({
        query: `mutation { resolveMismatch(input: { transactionId: "${tx.transactionId}", action: "ACCEPT_AS_PAID" }) { status } }`,
      }),
    });
    expect(((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe(
      "UNAUTHENTICATED",
    );
    await expect(resolve(tx.transactionId, "REFUND")).rejects.toThrow(/action must be ACCEPT_AS_PAID or MARK_FAILED/);
  });
});
