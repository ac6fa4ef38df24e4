import { describe, it, expect } from "@jest/globals";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pollClient, pollOnce, pollRequest, readAnswer } from "../../src/gateway-link/poll-client.js";
import { statusHash } from "../../src/upstreams/payway.js";

// What one check-payment-status answer means for a payment followed without its page (pure: no network), and
// how much of one is read (a real server).

const session = {
  apiOrigin: "https://pwapp.example",
  token: "tok",
  clientId: "2245513-438575-15883134",
  requestTime: "20261125103000",
  cookies: "__cf_bm=abc; i18n_redirected=en",
  origin: "https://link.example",
  referer: "https://link.example/",
  userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
  language: "en",
  expireInSec: "180",
};

describe("check-payment-status, sent and read", () => {
  it("is sent as the page sends it: token header, cookies, Origin, Referer, original request_time, fresh device id", () => {
    const a = pollRequest(session);
    const b = pollRequest(session);
    expect(a.url).toBe("https://pwapp.example/api/pw-app/v1/payment-link/check-payment-status");
    expect(a.headers).toMatchObject({
      token: "tok",
      cookie: "__cf_bm=abc; i18n_redirected=en",
      origin: "https://link.example",
      referer: "https://link.example/",
      "user-agent": session.userAgent,
      language: "en",
    });
    const body = JSON.parse(a.body) as { device_id: string; request_time: string; client_id: string; hash: string };
    expect(body.request_time).toBe(session.requestTime);
    expect(body.hash).toBe(statusHash(session.clientId, body.device_id, session.requestTime));
    expect((JSON.parse(b.body) as { device_id: string }).device_id).not.toBe(body.device_id);
  });

  it("a session stored while pages said HeadlessChrome is polled as the Chrome it is", () => {
    const old = { ...session, userAgent: "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120.0.0.0 Safari/537.36" };
    expect(pollRequest(old).headers["user-agent"]).toBe(
      "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0.0.0 Safari/537.36",
    );
  });

  it("reads the action, the receipt, a decline; 403 is a refusal; outages and definite errors apart", () => {
    const ok = (data: unknown) => JSON.stringify({ status: { code: "00", message: "Success" }, data });
    expect(readAnswer(200, ok({ action: "approved", download_receipt: "https://r.example/x" }))).toMatchObject({
      kind: "status",
      status: { action: "approved", receiptUrl: "https://r.example/x", declined: false, known: true },
    });
    expect(readAnswer(200, ok({ action: "declined", message: { code: "05", message: "Declined" } }))).toMatchObject({
      kind: "status",
      status: { declined: true, message: "Declined" },
    });
    expect(readAnswer(200, JSON.stringify({ action: "scanned" }))).toMatchObject({ status: { action: "scanned" } });
    expect(readAnswer(200, ok({ action: "something-new" }))).toMatchObject({ status: { known: false } });
    expect(readAnswer(403, "<title>Attention Required! | Cloudflare</title>")).toEqual({
      kind: "refused",
      detail: "check-payment-status answered HTTP 403: a Cloudflare block page",
      refusal: expect.objectContaining({ kind: "block" }),
    });
    // The API's own JSON refusal is the page's error, told apart from the edge's (page-refusal.ts).
    const invalidToken = JSON.stringify({
      message: "Invalid Token",
      status: { code: "403", message: "Invalid Token" },
    });
    expect(readAnswer(403, invalidToken)).toMatchObject({
      kind: "refused",
      refusal: { kind: "page", code: "403", message: "Invalid Token" },
    });
    expect(readAnswer(429, "<title>Just a moment...</title>", { "cf-mitigated": "challenge" })).toMatchObject({
      kind: "refused",
      refusal: { kind: "challenge", status: 429 },
    });
    // Outages, waited out: every 5xx (Cloudflare's 520–524 among them), 408, 429 (with its Retry-After).
    for (const status of [500, 502, 503, 504, 520, 521, 522, 523, 524, 599, 408])
      expect(readAnswer(status, "<html>cf-ray</html>")).toMatchObject({ kind: "fault", outage: true });
    expect(readAnswer(429, "slow down", { "retry-after": "30" })).toMatchObject({
      kind: "fault",
      outage: true,
      retryAfter: "30",
    });
    expect(readAnswer(429, "slow down")).toMatchObject({ kind: "fault", outage: true, retryAfter: null });
    expect(readAnswer(503, "busy")).not.toHaveProperty("retryAfter");
    // Definite errors: not outages (they fail nothing either: link-watch.ts).
    expect(readAnswer(400, "{}")).toMatchObject({ kind: "fault", outage: false });
    expect(readAnswer(404, "{}")).toMatchObject({ kind: "fault", outage: false });
    expect(readAnswer(200, "<html>maintenance</html>")).toMatchObject({ kind: "fault", outage: true });
    // Only data.action declines: a refusal whose words say "declined", "rejected" or "cancelled" is a definite
    // error of the poll (it may be about the poll itself), never a decline that fails the payment.
    for (const message of ["Transaction declined", "Request rejected", "Cancelled by system"])
      expect(readAnswer(200, JSON.stringify({ status: { code: "05", message } }))).toEqual({
        kind: "fault",
        detail: `check-payment-status answered status 05 "${message}"`,
        outage: false,
      });
    expect(readAnswer(200, JSON.stringify({ status: { code: "11", message: "Invalid token" } }))).toEqual({
      kind: "fault",
      detail: 'check-payment-status answered status 11 "Invalid token"',
      outage: false,
    });
  });

  it("an answer of 150 MB is refused at 64 KB, unread: a fault (outage), the process's memory barely moves", async () => {
    let written = 0;
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = (): void => {
        while (written < 150 * 1024 * 1024 && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = pollClient(null, 10_000);
    try {
      const before = process.memoryUsage().rss;
      const apiOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const answer = await pollOnce(client, { ...session, apiOrigin }, 10_000);
      expect(answer).toEqual({
        kind: "fault",
        detail: "check-payment-status: an answer larger than 65536 bytes (refused)",
        outage: true,
      });
      expect((process.memoryUsage().rss - before) / 1e6).toBeLessThan(64);
      // The server was stopped long before the end: only what the sockets' buffers held was sent.
      expect(written).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await client.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
