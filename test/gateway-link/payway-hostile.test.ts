import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { linkModule } from "../../src/gateway-link/index.js";
import { qrPayee } from "../../src/gateway-link/payee.js";
import { startTestApp, createTenant, post, AUTH, capturedLogger, type TestApp, type Tenant } from "../support/app.js";
import { waitFor } from "../support/wait.js";

// A PayWay link whose page (or API) works against the service, end to end in real Chromium against the service's
// own twin in its hostile-test modes: what the page's scripts say is never the upstream's word, a QR must pay the
// configuration's payee, and a receipt is kept only on the page's or PayWay's origin.

interface LinkTx {
  transactionId: string;
  status: string;
  data: { qr: string; clientId: string };
  receiptUrl?: string;
}

interface LinkConfigView {
  id: string;
  expectedPayee: string | null;
  expectedPayeeSource: string | null;
}

/** The twin's QRs pay this account (src/simulators/payway/running-twin.ts). */
const TWIN_PAYEE = "sim_payway@abaa";
/** An origin the page may load from (LINK_ALLOWED_ORIGINS): a CDN's, say. Not a place for receipts. */
const CDN = "https://cdn.example.com";

describe("a PayWay page cannot vouch for itself", () => {
  let t: TestApp;
  let tenant: Tenant;
  let linkUrl: string;
  const log = capturedLogger("warn");
  const gen = (key = tenant.keys.gatewayLink, amount = 5000) =>
    post(`${t.url}/gateway-link/generate-qr`, { amount, currency: 116 }, AUTH.gatewayLink(key));
  const check = async (id: string) =>
    (await post(`${t.url}/gateway-link/check`, { transactionId: id }, AUTH.gatewayLink(tenant.keys.gatewayLink)))
      .body as LinkTx;
  const polls = async (clientId: string) =>
    ((await (await fetch(`${t.url}/sim/link/clients/${clientId}`)).json()) as { polls: number }).polls;
  const fault = (body: Record<string, unknown>) => post(`${t.url}/sim/payway/fault`, body);
  const linkConfig = async (id: string) =>
    (
      await t.admin<{ linkConfigs: LinkConfigView[] }>(`{ linkConfigs { id expectedPayee expectedPayeeSource } }`)
    ).linkConfigs.find((l) => l.id === id);

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: "warn", LINK_ALLOWED_ORIGINS: CDN }, { logger: log.logger });
    const link = (await post(`${t.url}/sim/payway/links`, { currency: "KHR" })).body as { code: string };
    linkUrl = `${t.url}/sim/payway/${link.code}`;
    tenant = await createTenant(t, { linkUrl, linkProtocol: "payway" });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("a page that forges approvals in its own scripts, the API refusing the worker's poll (403): no SUCCESS until PayWay says so", async () => {
    await fault({ mode: "hostile" });
    try {
      const g = await gen();
      expect(g.status).toBe(200);
      const b = g.body as LinkTx;
      const watch = t.app.module(linkModule).watch;
      await waitFor(async () => watch.stats().viaPage === 1, 15_000, 100, "the fallback to a held page");
      // Polls through the held page reach PayWay (the twin counts them) and it says "request_qr"; the page's
      // fetch, XMLHttpRequest, Response readers and JSON.parse all say "approved".
      const seen = await polls(b.data.clientId);
      await waitFor(
        async () => (await polls(b.data.clientId)) >= seen + 4 || (await check(b.transactionId)).status !== "PENDING",
        20_000,
        100,
        "four polls through the held page",
      );
      expect((await check(b.transactionId)).status).toBe("PENDING");
      // The payer pays: PayWay's own answer, read through the same page, ends it.
      expect((await post(`${t.url}/sim/link/approve`, { clientId: b.data.clientId })).status).toBe(200);
      const done = await waitFor(async () => {
        const c = await check(b.transactionId);
        return c.status === "SUCCESS" ? c : null;
      }, 20_000);
      expect(new URL(done.receiptUrl ?? "").pathname).toBe("/api/payment-gateway/v1/payments/download-receipt");
    } finally {
      await fault({ mode: "ok" });
    }
  }, 60_000);

  it("a QR payable to another account is refused (502 naming it, FAILED, no QR); the payee was recorded from the first QR and is the operator's to change", async () => {
    // A configuration that names no payee records its first QR's (trust on first use), shown to the operator.
    const first = await createTenant(t, { name: "First Use Shop", linkUrl, linkProtocol: "payway" });
    expect(await linkConfig(first.linkConfigId)).toMatchObject({ expectedPayee: null, expectedPayeeSource: null });
    const ok = await gen(first.keys.gatewayLink);
    expect(ok.status).toBe(200);
    expect(qrPayee((ok.body as LinkTx).data.qr)).toBe(TWIN_PAYEE);
    expect(await linkConfig(first.linkConfigId)).toMatchObject({
      expectedPayee: TWIN_PAYEE,
      expectedPayeeSource: "first-qr",
    });
    expect(log.lines.join("\n")).toMatch(/its first QR's payee is recorded/);

    await fault({ mode: "payee", payee: "attacker@aclb" });
    try {
      const res = await gen(first.keys.gatewayLink);
      expect(res.status).toBe(502);
      const error = (res.body as { error: { code: string; message: string; transactionId: string } }).error;
      expect(error.code).toBe("UPSTREAM_UNAVAILABLE");
      expect(error.message).toBe(
        `The payment page issued a QR payable to attacker@aclb; this configuration's payee is ${TWIN_PAYEE}`,
      );
      const tx = await t.app.core.store.get(error.transactionId);
      expect(tx?.status).toBe("FAILED");
      expect(tx?.qr ?? null).toBeNull();

      // The operator (and only the operator: the admin API) names another payee: the QR is then accepted.
      await t.admin(`mutation($id: ID!, $i: LinkConfigInput!) { updateLinkConfig(id: $id, input: $i) { id } }`, {
        id: first.linkConfigId,
        // Typed as an operator might: the same account whatever its case (as account ids are compared elsewhere).
        i: { expectedPayee: "Attacker@ACLB" },
      });
      expect(await linkConfig(first.linkConfigId)).toMatchObject({
        expectedPayee: "Attacker@ACLB",
        expectedPayeeSource: "operator",
      });
      expect((await gen(first.keys.gatewayLink)).status).toBe(200);
    } finally {
      await fault({ mode: "ok" });
    }
    // Back to the link's own payee: refused now, since the operator said otherwise.
    expect((await gen(first.keys.gatewayLink)).status).toBe(502);
  }, 60_000);

  it("a receipt URL on another origin (even one the page may load from) is not recorded, and is logged", async () => {
    await fault({ mode: "foreign-receipt", receiptOrigin: CDN });
    try {
      const b = (await gen()).body as LinkTx;
      expect((await post(`${t.url}/sim/link/approve`, { clientId: b.data.clientId })).status).toBe(200);
      const done = await waitFor(async () => {
        const c = await check(b.transactionId);
        return c.status === "SUCCESS" ? c : null;
      }, 20_000);
      expect(done.receiptUrl).toBeUndefined();
      expect((await t.app.core.store.get(b.transactionId))?.upstream.receiptUrl ?? null).toBeNull();
      expect(log.lines.join("\n")).toContain(`receipt URL dropped (not on the payment page's or its API's origin)`);
      expect(log.lines.join("\n")).toContain(`${CDN}/api/payment-gateway/v1/payments/download-receipt`);
    } finally {
      await fault({ mode: "ok" });
    }
  }, 60_000);
});
