import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import { networkSim } from "../support/simulators.js";

// Issue 20, point 5: a merchant with deeplink settings gets a short link with each generic QR (best effort).

const SETTINGS = {
  deeplinkAppName: "Test Shop",
  deeplinkAppIconUrl: "https://shop.example/icon.png",
  deeplinkCallback: "testshop://paid",
};

describe("generic QR deeplinks (generate_deeplink_by_qr)", () => {
  let t: TestApp;
  let withSettings: Tenant;
  let without: Tenant;
  const gen = (tenant: Tenant) =>
    post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 60_000 }, AUTH.qr(tenant.keys.qr));
  beforeAll(async () => {
    t = await startTestApp();
    withSettings = await createTenant(t, { name: "Linked" });
    without = await createTenant(t, { name: "Plain" });
    await t.admin(`mutation($id: ID!, $input: MerchantInput!) { updateMerchant(id: $id, input: $input) { id } }`, {
      id: withSettings.merchantId,
      input: SETTINGS,
    });
  });
  afterEach(async () => {
    await post(`${t.url}/sim/network/fault`, { mode: "ok" });
  });
  afterAll(async () => t?.stop());

  it("a merchant with settings gets `deeplink` from the network; one without gets none (response unchanged)", async () => {
    const sim = networkSim(t.app);
    const calls = sim.state.calls.deeplink;
    const res = await gen(withSettings);
    expect(res.status).toBe(200);
    expect((res.body as { deeplink: string }).deeplink).toMatch(/^https:\/\/bakong\.page\.link\/\S+$/);
    expect(sim.state.calls.deeplink).toBe(calls + 1);
    const plain = await gen(without);
    expect(plain.status).toBe(200);
    expect(Object.keys(plain.body as object)).not.toContain("deeplink");
    expect(sim.state.calls.deeplink).toBe(calls + 1);
  });

  it("the network's failure (HTTP 200, non-zero code) or an outage leaves it out and never fails the generate", async () => {
    for (const mode of ["deeplink-error", "error500"]) {
      await post(`${t.url}/sim/network/fault`, { mode });
      const res = await gen(withSettings);
      expect(res.status).toBe(200);
      expect((res.body as { deeplink?: unknown }).deeplink).toBeUndefined();
      expect((res.body as { status: string }).status).toBe("PENDING");
    }
    // Over GraphQL it is null.
    await post(`${t.url}/sim/network/fault`, { mode: "deeplink-error" });
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTH.qr(withSettings.keys.qr) },
      body: JSON.stringify({
        query: `mutation { generateQr(input: { amount: 1, currency: 840, expiredAfter: 60000 }) { transactionId deeplink } }`,
      }),
    });
    const json = (await res.json()) as { data: { generateQr: { transactionId: string; deeplink: string | null } } };
    expect(json.data.generateQr.transactionId).toMatch(/^txn_/);
    expect(json.data.generateQr.deeplink).toBeNull();
  });

  it("settings are all three or none, with an https icon and a callback URL", async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({
        query: `mutation($id: ID!) { updateMerchant(id: $id, input: { deeplinkAppName: "X", deeplinkAppIconUrl: "http://x/i.png" }) { id } }`,
        variables: { id: without.merchantId },
      }),
    });
    const json = (await res.json()) as { errors: { extensions: { code: string; details: { field: string }[] } }[] };
    expect(json.errors[0].extensions.code).toBe("BAD_USER_INPUT");
    expect(json.errors[0].extensions.details.map((d) => d.field).sort()).toEqual([
      "deeplinkAppIconUrl",
      "deeplinkCallback",
    ]);
  });
});
