import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { BrowserPool } from "../../src/gateway-link/browser.js";
import {
  LinkDriverError,
  openLinkSession,
  resumeLinkSession,
  type LinkEvent,
  type LinkSession,
} from "../../src/gateway-link/link-driver.js";
import { simulatedLinkProtocol } from "../../src/gateway-link/link-protocol.js";
import { CHROMIUM_PATH, startLinkSim, type RunningLinkSim } from "../support/link-sim.js";
import { waitFor } from "../support/wait.js";

interface ClientView {
  qr: string;
  action: string;
  requestIds: string[];
  polls: number;
  receiptUrl: string | null;
}

let sim: RunningLinkSim;
let pool: BrowserPool;
const watch = { maxConsecutiveFailures: 3, stallMs: 5_000 };

beforeAll(async () => {
  sim = await startLinkSim({ pollIntervalMs: 150 });
  pool = new BrowserPool({ executablePath: CHROMIUM_PATH, maxPages: 8 });
});

afterAll(async () => {
  await pool.close();
  await sim.close();
});

function open(amount = "12.50", currency: 116 | 840 = 116): Promise<LinkSession> {
  return openLinkSession(pool, {
    url: sim.linkUrl("coffee-shop", currency === 116 ? "KHR" : "USD"),
    amount,
    currency,
    protocol: simulatedLinkProtocol,
    timeoutMs: 15_000,
    watch,
  });
}

async function client(clientId: string): Promise<ClientView> {
  const res = await sim.get(`/sim/link/clients/${clientId}`);
  expect(res.status).toBe(200);
  return res.body as ClientView;
}

/** Reads events until `stop` matches one (returned) or the stream ends (throws). */
async function nextMatching(
  iterator: AsyncIterator<LinkEvent>,
  stop: (e: LinkEvent) => boolean,
  seen: LinkEvent[] = [],
): Promise<LinkEvent> {
  for (;;) {
    const next = await iterator.next();
    if (next.done) throw new Error(`stream ended before the expected event; saw ${JSON.stringify(seen)}`);
    seen.push(next.value);
    if (stop(next.value)) return next.value;
  }
}

async function rest(iterator: AsyncIterator<LinkEvent>): Promise<LinkEvent[]> {
  const events: LinkEvent[] = [];
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) events.push(next.value);
  return events;
}

