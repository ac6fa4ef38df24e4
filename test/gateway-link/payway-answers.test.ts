import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { linkModule } from "../../src/gateway-link/index.js";
import { simulatedQr } from "../../src/simulators/upstream-qr.js";
import { capturedLogger, createTenant, post, startTestApp, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { startPaywayTwin, type RunningTwin } from "../support/payway-twin.js";
import { waitFor } from "../support/wait.js";

// How the PayWay adapter reads answers, and what the merchant is told, end to end in real Chromium against the
// PayWay twin: its page on 127.0.0.1 and its API named `localhost` (two hosts, as link.payway.com.kh and
// pwapp.ababank.com are), the service pointed at that API with PAYWAY_API_ORIGIN.

interface LinkTx {
  transactionId: string;
  status: string;
  data: { qr: string; clientId: string };
  failureReason?: string;
}

interface ErrorBody {
  error: { code: string; message: string; transactionId?: string };
}

interface TwinClientView {
  qr: string;
  polls: number;
  action: string;
  requestTime: string;
  createdAt: string;
  pollCookies: { names: string[]; cfBm: "page" | "api" | null }[];
}

describe("PayWay answers read leniently, and errors that name their cause", () => {
  let twin: RunningTwin;
  let t: TestApp;
  let tenant: Tenant;
  const log = capturedLogger("warn");
  const gen = (amount: number, key = tenant.keys.gatewayLink) =>
    post(`${t.url}/gateway-link/generate-qr`, { amount, currency: 116 }, AUTH.gatewayLink(key));
  const check = async (id: string, key = tenant.keys.gatewayLink) =>
    (await post(`${t.url}/gateway-link/check`, { transactionId: id }, AUTH.gatewayLink(key))).body as LinkTx;
  const client = async (clientId: string) => (await twin.get(`/sim/link/clients/${clientId}`)).body as TwinClientView;
  const fault = async (body: Record<string, unknown>) =>
    expect((await twin.post("/sim/payway/fault", body)).status).toBe(200);
  const pollsAfter = (clientId: string, n: number) =>
    waitFor(async () => {
      const c = await client(clientId);
      return c.polls >= n ? c : null;
    }, 20_000);

  beforeAll(async () => {
    twin = await startPaywayTwin({ makeQr: simulatedQr("twin_shop@abaa", "Twin Shop") });
    t = await startTestApp({ PAYWAY_API_ORIGIN: twin.apiOrigin, LOG_LEVEL: "warn" }, { logger: log.logger });
    tenant = await createTenant(t, { linkUrl: await twin.link({ currency: "KHR" }), linkProtocol: "payway" });
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await twin?.close();
  });

  it("a QR answer with no status, or with status 0, is the QR: 200, the twin's QR, followed as usual", async () => {
    try {
      for (const qrStatus of ["absent", "0"]) {
        await fault({ mode: "qr-status", qrStatus });
        const res = await gen(4100);
        expect(res.status).toBe(200);
        const b = res.body as LinkTx;
        expect(b.status).toBe("PENDING");
        expect(b.data.qr).toBe((await client(b.data.clientId)).qr);
        await pollsAfter(b.data.clientId, 1);
        expect((await check(b.transactionId)).status).toBe("PENDING");
      }
    } finally {
      await fault({ mode: "ok" });
    }
  }, 60_000);

  it("request_time is UTC, and polls carry none of the page's cookies: the page's __cf_bm never reaches the API", async () => {
    const before = Date.now();
    const b = (await gen(4200)).body as LinkTx;
    const c = await pollsAfter(b.data.clientId, 3);
    const rt = c.requestTime;
    const served = Date.UTC(
      +rt.slice(0, 4),
      +rt.slice(4, 6) - 1,
      +rt.slice(6, 8),
      +rt.slice(8, 10),
      +rt.slice(10, 12),
      +rt.slice(12, 14),
    );
    expect(served).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
    expect(served).toBeLessThanOrEqual(Date.parse(c.createdAt));
    // The worker's own polls: only what the browser holds for the API's origin (nothing: a third party's cookie).
    expect(c.pollCookies.length).toBeGreaterThanOrEqual(3);
    for (const p of c.pollCookies) {
      expect(p.cfBm).not.toBe("page");
      expect(p.names).not.toContain("i18n_redirected");
    }
    expect((await twin.post("/sim/link/approve", { clientId: b.data.clientId })).status).toBe(200);
    await waitFor(async () => (await check(b.transactionId)).status === "SUCCESS", 20_000);
  }, 60_000);

  it("an action public code does not show, on the worker's own polls, is pending (said once), then the approval", async () => {
    const b = (await gen(4250)).body as LinkTx;
    await pollsAfter(b.data.clientId, 1);
    expect((await twin.post("/sim/link/report", { clientId: b.data.clientId, action: "rqverify" })).status).toBe(200);
    const polls = (await client(b.data.clientId)).polls;
    await pollsAfter(b.data.clientId, polls + 12);
    expect((await check(b.transactionId)).status).toBe("PENDING");
    expect(t.app.module(linkModule).watch.stats().viaPage).toBe(0);
    const told = log.lines.filter((l) => l.includes("rqverify") && l.includes(b.transactionId));
    expect(told).toHaveLength(1);
    expect((await twin.post("/sim/link/approve", { clientId: b.data.clientId })).status).toBe(200);
    await waitFor(async () => (await check(b.transactionId)).status === "SUCCESS", 20_000);
  }, 60_000);

  it("an action public code does not show, read through a held page, is pending (said once), then the approval", async () => {
    await fault({ mode: "bot-check" });
    try {
      const b = (await gen(4300)).body as LinkTx;
      const watch = t.app.module(linkModule).watch;
      // The first test's two payments are still pending: refused too, they are polled through pages of their own.
      await waitFor(async () => watch.stats().viaPage >= 1, 15_000);
      await waitFor(async () => t.app.module(linkModule).pool.stats().pages >= 1, 15_000);
      expect((await twin.post("/sim/link/report", { clientId: b.data.clientId, action: "awaiting-otp" })).status).toBe(
        200,
      );
      // More than 10 polls with it: an unknown action is pending, never counted as an error of the poll.
      const polls = (await client(b.data.clientId)).polls;
      const seen = await pollsAfter(b.data.clientId, polls + 12);
      expect((await check(b.transactionId)).status).toBe("PENDING");
      // Polled through the held page: the browser's own cookies for the API, never the page's.
      for (const p of seen.pollCookies) expect(p.cfBm).not.toBe("page");
      const told = log.lines.filter((l) => l.includes("awaiting-otp") && l.includes(b.transactionId));
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(/treated as still pending/);
      expect((await twin.post("/sim/link/approve", { clientId: b.data.clientId })).status).toBe(200);
      await waitFor(async () => (await check(b.transactionId)).status === "SUCCESS", 20_000);
    } finally {
      await fault({ mode: "ok" });
    }
  }, 60_000);

  it("a page that refuses (status 11) → 502 naming its code and message; failureReason in check and GraphQL", async () => {
    await fault({ mode: "status", code: "11", message: "Payment link is inactive" });
    let id: string;
    try {
      const res = await gen(4400);
      expect(res.status).toBe(502);
      const { error } = res.body as ErrorBody;
      expect(error.code).toBe("UPSTREAM_UNAVAILABLE");
      expect(error.message).toBe('The payment page refused: PayWay answered status 11 "Payment link is inactive"');
      id = error.transactionId as string;
      expect(id).toMatch(/^txn_/);
    } finally {
      await fault({ mode: "ok" });
    }
    const reason = 'the payment page refused: PayWay answered status 11 "Payment link is inactive"';
    expect(await check(id)).toMatchObject({ status: "FAILED", failureReason: reason });
    const own = await post(
      `${t.url}/graphql`,
      {
        query: `query($id: ID!) { gatewayLinkTransaction(transactionId: $id) { status failureReason }
          transaction(id: $id) { status failureReason } }`,
        variables: { id },
      },
      AUTH.gatewayLink(tenant.keys.gatewayLink),
    );
    expect(own.body).toEqual({
      data: {
        gatewayLinkTransaction: { status: "FAILED", failureReason: reason },
        transaction: { status: "FAILED", failureReason: reason },
      },
    });
    // Only a FAILED payment has one.
    const ok = (await gen(4500)).body as LinkTx;
    expect(await check(ok.transactionId)).not.toHaveProperty("failureReason");
    const asAdmin = await t.admin<{ transaction: { failureReason: string | null } }>(
      `query($id: ID!) { transaction(id: $id) { failureReason } }`,
      { id: ok.transactionId },
    );
    expect(asAdmin.transaction.failureReason).toBeNull();
  }, 60_000);

  it("a page that cannot be reached (a closed port) → 502 naming the network error, and failureReason", async () => {
    const port = await closedPort();
    const closed = await createTenant(t, {
      name: "Closed Shop",
      bakongAccountId: "closed_shop@devb",
      linkUrl: `http://127.0.0.1:${port}/ABAPAYCLOSED01`,
      linkProtocol: "payway",
    });
    const res = await gen(4600, closed.keys.gatewayLink);
    expect(res.status).toBe(502);
    const { error } = res.body as ErrorBody;
    expect(error).toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      message: "The payment page could not be reached: net::ERR_CONNECTION_REFUSED",
    });
    expect(await check(error.transactionId as string, closed.keys.gatewayLink)).toMatchObject({
      status: "FAILED",
      failureReason: "the payment page could not be reached: net::ERR_CONNECTION_REFUSED",
    });
  }, 60_000);
});

/** A loopback port nothing listens on (bound once, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
