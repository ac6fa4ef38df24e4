import { describe, it, expect } from "@jest/globals";
import { paywayLinkProtocol } from "../../src/gateway-link/payway-protocol.js";
import { isRefusal } from "../../src/gateway-link/link-protocol.js";

// The payway adapter's reading of answers, as public code reads them (the Chromium tests in payway-answers.test.ts
// go through the twin; these pin every shape the sources show, flat or wrapped, without a browser).

const protocol = paywayLinkProtocol("https://pwapp.example");
const request = {
  postData: JSON.stringify({ request_time: "20260917070508", additional_fields: '{"amount":"2.00"}' }),
  headers: {},
};
const qr = { qr_string: "not-a-khqr", token: "t0k3n", client_id: "2364634-518710-27272373", expire_in_sec: "180" };

describe("payway adapter: list-payment-options answers", () => {
  it("the QR with qr_string, token and client_id is a success whatever its status (absent, 0, empty, 00)", () => {
    const statuses = [undefined, { code: "0" }, { code: "" }, { code: 0 }, { code: "00", message: "Success!" }];
    for (const status of statuses)
      for (const body of [{ ...qr, status }, { data: { ...qr }, status }, { data: { ...qr, status } }]) {
        const read = protocol.parseSession(body, request);
        expect(read).toMatchObject({ qr: "not-a-khqr", clientId: qr.client_id, amount: "2.00" });
        expect(read).toMatchObject({ poll: { token: "t0k3n", requestTime: "20260917070508" } });
      }
  });

  it("without the QR, a code other than 00 is the page's refusal naming code and message; else unreadable", () => {
    const refused = protocol.parseSession({ status: { code: "11", message: "Payment link is inactive" } }, request);
    expect(refused).toEqual({ refusal: 'PayWay answered status 11 "Payment link is inactive"' });
    expect(protocol.parseSession({ data: { status: { code: "0" } } }, request)).toEqual({
      refusal: "PayWay answered status 0",
    });
    // A QR missing its token cannot be followed: refused with its code, or unreadable without one.
    const noToken = protocol.parseSession({ qr_string: "x", client_id: "1", status: { code: "05" } }, request);
    expect(noToken !== null && isRefusal(noToken)).toBe(true);
    expect(protocol.parseSession({ qr_string: "x", client_id: "1" }, request)).toBeNull();
    expect(protocol.parseSession({ status: { code: "00" } }, request)).toBeNull();
    expect(protocol.parseSession({ ...qr }, { postData: null, headers: {} })).toBeNull();
  });
});

describe("payway adapter: status answers read by a page", () => {
  it("an action public code does not show is pending (named), not unreadable; the known ones as before", () => {
    const status = (action: string) => protocol.parseStatus({ status: { code: "00" }, data: { action, cache: 1 } });
    expect(status("awaiting-otp")).toEqual({ pending: "awaiting-otp" });
    expect(status("request_qr")).toEqual({ action: "request_qr" });
    expect(status("rqpay")).toEqual({ action: "request_qr" });
    expect(status("processing-payment")).toEqual({ action: "scanned" });
    expect(status("approved")).toEqual({ action: "approved" });
    expect(protocol.parseStatus({ status: { code: "00" } })).toBeNull();
  });
});
