import { describe, it, expect } from "@jest/globals";
import {
  listOptionsHash,
  newDeviceId,
  paywayDeeplink,
  paywayRequestTime,
  paywayRqTime,
  statusHash,
  statusPollBody,
  unwrapAnswer,
} from "../../src/upstreams/payway.js";

// The PayWay link protocol's pure parts, pinned to values computed outside this code (sha512sum of the
// concatenations the research gives), so a change of order or encoding fails here and not only against a twin
// that shares the same code.

describe("PayWay link protocol helpers", () => {
  it("list-payment-options hash = sha512hex(request_time + aba_data + additional_fields)", () => {
    expect(listOptionsHash("20261125103000", "abc/def+ghi==", '{"amount":"2.00"}')).toBe(
      "9f121912d920d227ab2a71e5d4abc5c5085ce66510b0824a1f0b32514598f6d0157aeb3f80a38c5035f9370f9cbf982454e7a1947e26ce89d9c159c025886f9e",
    );
  });

  it("check-payment-status hash = sha512hex(client_id + device_id + request_time), a fresh device id per body", () => {
    expect(statusHash("2245513-438575-15883134", "k3j9x0qa7m", "20261125103000")).toBe(
      "dc54a4005b70af76e94088de6c4dc6bd4c3a01686631f89803b64bc5197587dda668628856b74f3e9a017322a08a644d9dfb480982fc6b5a3669bcf39ba11262",
    );
    const a = statusPollBody("2245513-438575-15883134", "20261125103000");
    const b = statusPollBody("2245513-438575-15883134", "20261125103000");
    expect(a.device_id).toMatch(/^[a-z0-9]{10}$/);
    expect(a.device_id).not.toBe(b.device_id);
    expect(a.hash).toBe(statusHash(a.client_id, a.device_id, a.request_time));
    expect(new Set(Array.from({ length: 200 }, newDeviceId)).size).toBe(200);
  });

  it("request_time is YYYYMMDDHHmmss in UTC and rq-time whole Unix seconds, as captured; the deeplink carries the QR URI-encoded", () => {
    // chmabapay's live capture: request_time 20260917070508 for a QR made at 07:05:09Z (not 14:05, Cambodia's time).
    expect(paywayRequestTime(Date.UTC(2026, 8, 17, 7, 5, 8))).toBe("20260917070508");
    expect(paywayRequestTime(Date.UTC(2026, 10, 25, 20, 5, 9))).toBe("20261125200509");
    // Eavheang's capture: rq-time 1777691150 is 2026-05-02T03:05:50Z, a number.
    expect(paywayRqTime(Date.UTC(2026, 4, 2, 3, 5, 50, 999))).toBe(1777691150);
    expect(paywayDeeplink("00020101021229=a b&c")).toBe(
      "abamobilebank://ababank.com?type=payway&qrcode=00020101021229%3Da%20b%26c",
    );
  });

  it("reads answers flat or wrapped in data", () => {
    expect(unwrapAnswer({ qr_string: "x" }, "qr_string")).toEqual({ qr_string: "x" });
    expect(unwrapAnswer({ data: { qr_string: "x" } }, "qr_string")).toEqual({ qr_string: "x" });
    expect(unwrapAnswer({ data: null }, "qr_string")).toBeNull();
  });
});
