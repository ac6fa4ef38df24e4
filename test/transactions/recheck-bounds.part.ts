import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { recheck, rechecked, type RecheckReply } from "../support/recheck.js";
import { networkSim } from "../support/simulators.js";
import type { NetworkSimulatorState } from "../../src/simulators/network/index.js";

// Issue 37, item 1: a recheck is an upstream call on the caller's say-so (docs/decisions/0194-recheck-bounds.md). One
// key hammering it reaches the network at most twice at a time and ten times a minute, never delays another tenant's
// recheck, and learns nothing of other tenants' transactions; a transaction is rechecked once at a time, across
// processes. The network simulator answers slowly here (5 s and 400 ms), so rechecks overlap.

interface QrTx {
  transactionId: string;
}

describe("recheckPayment under a hostile key", () => {
  let t: TestApp;
  let hostile: Tenant;
  let victim: Tenant;
  let net: NetworkSimulatorState;
  const gen = async (tenant: Tenant) =>
    (
      (
        await post(
          `${t.url}/qr/generate`,
          { amount: 1, currency: 840, expiredAfter: 3_600_000 },
          AUTH.qr(tenant.keys.qr),
        )
      ).body as QrTx
    ).transactionId;
  const checks = () => net.calls.md5List + net.calls.md5;
  const code = (r: RecheckReply) => r.error?.extensions?.code ?? "OK";

  beforeAll(async () => {
    t = await startTestApp({}, { role: "api" });
    hostile = await createTenant(t, { name: "Hostile Shop" });
    victim = await createTenant(t, { name: "Victim Shop", bakongAccountId: "victim_shop@devb" });
    net = networkSim(t.app).state;
  });
  afterEach(async () => {
    await post(`${t.url}/sim/network/fault`, { mode: "ok" });
  });
  afterAll(async () => t?.stop());

  it("40 rechecks at once from one key: at most 2 at a time reach the network; the other tenant is answered", async () => {
    const mine = await Promise.all(Array.from({ length: 12 }, () => gen(hostile)));
    const theirs = [await gen(victim), await gen(victim)];
    // The network answers in 5 s: the hostile key's two calls are still there when the victim's recheck arrives,
    // however busy the machine. (A wall-clock bound on the victim's answer failed on a slow machine: 6.5 s.)
    await post(`${t.url}/sim/network/fault`, { mode: "slow", slowMs: 5_000 });
    const before = checks();
    net.maxInFlight = 0;
    const hammer = Promise.all(
      Array.from({ length: 40 }, (_, i) => recheck(t, mine[i % mine.length], AUTH.qr(hostile.keys.qr))),
    );
    const victims = await rechecked(t, theirs[0], AUTH.qr(victim.keys.qr));
    const replies = await hammer;

    expect(victims.outcome).toBe("NOT_PAID");
    const answered = replies.filter((r) => code(r) === "OK");
    expect(replies.filter((r) => code(r) !== "OK").map(code)).toEqual(Array(40 - answered.length).fill("RATE_LIMITED"));
    expect(answered.length).toBeGreaterThanOrEqual(1);
    expect(answered.length).toBeLessThanOrEqual(10);
    // Each answered recheck is one network call. The key never had more than 2 in flight, and the victim's call ran
    // beside them: it waited for its own upstream call, not behind the hammering key's (a limit shared across keys
    // would have refused or queued it).
    expect(checks() - before).toBe(answered.length + 1);
    expect(net.maxInFlight).toBe(3);
    const overBudget = replies.find((r) => /for this credential; retry in \d+ s/.test(r.error?.message ?? ""));
    expect(overBudget?.error?.extensions?.retryAfter).toBeGreaterThanOrEqual(1);

    // The key's budget (10 a minute) spent at a fast network, a minute on: its own transaction and the victim's are
    // refused alike — no hint that the victim's exists — and nothing reaches the network; the victim's next recheck
    // still answers. (The budget refills a recheck every 6 s, so it is spent again here rather than left from the
    // 5 s hammering above.)
    await post(`${t.url}/sim/network/fault`, { mode: "ok" });
    t.clock.advance(60_000);
    const spend = await Promise.all(mine.slice(0, 10).map((id) => recheck(t, id, AUTH.qr(hostile.keys.qr))));
    expect(spend.filter((r) => code(r) === "OK").length).toBeGreaterThanOrEqual(1);
    const own = await recheck(t, mine[10], AUTH.qr(hostile.keys.qr));
    const foreign = await recheck(t, theirs[1], AUTH.qr(hostile.keys.qr));
    expect(own.error?.message).toMatch(/^Too many rechecks for this credential; retry in \d+ s$/);
    // The same refusal, but for the seconds to wait, which may tick between the two calls.
    const shape = (r: RecheckReply) => ({ code: code(r), message: r.error?.message.replace(/\d+/g, "N") });
    expect(shape(foreign)).toEqual(shape(own));
    const after = checks();
    expect((await rechecked(t, theirs[1], AUTH.qr(victim.keys.qr))).outcome).toBe("NOT_PAID");
    expect(checks()).toBe(after + 1);
    // A minute later the key has its budget back; the victim's transaction is still not its to see.
    t.clock.advance(60_000);
    expect(code(await recheck(t, theirs[1], AUTH.qr(hostile.keys.qr)))).toBe("NOT_FOUND");
    expect(code(await recheck(t, mine[1], AUTH.qr(hostile.keys.qr)))).toBe("OK");
  }, 60_000);

  it("one recheck of a transaction at a time, across processes: the second is refused while the first waits", async () => {
    const id = await gen(victim);
    const other = await startTestApp({}, { role: "api", dbUrl: t.dbUrl });
    try {
      for (const app of [t, other]) await post(`${app.url}/sim/network/fault`, { mode: "slow", slowMs: 400 });
      const [here, there] = await Promise.all([
        recheck(t, id, AUTH.qr(victim.keys.qr)),
        recheck(other, id, AUTH.qr(victim.keys.qr)),
      ]);
      const refused = [here, there].filter((r) => code(r) === "RATE_LIMITED");
      expect([here, there].filter((r) => code(r) === "OK")).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0].error?.message).toMatch(/is waiting for its upstream .*one at a time/);
    } finally {
      await other.stop();
    }
  }, 60_000);
});
