import { describe, it, expect } from "@jest/globals";
import { jittered, lateGapMs, PollGate, retryAfterMs } from "../../src/gateway-link/poll-pace.js";

// How a worker paces its PayWay status polls (pure: a given time): the late watch's cadence, ±10 % jitter, the
// per-worker rate cap and the hold after a 429. The same pacing against the twin: payway-late-and-outages.test.ts.

describe("poll pacing", () => {
  it("the late watch: from the page's cadence up to a minute the first hour, then every 10 minutes", () => {
    expect(lateGapMs(0, 3000)).toBe(3000);
    expect(lateGapMs(120_000, 3000)).toBe(30_000);
    expect(lateGapMs(30 * 60_000, 3000)).toBe(60_000);
    expect(lateGapMs(3600_000 - 1, 3000)).toBe(60_000);
    expect(lateGapMs(3600_000, 3000)).toBe(600_000);
    expect(lateGapMs(29 * 24 * 3600_000, 3000)).toBe(600_000);
    // Polls in the first hour and in a day: about 60 + 6 × 23, not the 28,800 of the page's cadence.
    let polls = 0;
    for (let t = 0; t < 24 * 3600_000; t += lateGapMs(t, 3000)) polls++;
    expect(polls).toBeGreaterThan(190);
    expect(polls).toBeLessThan(230);
  });

  it("jitter: every interval within ±10 %, and spread across it", () => {
    expect(jittered(3000, () => 0)).toBeCloseTo(2700, 6);
    expect(jittered(3000, () => 1)).toBeCloseTo(3300, 6);
    const seen = Array.from({ length: 2000 }, () => jittered(3000));
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(2700);
    expect(Math.max(...seen)).toBeLessThanOrEqual(3300);
    expect(Math.min(...seen)).toBeLessThan(2750);
    expect(Math.max(...seen)).toBeGreaterThan(3250);
  });

  it("Retry-After in seconds or as an HTTP date, kept between 1 s and 10 minutes; unreadable: null", () => {
    const now = Date.parse("2026-11-28T10:00:00Z");
    expect(retryAfterMs("30", now)).toBe(30_000);
    expect(retryAfterMs("0", now)).toBe(1000);
    expect(retryAfterMs("86400", now)).toBe(600_000);
    expect(retryAfterMs("Sat, 28 Nov 2026 10:00:45 GMT", now)).toBe(45_000);
    expect(retryAfterMs("Sat, 28 Nov 2026 09:00:00 GMT", now)).toBe(1000);
    expect(retryAfterMs(null, now)).toBeNull();
    expect(retryAfterMs("soon", now)).toBeNull();
  });

  it("the rate cap: slots in the order asked, a tenth of a second's burst, then one per 1/rate", () => {
    let now = 1_000_000;
    const gate = new PollGate(100, () => now);
    const waits = Array.from({ length: 30 }, () => gate.reserve());
    // 100/s: a burst of a tenth of a second's worth at once (and the slot then due), then one every 10 ms.
    expect(waits.slice(0, 11)).toEqual(Array(11).fill(0));
    expect(waits.slice(11, 14)).toEqual([10, 20, 30]);
    expect(waits[29]).toBe(190);
    expect(gate.spare(1000)).toBe(80);
    now += 10_000;
    expect(gate.reserve()).toBe(0);
    expect(gate.spare(1000)).toBe(109);
  });

  it("a 429 holds every slot back for its Retry-After; without one, 5 s doubling up to a minute", () => {
    let now = 0;
    const gate = new PollGate(1000, () => now);
    expect(gate.heldForMs()).toBe(0);
    expect(gate.pause(2000)).toBe(2000);
    expect(gate.heldUntil).toBe(2000);
    expect(gate.heldForMs()).toBe(2000);
    expect(gate.reserve()).toBe(2000);
    expect(gate.spare(1000)).toBe(0);
    now = 2500;
    expect(gate.heldUntil).toBeNull();
    expect(gate.heldForMs()).toBe(0);
    expect(gate.reserve()).toBe(0);
    gate.answered();
    expect([gate.pause(null), gate.pause(null), gate.pause(null), gate.pause(null), gate.pause(null)]).toEqual([
      5000, 10_000, 20_000, 40_000, 60_000,
    ]);
    gate.answered();
    expect(gate.pause(null)).toBe(5000);
    expect(gate.rateLimited).toBe(7);
  });

  it("a 429 for a poll sent before the running hold began is the same breath: no doubling, no longer hold", () => {
    let now = 0;
    const gate = new PollGate(2, () => now);
    // Two polls out 30 ms apart; the first is refused, then the second (sent before the hold began).
    const first = gate.stamp();
    now = 30;
    const second = gate.stamp();
    now = 100;
    expect(gate.pause(null, first)).toBe(5000);
    now = 133;
    expect(gate.pause(null, second)).toBe(4967);
    expect(gate.heldUntil).toBe(5100);
    // Its own Retry-After still counts when longer.
    expect(gate.pause(8000, second)).toBe(8000);
    expect(gate.heldUntil).toBe(8133);
    now = 6000;
    gate.answered();
    // A poll sent after the hold began and refused again: the backoff doubles.
    now = 10_000;
    const third = gate.stamp();
    expect(gate.pause(null, third)).toBe(5000);
    now = 15_100;
    const fourth = gate.stamp();
    expect(gate.pause(null, fourth)).toBe(10_000);
    expect(gate.rateLimited).toBe(5);
  });
});
