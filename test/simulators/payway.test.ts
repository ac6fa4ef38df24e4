import { createHash } from "node:crypto";
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { PAYWAY_PATHS } from "../../src/upstreams/payway.js";
import { startPaywayTwin, type RunningTwin } from "../support/payway-twin.js";
import { statusOf } from "../support/http.js";
import { decodeKhqr } from "../../src/khqr/index.js";
import { qrPayee } from "../../src/gateway-link/payee.js";
import { payableTo } from "../../src/simulators/payway/twin-hostile.js";
import { simulatedQr } from "../../src/simulators/upstream-qr.js";

// The twin's page and API spoken to over plain HTTP, the way a scraper without a browser would: what it serves
// and what it refuses. (The page's own script is driven in Chromium by test/gateway-link/payway-*.test.ts.)

const sha512 = (s: string) => createHash("sha512").update(s).digest("hex");

interface Visit {
  html: string;
  cookies: string;
  abaRaw: string;
  abaData: string;
  requestTime: string;
  origin: string;
  referer: string;
}

let twin: RunningTwin;
let linkUrl: string;

beforeAll(async () => {
  twin = await startPaywayTwin();
  linkUrl = await twin.link({ currency: "USD", minAmount: "0.50", maxAmount: "100" });
});
afterAll(async () => twin?.close());

async function visit(url = linkUrl): Promise<Visit> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const html = await res.text();
  const cookies = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const abaRaw = /"aba_data":"([^"]+)"/.exec(html)?.[1] ?? "";
  const requestTime = /"request_time":"(\d{14})"/.exec(html)?.[1] ?? "";
  const u = new URL(url);
  return {
    html,
    cookies,
    abaRaw,
    abaData: JSON.parse(`"${abaRaw}"`) as string,
    requestTime,
    origin: u.origin,
    referer: `${u.origin}/`,
  };
}

async function api(path: string, v: Visit, body: unknown, extra: Record<string, string> = {}) {
  const res = await fetch(twin.apiOrigin + path, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      language: "en",
      origin: v.origin,
      referer: v.referer,
      cookie: v.cookies,
      ...extra,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, text, json };
}

function listBody(v: Visit, amount: string, abaData = v.abaData) {
  const additional = JSON.stringify({ amount });
  return {
    additional_fields: additional,
    request_time: v.requestTime,
    aba_data: abaData,
    hash: sha512(v.requestTime + abaData + additional),
  };
}

async function newClient(amount = "2.00") {
  const v = await visit();
  const r = await api(PAYWAY_PATHS.listPaymentOptions, v, listBody(v, amount));
  expect(r.status).toBe(200);
  return { v, answer: r.json as Record<string, unknown> & { token: string; client_id: string } };
}

function poll(v: Visit, clientId: string, token: string, device = "abcde12345", requestTime = v.requestTime) {
  return api(
    PAYWAY_PATHS.checkPaymentStatus,
    v,
    {
      device_id: device,
      request_time: requestTime,
      client_id: clientId,
      hash: sha512(clientId + device + requestTime),
    },
    { token },
  );
}

