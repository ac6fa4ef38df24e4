import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { decodeKhqr } from "../../src/khqr/index.js";
import { waitFor } from "../support/wait.js";

/**
 * API keys, merchant accounts and gateway credentials are cached in each process for a few seconds (the
 * generate paths read none of those tables). Revocations and merchant edits must still take effect at once in every process: the
 * clocks here never move, so only the NOTIFY can have evicted what a process cached.
 */
describe("cached keys, merchants and gateway credentials across processes", () => {
  let a: TestApp;
  let b: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    a = await startTestApp({}, { role: "api" });
    // Agenda creates its tables in the background after start; a second process doing the same at that moment
    // can fail on PostgreSQL's catalog (concurrent CREATE … IF NOT EXISTS). Its last index means it is done.
    await waitFor(
      async () =>
        (
          await a.app.core.db.query<{ ok: boolean }>(`select to_regclass('agenda_logs_job_name_idx') is not null as ok`)
        )[0].ok,
      30_000,
    );
    b = await startTestApp({}, { role: "api", dbUrl: a.dbUrl });
    tenant = await createTenant(a);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  const newQrKey = async () =>
    (
      await a.admin<{ createApiKey: { apiKey: string; key: { id: string } } }>(
        `mutation($input: ApiKeyInput!) { createApiKey(input: $input) { apiKey key { id } } }`,
        { input: { merchantId: tenant.merchantId, kind: "qr" } },
      )
    ).createApiKey;
  const generate = (app: TestApp, key: string) =>
    post(`${app.url}/qr/generate`, { amount: 1.5, currency: 840, expiredAfter: 60_000 }, AUTH.qr(key));

  it("a key revoked through process B stops working in process A at once", async () => {
    const key = await newQrKey();
    expect((await generate(a, key.apiKey)).status).toBe(200); // A has it cached now
    expect((await generate(a, key.apiKey)).status).toBe(200);
    await b.admin(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: key.key.id });
    expect((await generate(b, key.apiKey)).status).toBe(401);
    await waitFor(async () => (await generate(a, key.apiKey)).status === 401, 2000, 20);
  });

  it("a revoked key stays refused in the process that revoked it, with no wait", async () => {
    const key = await newQrKey();
    expect((await generate(a, key.apiKey)).status).toBe(200);
    await a.admin(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: key.key.id });
    expect((await generate(a, key.apiKey)).status).toBe(401);
  });

  it("gateway credentials changed through process B are used by process A at once", async () => {
    let n = 0;
    const gw = () =>
      post(
        `${a.url}/gateway/generate-qr`,
        { qrData: { orderId: `kc-${Date.now().toString(36)}-${n++}`, amount: 1.25, currency: "USD" } },
        AUTH.gateway(tenant.keys.gateway),
      );
    expect((await gw()).status).toBe(400); // the simulated gateway does not know the tenant's upstream merchant yet; A has read the config
    expect(
      (await post(`${a.url}/sim/gateway/merchants`, { merchantId: "kc_merchant", apiKey: "kc-secret-0123456789" }))
        .status,
    ).toBeLessThan(300);
    await b.admin(
      `mutation($id: ID!, $input: GatewayConfigInput!) { updateGatewayConfig(id: $id, input: $input) { id } }`,
      { id: tenant.gatewayConfigId, input: { upstreamMerchantId: "kc_merchant", apiSecret: "kc-secret-0123456789" } },
    );
    await waitFor(async () => (await gw()).status === 200, 2000, 20);
  });

  it("a merchant edited through process B issues QRs with the new account in process A at once", async () => {
    const name = (qr: string) => (decodeKhqr(qr).data as { merchantName?: string }).merchantName;
    const first = await generate(a, tenant.keys.qr);
    expect(name((first.body as { data: { qr: string } }).data.qr)).toBe("Test Shop");
    await b.admin(`mutation($id: ID!, $input: MerchantInput!) { updateMerchant(id: $id, input: $input) { id } }`, {
      id: tenant.merchantId,
      input: { merchantName: "Renamed Shop" },
    });
    await waitFor(
      async () =>
        name(((await generate(a, tenant.keys.qr)).body as { data: { qr: string } }).data.qr) === "Renamed Shop",
      2000,
      20,
    );
  });
});
