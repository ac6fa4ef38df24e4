import { describe, it, expect } from "@jest/globals";
import { EventBus, type StoredEvent } from "../../src/events/event-bus.js";
import { LiveEvents } from "../../src/events/live-events.js";
import type { TransactionStore } from "../../src/transactions/transition.js";
import type { TransactionQuery } from "../../src/transactions/transaction-query.js";
import type { KeyPrincipal } from "../../src/auth/principal.js";

const key: KeyPrincipal = {
  type: "key",
  keyId: "key_a",
  merchantRef: "m",
  kind: "qr",
  gatewayConfigRef: null,
  linkConfigRef: null,
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
