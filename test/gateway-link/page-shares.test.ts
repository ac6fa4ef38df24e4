import { describe, it, expect } from "@jest/globals";
import { PageShares, ShareTicket, type ShareRefusal } from "../../src/gateway-link/page-shares.js";

// The rules of the pool's fair shares on their own (the pool and the service apply them: pool-shares.test.ts):
// which share a page is refused by, and whose page a held page past its payment's time gives way to.

const shop = (config: string) => ({ merchant: "m_busy", config });
const other = { merchant: "m_quiet", config: "c_quiet" };

function taken(t: ShareTicket | ShareRefusal): ShareTicket {
  if (!(t instanceof ShareTicket)) throw new Error(`refused: ${JSON.stringify(t)}`);
  t.evict = () => undefined;
  return t;
}

describe("page shares", () => {
  let now = 1_000_000;
  const shares = () =>
    new PageShares(
      { held: 5, heldPerMerchant: 3, heldPerConfig: 2, opensPerMerchant: 2, opensPerConfig: 1 },
      () => now,
    );

  it("a configuration's share is narrower than its merchant's; another merchant is not touched by either", () => {
    const s = shares();
    taken(s.take(shop("c1"), now + 180_000));
    taken(s.take(shop("c1"), now + 180_000));
    expect(s.take(shop("c1"), now + 180_000)).toMatchObject({ kind: "hold", scope: "configuration", cap: 2 });
    taken(s.take(shop("c2"), now + 180_000));
    expect(s.take(shop("c2"), now + 180_000)).toMatchObject({ kind: "hold", scope: "merchant", cap: 3 });
    expect(s.holdRefusal(shop("c3"))).toMatchObject({ scope: "merchant", retryAfterMs: 180_000 });
    taken(s.take(other, now + 180_000));
    // Opens have shares of their own: one per configuration here, two per merchant.
    taken(s.take(shop("c1"), null));
    expect(s.take(shop("c1"), null)).toMatchObject({ kind: "open", scope: "configuration", retryAfterMs: 1000 });
    taken(s.take(shop("c2"), null));
    expect(s.take(shop("c3"), null)).toMatchObject({ kind: "open", scope: "merchant" });
    expect(s.counts()).toEqual({ held: 4, opening: 2 });
  });

  it("held pages in all stop at the worker's cap; a page past its time gives way to a payment within it, never the reverse", () => {
    const s = shares();
    const late = taken(s.take(shop("c1"), now + 1000));
    taken(s.take(shop("c2"), now + 180_000));
    taken(s.take(other, now + 180_000));
    taken(s.take({ merchant: "m_third", config: "c" }, now + 180_000));
    taken(s.take({ merchant: "m_fourth", config: "c" }, now + 180_000));
    expect(s.take({ merchant: "m_fifth", config: "c" }, now + 180_000)).toMatchObject({ scope: "worker", cap: 5 });
    now += 2000; // the first payment's 180 s are over: its page may be taken
    let evicted = false;
    late.evict = () => (evicted = true);
    // Another page past its time takes nobody's.
    expect(s.take({ merchant: "m_fifth", config: "c" }, now - 1)).toMatchObject({ scope: "worker" });
    expect(evicted).toBe(false);
    taken(s.take({ merchant: "m_fifth", config: "c" }, now + 180_000));
    expect(evicted).toBe(true);
    expect(late.released).toBe(true);
    expect(s.counts().held).toBe(5);
  });

  it("payments waiting for a page count against their share when a generate asks; pages opening do not", () => {
    const s = shares();
    taken(s.take(shop("c1"), now + 60_000));
    expect(s.holdRefusal(shop("c1"))).toBeNull();
    expect(s.holdRefusal(shop("c1"), [{ owner: shop("c1"), until: now + 30_000 }])).toMatchObject({
      scope: "configuration",
      retryAfterMs: 30_000,
    });
    expect(s.holdRefusal(shop("c1"), [{ owner: shop("c1"), until: now - 1 }])).toBeNull();
    // A page opening is closed once its QR is read: it holds nothing.
    taken(s.take(shop("c1"), null));
    expect(s.holdRefusal(shop("c1"))).toBeNull();
  });
});
