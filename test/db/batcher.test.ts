import { describe, it, expect } from "@jest/globals";
import { Batcher, refusedByDatabase } from "../../src/db/batcher.js";

/** A fake write whose completion the test controls, recording the batches it was given. */
function gatedWrite(fail?: (items: number[]) => unknown) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const write = async (items: number[]) => {
    batches.push(items);
    await new Promise<void>((r) => gates.push(r));
    const err = fail?.(items);
    if (err) throw err;
    return items.map((i) => i * 10);
  };
  const openAll = async () => {
    while (gates.length > 0) {
      gates.shift()!();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { batches, write, openAll };
}

const refused = Object.assign(new Error("duplicate key"), { code: "23505" });

describe("Batcher: concurrent writes share statements", () => {
  it("sends a lone item at once, and groups the items that arrive while every lane is busy", async () => {
    const w = gatedWrite();
    const b = new Batcher(w.write, { lanes: 1, maxBatch: 3, refused: refusedByDatabase });
    const first = b.add(1);
    expect(w.batches).toEqual([[1]]); // no waiting for company
    const rest = [2, 3, 4, 5, 6].map((i) => b.add(i));
    await w.openAll();
    await w.openAll();
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40, 50, 60]);
    expect(w.batches).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it("keeps `lanes` statements in flight", async () => {
    const w = gatedWrite();
    const b = new Batcher(w.write, { lanes: 2, maxBatch: 10, refused: refusedByDatabase });
    const all = [1, 2, 3, 4].map((i) => b.add(i));
    expect(w.batches).toEqual([[1], [2]]);
    await w.openAll();
    await w.openAll();
    await Promise.all(all);
    expect(w.batches).toEqual([[1], [2], [3, 4]]);
  });

  it("a batch the database refused is retried item by item, so only the bad item fails", async () => {
    const w = gatedWrite((items) => (items.includes(3) ? refused : undefined));
    const b = new Batcher(w.write, { lanes: 1, maxBatch: 10, refused: refusedByDatabase });
    const first = b.add(1);
    const rest = [2, 3, 4].map((i) =>
      b.add(i).then(
        (v) => ({ ok: v }),
        (e: Error) => ({ err: e.message }),
      ),
    );
    for (let i = 0; i < 5; i++) await w.openAll();
    await first;
    expect(await Promise.all(rest)).toEqual([{ ok: 20 }, { err: "duplicate key" }, { ok: 40 }]);
    expect(w.batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });

  it("a failure with an unknown outcome (connection lost) fails the whole batch without retrying", async () => {
    const lost = Object.assign(new Error("Connection terminated unexpectedly"), {});
    const w = gatedWrite((items) => (items.length > 1 ? lost : undefined));
    const b = new Batcher(w.write, { lanes: 1, maxBatch: 10, refused: refusedByDatabase });
    const first = b.add(1);
    const rest = [2, 3].map((i) => b.add(i).catch((e: Error) => e.message));
    await w.openAll();
    await w.openAll();
    await first;
    expect(await Promise.all(rest)).toEqual([
      "Connection terminated unexpectedly",
      "Connection terminated unexpectedly",
    ]);
    expect(w.batches).toEqual([[1], [2, 3]]);
  });

  it("tells refused statements from lost connections by SQLSTATE", () => {
    expect(refusedByDatabase(refused)).toBe(true);
    expect(refusedByDatabase(Object.assign(new Error(), { code: "22P05" }))).toBe(true);
    expect(refusedByDatabase(Object.assign(new Error(), { code: "57P01" }))).toBe(false); // admin shutdown
    expect(refusedByDatabase(Object.assign(new Error(), { code: "08006" }))).toBe(false);
    expect(refusedByDatabase(Object.assign(new Error(), { code: "ECONNRESET" }))).toBe(false);
    expect(refusedByDatabase(new Error("timeout"))).toBe(false);
  });
});
