import { describe, it, expect } from "@jest/globals";
import { TtlCache } from "../../src/cache/ttl-cache.js";

describe("TtlCache", () => {
  it("reuses a value until its time-to-live ends, then loads again", async () => {
    let now = 0;
    let loads = 0;
    const cache = new TtlCache<string>(1000, () => now);
    const load = async () => `v${++loads}`;
    expect(await cache.get("k", load)).toBe("v1");
    now = 999;
    expect(await cache.get("k", load)).toBe("v1");
    now = 1000;
    expect(await cache.get("k", load)).toBe("v2");
  });

  it("concurrent misses share one load; misses (null) are not kept", async () => {
    let loads = 0;
    const cache = new TtlCache<string>(1000, () => 0);
    const slow = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 20));
      return "v";
    };
    expect(await Promise.all([cache.get("k", slow), cache.get("k", slow), cache.get("k", slow)])).toEqual([
      "v",
      "v",
      "v",
    ]);
    expect(loads).toBe(1);
    let nulls = 0;
    const missing = async () => (nulls++, null);
    await cache.get("x", missing);
    await cache.get("x", missing);
    expect(nulls).toBe(2);
  });

  it("a value loaded while an invalidation happened is returned but not kept", async () => {
    let release: (v: string) => void = () => undefined;
    const cache = new TtlCache<string>(60_000, () => 0);
    const inFlight = cache.get("k", () => new Promise<string>((r) => (release = r)));
    cache.delete((key) => key === "k"); // e.g. the key was revoked while its row was being read
    release("stale");
    expect(await inFlight).toBe("stale");
    expect(await cache.get("k", async () => "fresh")).toBe("fresh");
  });

  it("delete drops only the matching entries; the size bound drops the oldest", async () => {
    const cache = new TtlCache<number>(60_000, () => 0, 2);
    await cache.get("a", async () => 1);
    await cache.get("b", async () => 2);
    cache.delete((_k, v) => v === 1);
    let reloaded = 0;
    await cache.get("b", async () => ++reloaded);
    expect(reloaded).toBe(0);
    await cache.get("c", async () => 3);
    await cache.get("d", async () => 4); // over the bound of 2: "b" (oldest) goes
    await cache.get("b", async () => ++reloaded);
    expect(reloaded).toBe(1);
  });

  it("peek and put: a value read recently outlives one kept earlier but not read since (least recently used)", () => {
    let now = 0;
    const cache = new TtlCache<number>(1000, () => now, 2);
    cache.put("a", 1);
    cache.put("b", 2);
    expect(cache.peek("a")).toBe(1); // "a" is now the most recently used
    cache.put("c", 3); // over the bound of 2: "b" goes, not "a"
    expect(cache.peek("b")).toBeUndefined();
    expect(cache.peek("a")).toBe(1);
    expect(cache.peek("c")).toBe(3);
    now = 1000; // the time-to-live holds for peek too
    expect(cache.peek("a")).toBeUndefined();
  });
});