describe("the PayWay twin over plain HTTP", () => {
  it("serves a Nuxt page: state with '/' escaped, request_time, currency, amount rules, and two cookies", async () => {
    const v = await visit();
    expect(v.html).toContain("window.__NUXT__=");
    expect(v.abaRaw).toContain("\\u002F");
    expect(v.abaData).toContain("/");
    expect(v.requestTime).toMatch(/^20\d{12}$/);
    expect(v.html).toMatch(/"order_details":\{[^}]*"currency":"USD"/);
    expect(v.html).toContain('"min_value":"0.50","max_value":"100"');
    expect(v.cookies).toMatch(/__cf_bm=[^;]+; i18n_redirected=en/);
    expect(v.html).toMatch(/<button[^>]*>Continue<\/button>/);
  });

  it("list-payment-options issues the QR with token, client id and expiry; status 00", async () => {
    const { answer } = await newClient("2.00");
    expect(answer).toMatchObject({ step: "abapay_khqr_request_qr", expire_in_sec: "180", status: { code: "00" } });
    expect(answer.client_id).toMatch(/^\d{7}-\d{6}-\d{8}$/);
    expect(answer.token.length).toBeGreaterThan(1000);
    expect(answer.qr_string).toMatch(/^KHQR-2\.00-840-/);
  });

  it("refuses aba_data as it stands in the HTML (escaped) with 403 Invalid Data, and a wrong hash too", async () => {
    const v = await visit();
    const escaped = await api(PAYWAY_PATHS.listPaymentOptions, v, listBody(v, "2.00", v.abaRaw));
    expect(escaped.status).toBe(403);
    expect(escaped.json).toMatchObject({ status: { message: "Invalid Data" } });
    const wrong = { ...listBody(v, "2.00"), hash: sha512("something else") };
    expect((await api(PAYWAY_PATHS.listPaymentOptions, v, wrong)).status).toBe(403);
  });

  it("asks for no cookie, Origin or Referer (public clients send none) and sets the API's own __cf_bm", async () => {
    const v = await visit();
    const bare = { ...v, origin: "", referer: "", cookies: "" };
    const res = await fetch(twin.apiOrigin + PAYWAY_PATHS.listPaymentOptions, {
      method: "POST",
      headers: { "content-type": "application/json", language: "en" },
      body: JSON.stringify(listBody(v, "2.00")),
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { client_id: string; token: string };
    // The API's own bot-management cookie, as Cloudflare sets one per host: for a third-party caller (the page).
    const own = res.headers.getSetCookie().find((c) => c.startsWith("__cf_bm=")) ?? "";
    expect(own).toMatch(/; HttpOnly; Secure; SameSite=None$/);
    expect(twin.twin.store.cookieIssuer(/^__cf_bm=([^;]+)/.exec(own)?.[1])).toBe("api");
    const polled = await fetch(twin.apiOrigin + PAYWAY_PATHS.checkPaymentStatus, {
      method: "POST",
      headers: { "content-type": "application/json", token: answer.token },
      body: JSON.stringify({
        device_id: "nocookie01",
        request_time: v.requestTime,
        client_id: answer.client_id,
        hash: sha512(answer.client_id + "nocookie01" + v.requestTime),
      }),
    });
    expect(polled.status).toBe(200);
    // Each poll's cookies are recorded, with whose __cf_bm it carried.
    await poll(v, answer.client_id, answer.token, "withcookie");
    await poll(bare, answer.client_id, answer.token, "bare123456");
    const seen = (await twin.get(`/sim/link/clients/${answer.client_id}`)).body as { pollCookies: unknown[] };
    expect(seen.pollCookies).toEqual([
      { names: [], cfBm: null },
      { names: ["__cf_bm", "i18n_redirected"], cfBm: "page" },
      { names: [], cfBm: null },
    ]);
  });

  it("request_time is UTC, as captured: the time the page was served", async () => {
    const before = Date.now();
    const v = await visit();
    const served = Date.UTC(
      Number(v.requestTime.slice(0, 4)),
      Number(v.requestTime.slice(4, 6)) - 1,
      Number(v.requestTime.slice(6, 8)),
      Number(v.requestTime.slice(8, 10)),
      Number(v.requestTime.slice(10, 12)),
      Number(v.requestTime.slice(12, 14)),
    );
    // Read as UTC it is within a second of now; read as Cambodia's time (UTC+7) it would be 7 hours off.
    expect(served).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
    expect(served).toBeLessThanOrEqual(Date.now());
  });

  it("amounts outside the link's rules answer a status other than 00", async () => {
    const v = await visit();
    const r = await api(PAYWAY_PATHS.listPaymentOptions, v, listBody(v, "0.10"));
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: { code: "02" } });
  });

  it("polls: token header, original request_time and hash required; request_qr → scanned → processing → approved + receipt", async () => {
    const { v, answer } = await newClient("3.00");
    const id = answer.client_id;
    expect((await poll(v, id, "not-the-token")).status).toBe(403);
    expect((await poll(v, id, answer.token, "abcde12345", "20990101000000")).status).toBe(403);
    const first = await poll(v, id, answer.token, "aaaaa11111");
    expect(first.json).toMatchObject({ status: { code: "00" }, data: { action: "request_qr" } });
    // rq-time as captured: whole Unix seconds, a number; cache a number too.
    const data = (first.json as { data: Record<string, unknown> }).data;
    expect(Number.isInteger(data["rq-time"])).toBe(true);
    expect(Math.abs((data["rq-time"] as number) - Date.now() / 1000)).toBeLessThan(5);
    expect(data.cache).toBe(1);
    expect((await twin.post("/sim/link/scan", { clientId: id })).status).toBe(200);
    expect((await poll(v, id, answer.token, "bbbbb22222")).json).toMatchObject({ data: { action: "scanned" } });
    expect((await twin.post("/sim/link/approve", { clientId: id })).status).toBe(200);
    expect((await poll(v, id, answer.token, "ccccc33333")).json).toMatchObject({
      data: { action: "processing-payment" },
    });
    const approved = (await poll(v, id, answer.token, "ddddd44444")).json as { data: { download_receipt: string } };
    expect(approved).toMatchObject({ data: { action: "approved" } });
    expect(approved.data.download_receipt).toMatch(
      new RegExp(`^${twin.apiOrigin}/api/payment-gateway/v1/payments/download-receipt\\?file=`),
    );
    expect(await statusOf(approved.data.download_receipt)).toBe(200);
    const seen = (await twin.get(`/sim/link/clients/${id}`)).body as { deviceIds: string[]; polls: number };
    expect(seen.deviceIds).toEqual(["aaaaa11111", "bbbbb22222", "ccccc33333", "ddddd44444"]);
  });

  it("decline, break, and controls for unknown clients", async () => {
    const a = await newClient();
    expect((await twin.post("/sim/link/decline", { clientId: a.answer.client_id })).status).toBe(200);
    expect((await poll(a.v, a.answer.client_id, a.answer.token)).json).toMatchObject({
      data: { action: "declined", message: { code: "05" } },
    });
    expect((await twin.post("/sim/link/approve", { clientId: a.answer.client_id })).status).toBe(409);
    const b = await newClient();
    await twin.post("/sim/link/break", { clientId: b.answer.client_id });
    expect((await poll(b.v, b.answer.client_id, b.answer.token)).status).toBe(500);
    expect((await twin.post("/sim/link/scan", { clientId: "0000000-000000-00000000" })).status).toBe(404);
    expect((await twin.post("/sim/link/scan", {})).status).toBe(400);
  });

  it("fault modes: forbidden for one address, status code, bot-check on polls, slow", async () => {
    try {
      await twin.post("/sim/payway/fault", { mode: "forbidden", address: "127.0.0.1" });
      const refused = await fetch(linkUrl);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain("Cloudflare");
      await twin.post("/sim/payway/fault", { mode: "forbidden", address: "10.9.8.7" });
      expect(await statusOf(linkUrl)).toBe(200);

      await twin.post("/sim/payway/fault", { mode: "status", code: "12", message: "Merchant suspended" });
      const v = await visit();
      const r = await api(PAYWAY_PATHS.listPaymentOptions, v, listBody(v, "2.00"));
      expect(r.json).toEqual({ status: { code: "12", message: "Merchant suspended", tran_id: expect.any(String) } });

      await twin.post("/sim/payway/fault", { mode: "ok" });
      const c = await newClient();
      await twin.post("/sim/payway/fault", { mode: "bot-check" });
      expect((await poll(c.v, c.answer.client_id, c.answer.token)).status).toBe(403);
      const asBrowser = await api(
        PAYWAY_PATHS.checkPaymentStatus,
        c.v,
        {
          device_id: "qwert09876",
          request_time: c.v.requestTime,
          client_id: c.answer.client_id,
          hash: sha512(c.answer.client_id + "qwert09876" + c.v.requestTime),
        },
        { token: c.answer.token, "sec-fetch-site": "same-site" },
      );
      expect(asBrowser.status).toBe(200);

      await twin.post("/sim/payway/fault", { mode: "slow", slowMs: 400 });
      const started = Date.now();
      await poll(c.v, c.answer.client_id, c.answer.token, "slowslow12", c.v.requestTime);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect((await twin.post("/sim/payway/fault", { mode: "status", code: "00" })).status).toBe(400);
    } finally {
      await twin.post("/sim/payway/fault", { mode: "ok" });
    }
  });

  it("qr-status: the QR answered with no status, or with code 0; report: polls answer a word public code does not show", async () => {
    try {
      await twin.post("/sim/payway/fault", { mode: "qr-status" });
      const absent = await newClient("2.00");
      expect(absent.answer).toMatchObject({ step: "abapay_khqr_request_qr", expire_in_sec: "180" });
      expect(absent.answer.qr_string).toMatch(/^KHQR-2\.00-840-/);
      expect("status" in absent.answer).toBe(false);
      await twin.post("/sim/payway/fault", { mode: "qr-status", qrStatus: "0" });
      const zero = await newClient("3.00");
      expect(zero.answer).toMatchObject({ status: { code: "0" }, client_id: expect.any(String) });
      expect((await twin.post("/sim/payway/fault", { mode: "qr-status", qrStatus: "00" })).status).toBe(400);

      const id = zero.answer.client_id;
      expect((await twin.post("/sim/link/report", { clientId: id, action: "Nope!" })).status).toBe(400);
      expect((await twin.post("/sim/link/report", { clientId: id, action: "awaiting-otp" })).status).toBe(200);
      expect((await poll(zero.v, id, zero.answer.token, "report0001")).json).toMatchObject({
        data: { action: "awaiting-otp" },
      });
      expect((await twin.post("/sim/link/approve", { clientId: id })).status).toBe(200);
      expect((await poll(zero.v, id, zero.answer.token, "report0002")).json).toMatchObject({
        data: { action: "processing-payment" },
      });
      expect((await twin.post("/sim/link/report", { clientId: id, action: "late" })).status).toBe(409);
    } finally {
      await twin.post("/sim/payway/fault", { mode: "ok" });
    }
  });

  it("hostile-test modes: a page that forges, an oversized answer, a receipt elsewhere, WebRTC, another payee", async () => {
    try {
      await twin.post("/sim/payway/fault", { mode: "hostile" });
      const hostile = await visit();
      expect(hostile.html).toContain("window.fetch = function");
      expect(hostile.html).toContain("JSON.parse = function");
      // The API refuses polls as bot-check does, so a worker has to poll through a page.
      const c = await newClient();
      expect((await poll(c.v, c.answer.client_id, c.answer.token)).status).toBe(403);

      await twin.post("/sim/payway/fault", { mode: "webrtc", udpPort: 40123 });
      expect((await visit()).html).toContain("stun:127.0.0.1:40123");

      await twin.post("/sim/payway/fault", { mode: "oversize", call: "list-payment-options", bytes: 200_000 });
      const v = await visit();
      const big = await fetch(twin.apiOrigin + PAYWAY_PATHS.listPaymentOptions, {
        method: "POST",
        headers: { "content-type": "application/json", origin: v.origin, referer: v.referer, cookie: v.cookies },
        body: JSON.stringify(listBody(v, "2.00")),
      });
      expect(big.headers.get("content-length")).toBeNull();
      const text = await big.text();
      expect(text.length).toBe(200_000);
      expect(text.startsWith('{"status":{"code":"00"')).toBe(true);

      await twin.post("/sim/payway/fault", { mode: "ok" });
      const d = await newClient();
      await twin.post("/sim/link/approve", { clientId: d.answer.client_id });
      await twin.post("/sim/payway/fault", { mode: "foreign-receipt", receiptOrigin: "https://cdn.example.com" });
      await poll(d.v, d.answer.client_id, d.answer.token, "first12345");
      const approved = (await poll(d.v, d.answer.client_id, d.answer.token, "second1234")).json as {
        data: { action: string; download_receipt: string };
      };
      expect(approved.data.action).toBe("approved");
      expect(approved.data.download_receipt).toMatch(/^https:\/\/cdn\.example\.com\/api\/payment-gateway\//);

      for (const bad of [{ receiptOrigin: "https://x.example/path" }, { call: "nope" }, { udpPort: 0 }, { bytes: -1 }])
        expect((await twin.post("/sim/payway/fault", { mode: "oversize", ...bad })).status).toBe(400);
    } finally {
      await twin.post("/sim/payway/fault", { mode: "ok" });
    }
    // payee: the QR the twin would issue, payable to another account; all else the same.
    const qr = simulatedQr("twin_shop@abaa", "Twin Shop")("12.50", 840);
    const swapped = payableTo(qr, "attacker@aclb");
    expect(qrPayee(swapped)).toBe("attacker@aclb");
    expect(decodeKhqr(swapped).data).toMatchObject({ transactionAmount: "12.50", transactionCurrency: "840" });
  });

  it("an unknown link is a 404 page", async () => {
    expect(await statusOf(`${twin.pageOrigin}/ABAPAYNOPE`)).toBe(404);
  });
});
