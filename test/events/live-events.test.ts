import { describe, it, expect } from "@jest/globals";
import { EventBus, type StoredEvent } from "../../src/events/event-bus.js";
import { LiveEvents } from "../../src/events/live-events.js";
import { ReplayBudget } from "../../src/events/replay-budget.js";
import type { TransactionStore } from "../../src/transactions/transition.js";
import type { TransactionQuery } from "../../src/transactions/transaction-query.js";
import type { KeyPrincipal } from "../../src/auth/principal.js";

const key: KeyPrincipal = {
  type: "key",
  keyId: "key_a",
  merchantRef: "m",
  kind: "qr",
  targetRef: null,
};

function event(seq: number, transactionId: string): StoredEvent {
  return {
    seq: String(seq),
    id: `evt_${seq}`,
    transactionId,
    apiKeyRef: "key_a",
    area: "qr",
    type: "payment.created",
    status: "PENDING",
    payload: {},
    createdAt: new Date(),
  };
}

describe("live events for one subscriber", () => {
  // Found by test/faults/scale-out: with two api and two worker processes, transactions commit in another
  // order than their sequence numbers were drawn, so the bus publishes seq 41 after seq 42. A high-water
  // mark on seq dropped those events for every subscriber.
  it("delivers events published out of sequence order (concurrent writers commit out of seq order)", async () => {
    const bus = new EventBus();
    const live = new LiveEvents({} as TransactionStore, bus, {} as TransactionQuery);
    const stream = await live.open(key, {});
    bus.publish(event(42, "txn_b"));
    bus.publish(event(41, "txn_a"));
    bus.publish(event(43, "txn_c"));
    const got = [(await stream.next()).value, (await stream.next()).value, (await stream.next()).value].map(
      (e) => (e as StoredEvent).id,
    );
    expect(got).toEqual(["evt_42", "evt_41", "evt_43"]);
    await stream.return();
  });
});

describe("a subscription refused while it opens", () => {
  it("leaves no listener behind (an unknown lastEventId, a replay over the cap, an exhausted replay budget)", async () => {
    const bus = new EventBus();
    const events = [event(1, "txn_a"), event(2, "txn_a"), event(3, "txn_a")];
    const store = {
      eventById: async (id: string) => events.find((e) => e.id === id) ?? null,
      eventsSince: async (f: { afterSeq: string }, limit: number) =>
        events.filter((e) => Number(e.seq) > Number(f.afterSeq)).slice(0, limit),
    } as unknown as TransactionStore;
    // WS_MAX_REPLAY 1, no budget.
    const capped = new LiveEvents(store, bus, {} as TransactionQuery, 1);
    for (let i = 0; i < 20; i++)
      await expect(capped.open(key, { lastEventId: "evt_404" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(capped.open(key, { lastEventId: "evt_1" })).rejects.toMatchObject({ code: "BAD_USER_INPUT" });
    expect(capped.listening).toBe(0);
    // WS_MAX_REPLAY 1 and a budget of 2 replayed events a minute (the bucket holds 1); unknown ids cost nothing.
    const live = new LiveEvents(store, bus, {} as TransactionQuery, 1, new ReplayBudget(2, 1));
    for (let i = 0; i < 5; i++)
      await expect(live.open(key, { lastEventId: "evt_404" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    // One replay of one event fits the budget; the next is refused, and leaves nothing either.
    const ok = await live.open(key, { lastEventId: "evt_2" });
    // The resume margin sends the recent event before lastEventId again (at least once), then what follows it.
    expect([(await ok.next()).value, (await ok.next()).value].map((e) => (e as StoredEvent).id)).toEqual([
      "evt_1",
      "evt_3",
    ]);
    await expect(live.open(key, { lastEventId: "evt_2" })).rejects.toMatchObject({
      code: "RATE_LIMITED",
      message: expect.stringMatching(/WS_REPLAY_EVENTS_PER_MINUTE\); retry in \d+ s/),
    });
    expect(live.listening).toBe(1);
    await ok.return();
    expect(live.listening).toBe(0);
  });
});
