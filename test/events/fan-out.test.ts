import { describe, it, expect } from "@jest/globals";
import { EventBus, type StoredEvent } from "../../src/events/event-bus.js";
import { FAN_OUT_CHUNK, FanOut } from "../../src/events/fan-out.js";

function event(seq: number, transactionId: string, apiKeyRef = "key_a"): StoredEvent {
  return {
    seq: String(seq),
    id: `evt_${seq}`,
    transactionId,
    apiKeyRef,
    area: "qr",
    type: "payment.created",
    status: "PENDING",
    payload: {},
    createdAt: new Date(),
  };
}

describe("the live fan-out", () => {
  it("hands an event only to the subscribers it concerns (its transaction, its key, the operator)", () => {
    const bus = new EventBus();
    const fan = new FanOut(bus);
    const got: string[] = [];
    fan.subscribe({ transactionId: "txn_a" }, (e) => got.push(`tx:${e.id}`));
    fan.subscribe({ apiKeyRef: "key_a" }, (e) => got.push(`key:${e.id}`));
    fan.subscribe({ apiKeyRef: "key_b" }, (e) => got.push(`other:${e.id}`));
    fan.subscribe({ all: true }, (e) => got.push(`all:${e.id}`));
    bus.publish(event(1, "txn_a"));
    bus.publish(event(2, "txn_b"));
    expect(got.sort()).toEqual(["all:evt_1", "all:evt_2", "key:evt_1", "key:evt_2", "tx:evt_1"]);
  });

  it("yields to the event loop between chunks of a large delivery, and keeps every subscriber's order", async () => {
    const bus = new EventBus();
    const fan = new FanOut(bus);
    const n = FAN_OUT_CHUNK * 3 + 7;
    const seen: string[][] = Array.from({ length: n }, () => []);
    for (let i = 0; i < n; i++) fan.subscribe({ apiKeyRef: "key_a" }, (e) => seen[i].push(e.id));
    bus.publish(event(1, "txn_a"));
    bus.publish(event(2, "txn_b"));
    // Synchronously, only the first chunk got the first event; nobody got the second yet.
    expect(seen.filter((s) => s.length > 0)).toHaveLength(FAN_OUT_CHUNK);
    let ticks = 0;
    while (seen.some((s) => s.length < 2) && ticks < 100) {
      await new Promise((r) => setImmediate(r));
      ticks++;
    }
    expect(ticks).toBeGreaterThanOrEqual(3);
    expect(seen.every((s) => s.join() === "evt_1,evt_2")).toBe(true);
  });

  it("a subscriber that leaves is no longer called", () => {
    const bus = new EventBus();
    const fan = new FanOut(bus);
    const got: string[] = [];
    const leave = fan.subscribe({ transactionId: "txn_a" }, (e) => got.push(e.id));
    bus.publish(event(1, "txn_a"));
    leave();
    bus.publish(event(2, "txn_a"));
    expect(got).toEqual(["evt_1"]);
  });
});
