import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, type TestApp } from "../support/app.js";
import { statusOf } from "../support/http.js";

describe("dashboard assets and runtime config", () => {
  let t: TestApp;
  beforeAll(async () => {
    // A production-like upstream setup: no simulators, so no demo buttons.
    t = await startTestApp({
      SIMULATORS: "false",
      DEMO: "false",
      NETWORK_API_URL: "http://127.0.0.1:9/network",
      GATEWAY_API_URL: "http://127.0.0.1:9/gateway",
    });
  });
  afterAll(async () => t?.stop());

  it("serves the page with a strict Content-Security-Policy", async () => {
    const res = await fetch(`${t.url}/dashboard/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<pqr-app>");
    expect(res.headers.get("content-security-policy")).toMatch(/script-src 'self'/);
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    const js = await fetch(`${t.url}/dashboard/js/main.js`);
    expect(js.headers.get("content-type")).toMatch(/javascript/);
  });

  it("tells the dashboard that the simulators are off (the demo buttons stay hidden)", async () => {
    const res = await fetch(`${t.url}/dashboard/config.json`);
    expect(await res.json()).toEqual({
      simulators: false,
      graphqlPath: "/graphql",
      inboxUrl: null,
      linkSimulatorUrl: null,
      // The areas of the module list, for the pages that name kinds and what keys are bound to, and the fields of
      // their transactions the pages query and show (each area's own declaration: the pages name none).
      areas: [
        {
          kind: "qr",
          label: "Generic QR",
          authType: "api-key",
          target: null,
          fields: [{ name: "md5", label: "md5", show: "code", reference: "short", live: true }],
          searched: true,
        },
        {
          kind: "gateway",
          label: "Hosted gateway",
          authType: "api-gateway",
          target: { field: "gatewayConfigId", query: "gatewayConfigs", what: "gateway configuration" },
          fields: [
            { name: "orderId", label: "Order ID", show: "text", reference: "whole", live: true },
            { name: "gatewayStatus", select: "{ code message }", label: "Gateway status", show: "text", live: true },
          ],
          searched: true,
        },
        {
          kind: "gateway_link",
          label: "Gateway link",
          authType: "api-gateway-link",
          target: { field: "linkConfigId", query: "linkConfigs", what: "payment-link configuration" },
          fields: [
            { name: "clientId", label: "Client ID", show: "code", reference: "whole", live: true },
            { name: "receiptUrl", label: "Receipt", show: "link", live: true },
          ],
          searched: false,
        },
      ],
      // The demo buttons are the demo module's: none without simulators.
      controls: {},
    });
    expect(await statusOf(`${t.url}/sim/link/approve`, { method: "POST" })).toBe(404);
  });

  it("serves the graphql-ws browser client from node_modules, and nothing else from there", async () => {
    const client = await fetch(`${t.url}/dashboard/vendor/graphql-ws/client.js`);
    expect(client.status).toBe(200);
    const source = await client.text();
    const chunk = /from '\.\/(common-[\w-]+\.js)'/.exec(source)?.[1];
    expect(chunk).toBeDefined();
    expect(await statusOf(`${t.url}/dashboard/vendor/graphql-ws/${chunk}`)).toBe(200);
    expect(await statusOf(`${t.url}/dashboard/vendor/graphql-ws/index.cjs`)).toBe(404);
    expect(await statusOf(`${t.url}/dashboard/vendor/graphql-ws/../package.json`)).toBe(404);
  });

  it("serves Chart.js's one-file build from node_modules, and nothing else from there", async () => {
    const chart = await fetch(`${t.url}/dashboard/vendor/chart.js/chart.umd.min.js`);
    expect(chart.status).toBe(200);
    expect(chart.headers.get("content-type")).toMatch(/javascript/);
    expect(await chart.text()).toContain("Chart.js v4.");
    expect(await statusOf(`${t.url}/dashboard/vendor/chart.js/chart.cjs`)).toBe(404);
    expect(await statusOf(`${t.url}/dashboard/vendor/chart.js/../package.json`)).toBe(404);
  });
});
