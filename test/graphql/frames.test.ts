import { describe, it, expect } from "@jest/globals";
import { exactReplacer, parseExact, spliceExact } from "../../src/exact-json.js";
import { SharedFrames } from "../../src/graphql/frames.js";

// graphql-ws builds each frame as { id, type, payload: { ...result } } and stringifies it with our replacer;
// each socket's send then splices it.
const frame = (id: string, result: object, replacer: (this: unknown, k: string, v: unknown) => unknown) =>
  JSON.stringify({ id, type: "next", payload: { ...result } }, replacer);

describe("subscription frames: a shared result serialised once", () => {
  const meta = () => parseExact(`{"2":"b","10":"a","price":1.50,"big":12345678901234567890}`);
  const result = () => ({
    data: { transactionUpdates: { id: "evt_1", transaction: { status: "PENDING" }, meta: meta() } },
  });

  it("writes the same frames as before, meta exactly as it was read, each with its own subscription id", () => {
    const shared = new WeakSet<object>();
    const frames = new SharedFrames((v) => shared.has(v));
    const r = result();
    shared.add(r.data);
    for (const id of ["a", "b", "c"]) {
      const before = spliceExact(frame(id, r, exactReplacer));
      const after = frames.splice(frame(id, r, frames.replacer));
      expect(after).toBe(before);
      expect(after).toContain(`{"id":"${id}","type":"next","payload":{"data":`);
      expect(after).toContain(`"meta":{"2":"b","10":"a","price":1.50,"big":12345678901234567890}`);
      expect(JSON.parse(after)).toEqual({ id, type: "next", payload: JSON.parse(JSON.stringify(r)) });
    }
  });

  it("serialises a shared result's data once (later frames reuse the text); other results as before", () => {
    const shared = new WeakSet<object>();
    const frames = new SharedFrames((v) => shared.has(v));
    const r = result();
    shared.add(r.data);
    const first = frames.splice(frame("a", r, frames.replacer));
    // Results are never changed once executed; a change here shows whether the text was reused.
    (r.data.transactionUpdates.transaction as { status: string }).status = "CHANGED";
    expect(frames.splice(frame("b", r, frames.replacer))).toBe(first.replace('"id":"a"', '"id":"b"'));
    // Not shared (e.g. a query over the socket, or a result with errors): serialised per frame, as before.
    const own = result();
    const once = frames.splice(frame("c", own, frames.replacer));
    (own.data.transactionUpdates.transaction as { status: string }).status = "SUCCESS";
    expect(frames.splice(frame("c", own, frames.replacer))).toBe(once.replace("PENDING", "SUCCESS"));
    expect(frames.splice(frame("c", own, frames.replacer))).toBe(spliceExact(frame("c", own, exactReplacer)));
  });

  it("keeps a bounded number of texts", () => {
    const shared = new WeakSet<object>();
    const frames = new SharedFrames((v) => shared.has(v), 3);
    const rs = Array.from({ length: 10 }, () => result());
    for (const r of rs) shared.add(r.data);
    for (const r of rs)
      expect(frames.splice(frame("x", r, frames.replacer))).toBe(spliceExact(frame("x", r, exactReplacer)));
    expect((frames as unknown as { texts: Map<number, string> }).texts.size).toBe(3);
    // An evicted one is serialised again when it comes back.
    expect(frames.splice(frame("y", rs[0], frames.replacer))).toBe(spliceExact(frame("y", rs[0], exactReplacer)));
  });
});
