import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import express from "express";
import { AUTH, post } from "../support/app.js";
import { closeNow, listenLoopback } from "../support/listen.js";
import { freePort } from "../support/cluster.js";
import { AdminCli, startDemoService, type DemoService } from "../support/demo-service.js";
import { waitFor } from "../support/wait.js";

type Verify = (
  rawBody: Buffer | string,
  headers: Record<string, string | string[] | undefined>,
  secrets: string | string[],
  opts?: { toleranceSeconds?: number },
) => boolean;

interface Hit {
  ok: boolean;
  type: string;
  transactionId: string;
  status: string;
  meta: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * README "Test your receiver locally": the merchant's receiver is the README's express example (raw body,
 * `verifyWebhook` imported from the package's entry point as built), on 127.0.0.1 with no public URL;
 * `npm run admin -- listen --forward-to …` brings it the demo tenant's events, signed.
 */
describe("admin listen: forwards the caller's events to a local receiver as signed webhooks", () => {
  let svc: DemoService;
  let verifyWebhook: Verify;
  let server: Server;
  let hooks: string;
  const hits: Hit[] = [];
  const clis: AdminCli[] = [];
  const secrets: string[] = [];

  beforeAll(async () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { exports: { ".": string }; main: string };
    expect(pkg.main).toBe(pkg.exports["."].replace(/^\.\//, ""));
    ({ verifyWebhook } = (await import(pathToFileURL(resolve(pkg.exports["."])).href)) as { verifyWebhook: Verify });
    svc = await startDemoService("listen");
    secrets.push(svc.demo.webhook.secret);
    const app = express();
    app.post("/hooks", express.raw({ type: "application/json" }), (req, res) => {
      const ok = verifyWebhook(req.body as Buffer, req.headers, secrets);
      const event = JSON.parse((req.body as Buffer).toString("utf8"));
      const tx = event.data.transaction;
      hits.push({
        ok,
        type: event.type,
        transactionId: tx.transactionId,
        status: tx.status,
        meta: event.data.meta,
        headers: req.headers,
      });
      res.sendStatus(ok ? 204 : 400);
    });
    server = createServer(app);
    hooks = `http://127.0.0.1:${await listenLoopback(server, 0)}/hooks`;
  }, 120_000);

  afterAll(async () => {
    for (const c of clis) await c.stop();
    if (server) await closeNow(server);
    await svc?.dispose();
  });

  const listen = (...args: string[]) => {
    const cli = new AdminCli(["listen", "--forward-to", hooks, ...args], { DATA_DIR: svc.service.dataDir });
    clis.push(cli);
    return cli;
  };

  it("with no flags next to the demo: a paid QR's events arrive verified with the demo's webhook secret", async () => {
    const cli = listen();
    await cli.line(/^Ready: forwarding all events/);
    const g = await post(
      `${svc.url}/qr/generate`,
      { amount: 1.25, currency: 840, expiredAfter: 120_000, meta: { order: "A-1" } },
      AUTH.qr(svc.demo.keys.qr),
    );
    expect(g.status).toBe(200);
    const { transactionId, data } = g.body as { transactionId: string; data: { md5: string } };
    expect((await post(`${svc.url}/sim/network/pay`, { md5: data.md5 })).status).toBeLessThan(300);
    const line = await cli.line(
      new RegExp(`payment\\.completed\\s+${transactionId}\\s+SUCCESS\\s+→ 204 \\(\\d+ ms\\)`),
    );
    expect(line).toMatch(/^\d{4}-\d\d-\d\dT/);
    const completed = hits.find((h) => h.transactionId === transactionId && h.type === "payment.completed");
    expect(completed).toMatchObject({ ok: true, status: "SUCCESS", meta: { order: "A-1" } });
    expect(completed?.headers).toMatchObject({
      "x-event-type": "payment.completed",
      "x-signature": expect.stringMatching(/^v1=[0-9a-f]{64}$/),
      "x-timestamp": expect.stringMatching(/^\d+$/),
    });
    // The same event the service's own webhook delivered to the demo inbox (it may arrive after listen's): same id.
    const inboxIds = async () =>
      ((await (await fetch(`${svc.url}/sim/inbox`)).json()) as { headers: Record<string, string> }[]).map(
        (e) => e.headers["x-event-id"],
      );
    await waitFor(async () => (await inboxIds()).includes(String(completed?.headers["x-event-id"])));
    expect(await cli.stop()).toBe(0); // Ctrl-C ends it cleanly
  });

  it("--api-key sees only that key's events, --events filters, --secret signs with the merchant's own secret", async () => {
    const own = "whsec_merchant_chosen_secret_0123456789";
    const cli = listen("--api-key", svc.demo.keys.gateway, "--events", "payment.created", "--secret", own);
    await cli.line(/^Ready: forwarding payment\.created of key pqr_gw_/);
    const qr = await post(
      `${svc.url}/qr/generate`,
      { amount: 2, currency: 840, expiredAfter: 120_000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    const gw = await post(
      `${svc.url}/gateway/generate-qr`,
      { qrData: { orderId: `L${Date.now()}`, amount: 3, currency: "USD" } },
      AUTH.gateway(svc.demo.keys.gateway),
    );
    expect(gw.status).toBe(200);
    const gwId = (gw.body as { transactionId: string }).transactionId;
    const qrId = (qr.body as { transactionId: string }).transactionId;
    await cli.line(new RegExp(`payment\\.created\\s+${gwId}\\s+CHECKOUT\\s+→ 400`));
    // Signed with the merchant's secret, which this receiver did not know yet: refused, then accepted once added.
    expect(hits.find((h) => h.transactionId === gwId)?.ok).toBe(false);
    expect(verifyWebhook("{}", {}, own)).toBe(false);
    secrets.push(own);
    const cli2 = listen("--api-key", svc.demo.keys.gateway, "--events", "payment.created", "--secret", own);
    await cli2.line(/^Ready/);
    const gw2 = await post(
      `${svc.url}/gateway/generate-qr`,
      { qrData: { orderId: `M${Date.now()}`, amount: 4, currency: "USD" } },
      AUTH.gateway(svc.demo.keys.gateway),
    );
    const gw2Id = (gw2.body as { transactionId: string }).transactionId;
    await cli2.line(new RegExp(`payment\\.created\\s+${gw2Id}\\s+CHECKOUT\\s+→ 204`));
    // The qr key's transaction never reached the gateway key's listeners.
    expect([...cli.lines, ...cli2.lines].some((l) => l.includes(qrId))).toBe(false);
    expect(cli.lines.some((l) => /payment\.(completed|expired)/.test(l))).toBe(false);
    expect(await cli.stop()).toBe(0);
    expect(await cli2.stop()).toBe(0);
  });

  it("refuses a wrong key with one line and exit code 1, and bad flags with exit code 2", async () => {
    const bad = listen("--api-key", "pqr_qr_not-a-real-key");
    expect(await bad.exited).toBe(1);
    expect(bad.lines.join("\n")).toMatch(/^error: /m);
    const noUrl = new AdminCli(["listen"], { DATA_DIR: svc.service.dataDir });
    expect(await noUrl.exited).toBe(2);
    expect(noUrl.lines.join("\n")).toMatch(/--forward-to URL is required/);
    const badEvent = listen("--events", "payment.teleported");
    expect(await badEvent.exited).toBe(2);
    expect(badEvent.lines.join("\n")).toMatch(/unknown event kind "payment\.teleported"/);
  });

  it("a receiver that is down: the line says so and the listener keeps running", async () => {
    const cli = listen(
      "--events",
      "payment.created",
      "--forward-to",
      `http://127.0.0.1:${await freePort()}/nothing-here`,
    );
    await cli.line(/^Ready/);
    const g = await post(
      `${svc.url}/qr/generate`,
      { amount: 5, currency: 840, expiredAfter: 120_000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    const id = (g.body as { transactionId: string }).transactionId;
    await cli.line(new RegExp(`payment\\.created\\s+${id}\\s+PENDING\\s+→ error ECONNREFUSED`));
    expect(await cli.stop()).toBe(0);
  });

  it("the service restarting under it: listen reconnects from the last event it saw, nothing lost or doubled", async () => {
    const cli = listen("--events", "payment.created,payment.completed");
    await cli.line(/^Ready/);
    const first = await post(
      `${svc.url}/qr/generate`,
      { amount: 6, currency: 840, expiredAfter: 120_000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    await cli.line(new RegExp(`payment\\.created\\s+${(first.body as { transactionId: string }).transactionId}`));
    await svc.service.restart(); // SIGKILL, then the same port and data directory
    // Whether listen is back before these or replays them after, each arrives once.
    const g = await post(
      `${svc.url}/qr/generate`,
      { amount: 7, currency: 840, expiredAfter: 120_000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    const { transactionId, data } = g.body as { transactionId: string; data: { md5: string } };
    await post(`${svc.url}/sim/network/pay`, { md5: data.md5 });
    await cli.line(/reconnected; replaying from the last event/, 30_000);
    await cli.line(new RegExp(`payment\\.created\\s+${transactionId}\\s+PENDING\\s+→ 204`), 30_000);
    await cli.line(new RegExp(`payment\\.completed\\s+${transactionId}\\s+SUCCESS\\s+→ 204`), 30_000);
    expect(cli.lines.filter((l) => l.includes(`payment.created     ${transactionId}`))).toHaveLength(1);
    expect(await cli.stop()).toBe(0);
  }, 90_000);
});
