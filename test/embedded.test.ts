import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type App } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { seedDemo, type DemoFile } from "../src/demo/seed.js";
import { DEMO_MODULES } from "../src/demo/index.js";
import { post, AUTH } from "./support/app.js";
import { waitFor } from "./support/wait.js";
import { statusOf } from "./support/http.js";

/** `npm start` with nothing configured: the embedded database (PGlite), simulators and the demo tenant. */
describe("zero-setup demo on the embedded database", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-embedded-"));
  // The shared settings and the areas' own (QR_MONITOR_INTERVAL_MS…) from one environment, as commands.ts reads both.
  const env = {
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    QR_MONITOR_INTERVAL_MS: "500",
  };
  const config = loadConfig(env);
  let app: App;
  let demo: DemoFile;
  let readyBeforeSeed: { status: number; body: { checks: Record<string, boolean> } };
  beforeAll(async () => {
    // As commands.ts does: not ready until the demo tenant (whose keys it prints) exists.
    app = await createApp(config, { deferStartup: true, modules: DEMO_MODULES, env });
    const r = await fetch(`${app.url}/readyz`);
    readyBeforeSeed = { status: r.status, body: (await r.json()) as { checks: Record<string, boolean> } };
    demo = await seedDemo(app);
    app.startupDone();
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("is ready, and writes demo.json with its documented fields", async () => {
    expect(app.embedded).toBe(true);
    expect(readyBeforeSeed).toEqual({
      status: 503,
      body: expect.objectContaining({ checks: expect.objectContaining({ startup: false, database: true }) }),
    });
    expect(await statusOf(`${app.url}/readyz`)).toBe(200);
    const file = JSON.parse(readFileSync(join(dataDir, "demo.json"), "utf8")) as DemoFile;
    for (const k of ["baseUrl", "adminToken", "keys", "webhook", "simulators"]) expect(file).toHaveProperty(k);
    expect(Object.keys(file.keys).sort()).toEqual(["gateway", "gatewayLink", "qr"]);
    expect(Object.keys(file.simulators).sort()).toEqual(["gateway", "link", "network"]);
    expect(file.webhook.url).toBe(`${app.url}/sim/inbox`);
  });

  it("a QR goes through end to end: generate → pay → SUCCESS, and the inbox gets signed events", async () => {
    const g = (
      await post(`${app.url}/qr/generate`, { amount: 2.5, currency: 840, expiredAfter: 60000 }, AUTH.qr(demo.keys.qr))
    ).body as { data: { md5: string } };
    await post(`${app.url}/sim/network/pay`, { md5: g.data.md5 });
    await waitFor(
      async () =>
        ((await post(`${app.url}/qr/check`, { md5: g.data.md5 }, AUTH.qr(demo.keys.qr))).body as { status: string })
          .status === "SUCCESS",
      15_000,
    );
    const inbox = await waitFor(async () => {
      const list = (await (await fetch(`${app.url}/sim/inbox`)).json()) as {
        headers: Record<string, string>;
        body: string;
      }[];
      return list.some((e) => JSON.parse(e.body).type === "payment.completed") ? list : null;
    }, 10_000);
    expect(inbox.every((e) => e.headers["x-signature"].startsWith("v1="))).toBe(true);
  });

  it("a restart keeps the same tenant and keys", async () => {
    await app.stop();
    app = await createApp(config, { modules: DEMO_MODULES, env });
    const again = await seedDemo(app);
    expect(again.keys).toEqual(demo.keys);
    expect(again.adminToken).toBe(demo.adminToken);
    const res = await post(`${app.url}/qr/verify`, { qrData: "x" }, AUTH.qr(demo.keys.qr));
    expect(res.status).toBe(200);
  }, 120_000);
});
