import { describe, it, expect } from "@jest/globals";
import { GraphQLError } from "graphql";
import { EventStream, STREAM_YIELD_EVERY } from "../../src/events/event-stream.js";
import { formatGraphQLError } from "../../src/graphql/errors.js";

describe("a live event stream with a backlog (a lastEventId replay)", () => {
  it("is read in chunks that let the event loop run between them, in order and complete", async () => {
    const stream = new EventStream<number>();
    const n = 1000;
    for (let i = 0; i < n; i++) stream.push(i);
    // Work waiting for the event loop (a health check, another request): how far the reader got when it ran.
    const readAt: number[] = [];
    const got: number[] = [];
    const tick = () => {
      readAt.push(got.length);
      if (got.length < n) setImmediate(tick);
    };
    setImmediate(tick);
    while (got.length < n) {
      const r = await stream.next();
      got.push(r.value as number);
    }
    expect(got).toEqual(Array.from({ length: n }, (_, i) => i));
    // The loop ran while the backlog was read, not only after it.
    expect(readAt[0]).toBeLessThanOrEqual(STREAM_YIELD_EVERY + 1);
    expect(readAt.filter((x) => x < n).length).toBeGreaterThanOrEqual(Math.floor(n / (STREAM_YIELD_EVERY + 1)) - 1);
    // Items pushed while it waits go on in order; return() ends it.
    stream.push(n);
    expect((await stream.next()).value).toBe(n);
    await stream.return();
    expect((await stream.next()).done).toBe(true);
  });

  it("ends with its error after a yield too (a subscriber failed while its backlog was read)", async () => {
    const stream = new EventStream<number>();
    for (let i = 0; i < STREAM_YIELD_EVERY + 1; i++) stream.push(i);
    for (let i = 0; i < STREAM_YIELD_EVERY; i++) await stream.next();
    const pending = stream.next(); // the one that yields
    stream.fail(new Error("too slow"));
    await expect(pending).rejects.toThrow("too slow");
  });

  it("a subscriber that falls `limit` events behind ends with RATE_LIMITED, as the client reads it (not INTERNAL)", async () => {
    const stream = new EventStream<number>(3);
    for (let i = 0; i < 4; i++) stream.push(i);
    const err = await stream.next().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    // What graphql-js hands the formatter when the overflow happens while the subscription opens.
    const wrapped = new GraphQLError((err as Error).message, { originalError: err as Error });
    const formatted = formatGraphQLError(wrapped.toJSON(), wrapped, false);
    expect(formatted.extensions?.code).toBe("RATE_LIMITED");
    expect(formatted.message).toMatch(/reconnect with lastEventId/);
  });
});