describe("link driver against the simulated payment-link page", () => {
  it("opens the page, enters the amount and reads qr and clientId from the page's network traffic", async () => {
    const session = await open("12.50", 116);
    try {
      expect(session.clientId).toMatch(/^cl_/);
      const view = await client(session.clientId);
      expect(session.qr).toBe(view.qr);
      expect(session.qr).toMatch(/^KHQR-12\.50-116-/);
      const first = await session.events[Symbol.asyncIterator]().next();
      expect(first.value).toEqual({ type: "request_qr" });
    } finally {
      await session.close();
    }
  });

  it("reports scanned once, then approved with the receipt URL, and ends the stream", async () => {
    const session = await open("4.00", 840);
    const events = session.events[Symbol.asyncIterator]();
    const seen: LinkEvent[] = [];
    await nextMatching(events, (e) => e.type === "request_qr", seen);
    expect((await sim.post("/sim/link/scan", { clientId: session.clientId })).status).toBe(200);
    await nextMatching(events, (e) => e.type === "scanned", seen);
    // Let a few identical "scanned" polls go by: they must not be reported again.
    const polled = (await client(session.clientId)).polls;
    await waitFor(async () => (await client(session.clientId)).polls >= polled + 3, 10_000, 50, "3 more polls");
    expect((await sim.post("/sim/link/approve", { clientId: session.clientId })).status).toBe(200);
    const approved = await nextMatching(events, (e) => e.type === "approved", seen);
    // The page states what was paid (checked against what was asked before a payment is SUCCESS).
    expect(approved).toEqual({
      type: "approved",
      receiptUrl: `${sim.baseUrl}/sim/link/receipt/${session.clientId}`,
      paid: { amount: "4.00", currency: "USD" },
    });
    expect(await rest(events)).toEqual([]);
    expect(seen.map((e) => e.type)).toEqual(["request_qr", "scanned", "approved"]);
    await session.close();
    const receipt = await sim.get(`/sim/link/receipt/${session.clientId}`);
    expect(receipt.status).toBe(200);
  });

  it("sends a different request identifier on every poll", async () => {
    const session = await open();
    try {
      const view = await waitFor(
        async () => {
          const v = await client(session.clientId);
          return v.polls >= 4 && v;
        },
        15_000,
        100,
        "4 polls",
      );
      // request_qr + at least 4 polls, all distinct (the simulator also refuses a replayed one).
      expect(view.requestIds.length).toBeGreaterThanOrEqual(5);
      expect(new Set(view.requestIds).size).toBe(view.requestIds.length);
    } finally {
      await session.close();
    }
  });

  it("turns a page whose API keeps failing into a fatal error after a bounded number of failures", async () => {
    const session = await open();
    const events = session.events[Symbol.asyncIterator]();
    await nextMatching(events, (e) => e.type === "request_qr");
    expect((await sim.post("/sim/link/break", { clientId: session.clientId })).status).toBe(200);
    const errors = await rest(events);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ type: "error", fatal: false });
    // A 410 for this client (the simulated page's break) is the page refusing the payment, not an outage of its site.
    expect(errors[1]).toMatchObject({ type: "error", fatal: true, unavailable: false });
    expect((errors[1] as { message: string }).message).toMatch(/failed 3 times in a row.*HTTP 410/);
    await session.close();
    expect(pool.stats().pages).toBe(0);
  });

  it("tells an outage of the page's site (503, garbage) from a refusal of the payment: `unavailable` on the error", async () => {
    const session = await open("3.00", 840);
    const events = session.events[Symbol.asyncIterator]();
    await nextMatching(events, (e) => e.type === "request_qr");
    const url = sim.linkUrl("coffee-shop", "USD");
    try {
      await sim.post("/sim/link/fault", { mode: "down" });
      const errors = await rest(events);
      expect(errors[errors.length - 1]).toMatchObject({ type: "error", fatal: true, unavailable: true });
      const down = await resumeLinkSession(pool, {
        url,
        clientId: session.clientId,
        protocol: simulatedLinkProtocol,
        timeoutMs: 5_000,
        watch,
      }).catch((e: unknown) => e);
      expect(down).toBeInstanceOf(LinkDriverError);
      expect(down).toMatchObject({ unavailable: true, message: expect.stringMatching(/HTTP 503/) });
      await sim.post("/sim/link/fault", { mode: "garbage" });
      const garbage = await resumeLinkSession(pool, {
        url,
        clientId: session.clientId,
        protocol: simulatedLinkProtocol,
        timeoutMs: 3_000,
        watch,
      }).catch((e: unknown) => e);
      expect(garbage).toMatchObject({ kind: "timeout", unavailable: true });
    } finally {
      await sim.post("/sim/link/fault", { mode: "ok" });
    }
    const resume = () =>
      resumeLinkSession(pool, {
        url,
        clientId: session.clientId,
        protocol: simulatedLinkProtocol,
        timeoutMs: 5_000,
        watch,
      }).catch((e: unknown) => e);
    // The origin's 500 and Cloudflare's 52x are outages too, as for the worker's own polls: never towards FAILED.
    for (const status of [500, 522]) {
      await sim.post("/sim/link/break", { clientId: session.clientId, status });
      expect(await resume()).toMatchObject({ unavailable: true, message: expect.stringMatching(`HTTP ${status}`) });
    }
    await sim.post("/sim/link/break", { clientId: session.clientId });
    expect(await resume()).toMatchObject({ unavailable: false, message: expect.stringMatching(/HTTP 410/) });
    await session.close();
  });

  it("resumes an existing payment after the first session was closed, then sees it approved", async () => {
    const first = await open("7.25", 840);
    const { clientId, qr } = first;
    await first.close();
    await sim.post("/sim/link/scan", { clientId });
    const resumed = await resumeLinkSession(pool, {
      url: sim.linkUrl("coffee-shop", "USD"),
      clientId,
      protocol: simulatedLinkProtocol,
      timeoutMs: 15_000,
      watch,
    });
    const events = resumed.events[Symbol.asyncIterator]();
    expect(resumed.clientId).toBe(clientId);
    expect(resumed.qr).toBe(qr);
    expect((await events.next()).value).toEqual({ type: "scanned" });
    await sim.post("/sim/link/approve", { clientId });
    expect(await nextMatching(events, (e) => e.type === "approved")).toMatchObject({
      type: "approved",
      receiptUrl: `${sim.baseUrl}/sim/link/receipt/${clientId}`,
      paid: { currency: "USD" },
    });
    await resumed.close();
  });

  it("reports a page that stops polling as a fatal error", async () => {
    // A protocol that does not recognise the status call sees no polls at all.
    const blind = {
      ...simulatedLinkProtocol,
      classify: (url: URL) => {
        const c = simulatedLinkProtocol.classify(url);
        return c === "status" ? null : c;
      },
    };
    const session = await openLinkSession(pool, {
      url: sim.linkUrl(),
      amount: "1.00",
      currency: 116,
      timeoutMs: 15_000,
      protocol: blind,
      watch: { stallMs: 600 },
    });
    const events = await rest(session.events[Symbol.asyncIterator]());
    expect(events).toEqual([
      { type: "request_qr" },
      { type: "error", fatal: true, unavailable: true, message: "the payment page sent no status poll for 600 ms" },
    ]);
    await session.close();
  });

  describe("typed failures while opening", () => {
    async function openError(run: () => Promise<LinkSession>): Promise<LinkDriverError> {
      const err = await run().then(
        (s) => s.close().then(() => new Error("opened")),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(LinkDriverError);
      return err as LinkDriverError;
    }

    it("times out when no QR arrives within timeoutMs", async () => {
      const err = await openError(() =>
        openLinkSession(pool, {
          url: sim.linkUrl(),
          amount: "1.00",
          currency: 116,
          protocol: simulatedLinkProtocol,
          timeoutMs: 30,
        }),
      );
      expect(err.kind).toBe("timeout");
      expect(pool.stats().pages).toBe(0);
    });

    it("refuses a page whose currency differs from the configured one", async () => {
      const err = await openError(() =>
        openLinkSession(pool, {
          url: sim.linkUrl("coffee-shop", "USD"),
          amount: "1.00",
          currency: 116,
          protocol: simulatedLinkProtocol,
          timeoutMs: 15_000,
        }),
      );
      expect(err.kind).toBe("page_error");
      expect(err.message).toMatch(/currency 840, configured 116/);
    });

    it("reports the page's refusal of the amount", async () => {
      const err = await openError(() =>
        openLinkSession(pool, {
          url: sim.linkUrl(),
          amount: "0",
          currency: 116,
          protocol: simulatedLinkProtocol,
          timeoutMs: 15_000,
        }),
      );
      expect(err.kind).toBe("page_error");
      expect(err.message).toMatch(/HTTP 400: invalid request/);
    });

    it("reports a link URL that does not serve a page", async () => {
      const err = await openError(() =>
        openLinkSession(pool, {
          url: `${sim.baseUrl}/sim/link/nowhere`,
          amount: "1.00",
          currency: 116,
          timeoutMs: 15_000,
          protocol: simulatedLinkProtocol,
        }),
      );
      expect(err.kind).toBe("page_error");
      expect(err.message).toMatch(/HTTP 404/);
    });

    it("refuses to resume when the page has no resume support", async () => {
      const err = await openError(() =>
        resumeLinkSession(pool, {
          url: sim.linkUrl(),
          clientId: "cl_x",
          timeoutMs: 1_000,
          protocol: { ...simulatedLinkProtocol, resumeUrl: () => null },
        }),
      );
      expect(err.kind).toBe("page_error");
    });

    it("reports resuming an unknown client as a page error", async () => {
      const err = await openError(() =>
        resumeLinkSession(pool, {
          url: sim.linkUrl(),
          clientId: "cl_unknown",
          protocol: simulatedLinkProtocol,
          timeoutMs: 15_000,
        }),
      );
      expect(err.kind).toBe("page_error");
      expect(err.message).toMatch(/HTTP 404/);
      expect(pool.stats().pages).toBe(0);
    });
  });
});
