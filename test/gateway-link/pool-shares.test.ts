import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { linkModule } from "../../src/gateway-link/index.js";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { waitFor } from "../support/wait.js";

// Fair shares of the browser pool, in real Chromium against the service's PayWay twin: one merchant whose payments
// hold pages (its status polls refused as a bot, so each is polled through a page of its own) cannot take the pages
// another merchant's generate needs, and its own generate over its share is told to come back (429), nothing stored.

interface LinkTx {
  transactionId: string;
  expiredAt: string;
  status: string;
  data: { qr: string; clientId: string };
}

interface Refused {
  error: { code: string; message: string; details: unknown[] };
}

describe("fair shares of the browser pool (per merchant and configuration, per worker)", () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const gen = (tenant: Tenant, amount: number) =>
    post(`${t.url}/gateway-link/generate-qr`, { amount, currency: 116 }, AUTH.gatewayLink(tenant.keys.gatewayLink));
  const pool = () => t.app.module(linkModule).pool;
  const stored = async (tenant: Tenant) =>
    (
      await t.app.core.db.query<{ n: number }>(`select count(*)::int as n from "transaction" where api_key_ref = ?`, [
        tenant.keyIds.gatewayLink,
      ])
    )[0].n;
  const fault = (body: Record<string, unknown>) => post(`${t.url}/sim/payway/fault`, body);

  beforeAll(async () => {
    // A small worker: 4 held pages in all, 2 kept for opening; each merchant may hold 2 and open 1 at once.
    t = await startTestApp({
      LINK_MAX_MONITORS: "4",
      LINK_OPEN_PAGES: "2",
      LINK_HELD_PAGES_PER_MERCHANT: "2",
      LINK_OPENS_PER_MERCHANT: "1",
    });
    const link = async (merchant: string) =>
      ((await post(`${t.url}/sim/payway/links`, { currency: "KHR", merchant })).body as { code: string }).code;
    const options = async (name: string) => ({
      name,
      linkUrl: `${t.url}/sim/payway/${await link(name)}`,
      linkProtocol: "payway",
    });
    a = await createTenant(t, await options("Busy Shop"));
    b = await createTenant(t, await options("Quiet Shop"));
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("opens: a merchant's second concurrent generate over its share → 429 at once; another merchant's is served", async () => {
    // Each page waits 1.5 s for its QR, so the generates overlap.
    await fault({ mode: "slow", slowMs: 1500 });
    try {
      const opening = gen(a, 1000);
      // The others are asked while its page is opening (it holds the merchant's one opening share).
      await waitFor(() => pool().stats().opening === 1, 10_000, 20, "the first page opening");
      const [first, second, other] = await Promise.all([opening, gen(a, 1001), gen(b, 1002)]);
      expect(first.status).toBe(200);
      expect(other.status).toBe(200);
      expect(second.status).toBe(429);
      expect(second.headers.get("retry-after")).toBe("1");
      expect((second.body as Refused).error).toMatchObject({ code: "RATE_LIMITED", details: [] });
      expect((second.body as Refused).error.message).toMatch(/LINK_OPENS_PER_MERCHANT.*retry in 1 s$/);
      expect(await stored(a)).toBe(1);
      // Ended, so that they hold no page in the next test.
      for (const r of [first, other]) {
        const { transactionId, data } = r.body as LinkTx;
        expect((await post(`${t.url}/sim/link/decline`, { clientId: data.clientId })).status).toBe(200);
        await waitFor(async () => (await t.app.core.store.get(transactionId))?.status === "FAILED", 15_000);
      }
    } finally {
      await fault({ mode: "ok" });
    }
  }, 60_000);

  // Once its payments' 180 s are over, their pages go to its new payments.
  it("held pages: a merchant at its share → 429 naming when, nothing stored; another merchant's generate gets its QR", async () => {
    await fault({ mode: "bot-check" });
    try {
      const watch = t.app.module(linkModule).watch;
      const before = await stored(a);
      const held = [(await gen(a, 2000)).body as LinkTx, (await gen(a, 2001)).body as LinkTx];
      // Both polled through a page of their own (the polls were refused), A's whole share.
      await waitFor(async () => watch.stats().viaPage === 2 && pool().stats().held === 2, 20_000);

      const over = await gen(a, 2002);
      expect(over.status).toBe(429);
      expect((over.body as Refused).error.code).toBe("RATE_LIMITED");
      expect((over.body as Refused).error.message).toMatch(
        /payments already hold 2 browser pages on this worker, its share \(LINK_HELD_PAGES_PER_MERCHANT\): a new payment could not be followed; retry in \d+ s$/,
      );
      // Until the first of its held payments ends its 180 s (the page may be taken after that).
      const retryAfter = Number(over.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(150);
      expect(retryAfter).toBeLessThanOrEqual(180);
      expect(await stored(a)).toBe(before + 2);

      const other = await gen(b, 3000);
      expect(other.status).toBe(200);
      expect((other.body as LinkTx).data.qr).not.toBe("");

      // A's two payments run out their 180 s (moved clock) and are watched on for a late approval through their
      // pages; a new payment of A is served again, and the page it needs is taken from A's oldest late one.
      t.clock.advance(Date.parse(held[1].expiredAt) - t.clock.now().getTime() + 1000);
      await waitFor(async () => {
        const s = await Promise.all(held.map((h) => t.app.core.store.get(h.transactionId)));
        return s.every((x) => x?.status === "EXPIRED");
      }, 20_000);
      const again = await gen(a, 2003);
      expect(again.status).toBe(200);
      const fresh = again.body as LinkTx;
      // Its approval is read through the page it took (its own polls are still refused): SUCCESS, not late.
      await waitFor(async () => watch.stats().viaPage === 4, 20_000);
      expect((await post(`${t.url}/sim/link/approve`, { clientId: fresh.data.clientId })).status).toBe(200);
      await waitFor(async () => (await t.app.core.store.get(fresh.transactionId))?.status === "SUCCESS", 20_000);
      expect((await t.app.core.store.get(fresh.transactionId))?.upstream.late).toBeUndefined();
      expect(pool().stats().held).toBeLessThanOrEqual(3);
    } finally {
      await fault({ mode: "ok" });
    }
  }, 90_000);
});
