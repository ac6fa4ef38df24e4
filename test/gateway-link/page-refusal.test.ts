import { describe, it, expect } from "@jest/globals";
import { classifyRefusal } from "../../src/gateway-link/page-refusal.js";
import { clientHintHeaders, defaultUserAgent, userAgentOverride } from "../../src/gateway-link/browser-identity.js";

// The two 403s of a payment-link page told apart (pure), and what the pool's pages say they are.

describe("classifyRefusal", () => {
  const invalidData = JSON.stringify({ message: "Invalid Data", status: { code: "403", message: "Invalid Data" } });

  it("the API's JSON refusal is the page's own, with its code and message", () => {
    expect(classifyRefusal({ status: 403, body: invalidData })).toEqual({
      kind: "page",
      status: 403,
      code: "403",
      message: "Invalid Data",
      detail: 'HTTP 403: the API refused the request (code 403 "Invalid Data")',
    });
    expect(classifyRefusal({ status: 403, body: '{"message":"Invalid Token"}' })).toMatchObject({
      kind: "page",
      code: null,
      message: "Invalid Token",
    });
  });

  it("Cloudflare's challenge by its header (whatever the body and status), its markers, or its block page", () => {
    expect(classifyRefusal({ status: 403, headers: { "CF-Mitigated": "challenge" }, body: invalidData })).toMatchObject(
      {
        kind: "challenge",
      },
    );
    expect(classifyRefusal({ status: 503, headers: { "cf-mitigated": "challenge" }, body: "" })).toMatchObject({
      kind: "challenge",
      status: 503,
    });
    for (const body of [
      "<html><head><title>Just a moment...</title></head></html>",
      '<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1"></script>',
      "<script>window._cf_chl_opt={}</script>",
    ])
      expect(classifyRefusal({ status: 403, body })).toMatchObject({ kind: "challenge" });
    expect(classifyRefusal({ status: 403, body: "<title>Attention Required! | Cloudflare</title>" })).toMatchObject({
      kind: "block",
      detail: "HTTP 403: a Cloudflare block page",
    });
    expect(classifyRefusal({ status: 403, headers: { "cf-ray": "8f-SIN" }, body: "<p>Forbidden</p>" })).toMatchObject({
      kind: "block",
      detail: "HTTP 403: a Cloudflare block page, cf-ray 8f-SIN",
    });
  });

  it("any other 403 is the edge's, unrecognised; other statuses are no refusal", () => {
    expect(classifyRefusal({ status: 403, body: "<p>Forbidden</p>" })).toMatchObject({
      kind: "block",
      detail: "HTTP 403: a refusal page that is not the API's (<p>Forbidden</p>)",
    });
    expect(classifyRefusal({ status: 403, body: null })).toMatchObject({ kind: "block" });
    expect(classifyRefusal({ status: 429, body: "Just a moment..." })).toBeNull();
    expect(classifyRefusal({ status: 500, body: invalidData })).toBeNull();
  });
});

describe("the pages' user agent", () => {
  it("by default a Chrome on Linux of the running browser's major version, client hints without HeadlessChrome", () => {
    const o = userAgentOverride(null, "HeadlessChrome/131.0.6778.85");
    expect(o.userAgent).toBe(defaultUserAgent("131"));
    expect(o.userAgent).toBe(
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    );
    expect(o.platform).toBe("Linux x86_64");
    expect(o.userAgentMetadata?.platform).toBe("Linux");
    expect(o.userAgentMetadata?.brands?.map((b) => b.brand)).toEqual(["Chromium", "Not_A Brand"]);
    expect(JSON.stringify(o)).not.toMatch(/headless/i);
  });

  it("LINK_USER_AGENT's own version and platform drive the client hints", () => {
    const ua =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36";
    const o = userAgentOverride(ua, "HeadlessChrome/131.0.6778.85");
    expect(o.userAgent).toBe(ua);
    expect(o).toMatchObject({
      platform: "Win32",
      userAgentMetadata: { platform: "Windows", fullVersion: "129.0.0.0" },
    });
    // The headers the page load is given (its navigation starts before the override: browser-identity.ts).
    expect(clientHintHeaders(o)).toEqual({
      "sec-ch-ua": '"Chromium";v="129", "Not_A Brand";v="24"',
      "sec-ch-ua-mobile": "?0",
      "sec-ch-ua-platform": '"Windows"',
    });
  });
});
