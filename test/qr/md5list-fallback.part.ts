import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import { waitFor } from "../support/wait.js";
import { networkSim } from "../support/simulators.js";

// Issue 20, point 1: production's md5-list endpoint can answer a bare nginx 403 with a valid token while the
// single-md5 endpoint works. The monitor keeps following payments with single checks and says so.

describe("generic QR monitor when the md5-list endpoint is refused", () => {
  let t: TestApp;
  let tenant: Tenant;
  const metric = async () => {
    const text = await (
      await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    return text.split("\n").filter((l) => l.startsWith("network_md5_check_mode{"));
  };
  beforeAll(async () => {
    t = await startTestApp({ NETWORK_LIST_REPROBE_MS: "1000" });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  it("md5list-forbidden → payments still become SUCCESS via single checks; mode single in /metrics; back to list after", async () => {
    const sim = networkSim(t.app);
    expect(await metric()).toEqual([
      'network_md5_check_mode{mode="list"} 1',
      'network_md5_check_mode{mode="single"} 0',
    ]);
    await post(`${t.url}/sim/network/fault`, { mode: "md5list-forbidden" });
    const gen = async () =>
      (await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 600_000 }, AUTH.qr(tenant.keys.qr)))
        .body as { data: { md5: string } };
    const status = async (md5: string) =>
      ((await post(`${t.url}/qr/check`, { md5 }, AUTH.qr(tenant.keys.qr))).body as { status: string }).status;
    const a = await gen();
    await post(`${t.url}/sim/network/pay`, { md5: a.data.md5 });
    await waitFor(async () => (await status(a.data.md5)) === "SUCCESS", 15_000);
    expect(sim.state.calls.md5ListRefused).toBeGreaterThan(0);
    expect(sim.state.calls.md5).toBeGreaterThan(0);
    expect(await metric()).toEqual([
      'network_md5_check_mode{mode="list"} 0',
      'network_md5_check_mode{mode="single"} 1',
    ]);

    await post(`${t.url}/sim/network/fault`, { mode: "ok" });
    await gen(); // left pending: the monitor keeps checking, so the list endpoint is tried again
    const b = await gen();
    await post(`${t.url}/sim/network/pay`, { md5: b.data.md5 });
    await waitFor(async () => (await status(b.data.md5)) === "SUCCESS", 15_000);
    await waitFor(async () => (await metric()).includes('network_md5_check_mode{mode="list"} 1'), 15_000);
  });
});
