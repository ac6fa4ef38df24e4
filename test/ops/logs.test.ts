import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AUTH, post, type Tenant } from "../support/app.js";
import { ARTIFACTS, freePort, ServiceProcess } from "../support/cluster.js";
import { startService, type FuzzService } from "../support/service.js";
import { subscribe } from "../support/ws.js";
import type { DemoFile } from "../../src/demo/seed.js";
import { humanLine } from "../../src/logs/pretty.js";
import { waitFor } from "../support/wait.js";
import { copyDemoTemplate } from "../support/demo-template.js";

const LOG_DIR = join(ARTIFACTS, "..", "logs");
/** A readable line: time, level, message (pino-pretty, LOG_FORMAT=pretty). */
const PRETTY = /^\[\d\d:\d\d:\d\d\.\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL): /;
const STACK = /^\s+at \S/;

/** Generates a generic QR, pays it on the network simulator and waits until the check says SUCCESS. */
async function payOne(url: string, key: string): Promise<string> {
  const g = await post(`${url}/qr/generate`, { amount: 1.5, currency: 840, expiredAfter: 120000 }, AUTH.qr(key));
  const { transactionId, data } = g.body as { transactionId: string; data: { md5: string } };
  await post(`${url}/sim/network/pay`, { md5: data.md5 });
  await waitFor(
    async () =>
      ((await post(`${url}/qr/check`, { md5: data.md5 }, AUTH.qr(key))).body as { status: string }).status ===
      "SUCCESS",
    20_000,
  );
  return transactionId;
}

describe("log lines for people", () => {
  it("are one line each: the message, then key=value, an error's message; a stack only at error level", () => {
    const err = { message: "boom", stack: "Error: boom\n    at x (y.js:1:1)" };
    expect(humanLine({ level: 30, msg: "service started", url: "http://x", ms: 12, pid: 1, hostname: "h" })).toBe(
      "service started url=http://x ms=12",
    );
    expect(humanLine({ level: 40, msg: "dispatch failed", err })).toBe("dispatch failed — boom");
    expect(humanLine({ level: 50, msg: "unhandled", err })).toBe("unhandled — boom\nError: boom\n    at x (y.js:1:1)");
    expect(humanLine({ level: 30, msg: "payment txn_1 SUCCESS", activity: { status: "SUCCESS" } })).toBe(
      "payment txn_1 SUCCESS",
    );
  });
});

describe("the demo's log (npm start): readable, one line per state change and per webhook attempt", () => {
  let svc: ServiceProcess;
  let demo: DemoFile;
  beforeAll(async () => {
    mkdirSync(LOG_DIR, { recursive: true });
    svc = new ServiceProcess("logs-demo", "serve", await freePort(), () => ({ HOST: "127.0.0.1" }), LOG_DIR);
    await svc.start();
    demo = JSON.parse(readFileSync(join(svc.dataDir, "demo.json"), "utf8")) as DemoFile;
  }, 120_000);
  afterAll(async () => svc?.dispose());

  it("a paid QR is two state-change lines and two webhook lines; no request lines, no JSON, no stack", async () => {
    const id = await payOne(svc.url, demo.keys.qr);
    await post(`${svc.url}/qr/generate`, { amount: "abc" }, AUTH.qr(demo.keys.qr)); // a 4xx: nothing to say
    const webhook = new RegExp(
      `INFO: webhook (payment\\.created|payment\\.completed) → ${svc.url} \\(whe_\\w+\\) 204 \\(\\d+ ms, attempt 1\\)$`,
    );
    const lines = () => svc.output.filter((l) => l.includes(id) || webhook.test(l));
    await waitFor(async () => svc.output.filter((l) => webhook.test(l)).length >= 2, 20_000);
    const mine = svc.output.filter((l) => l.includes(id));
    expect(mine).toEqual([
      expect.stringMatching(new RegExp(`INFO: payment ${id} PENDING \\(payment\\.created, qr 1\\.50 USD\\)$`)),
      expect.stringMatching(new RegExp(`INFO: payment ${id} SUCCESS \\(payment\\.completed, qr 1\\.50 USD\\)$`)),
    ]);
    expect(lines().length).toBe(4);
    const logLines = svc.output.filter((l) => /^[[{]/.test(l));
    expect(logLines.filter((l) => !PRETTY.test(l))).toEqual([]);
    expect(logLines.filter((l) => /request completed|"msg"|x-api-key|GET \/readyz|POST \/qr/.test(l))).toEqual([]);
    expect(svc.output.filter((l) => STACK.test(l))).toEqual([]);
    expect(Math.max(...logLines.map((l) => l.length))).toBeLessThan(300);
  }, 60_000);
});

describe("LOG_REQUESTS=1: one short line per request, never its headers; expected answers without a stack", () => {
  let svc: ServiceProcess;
  beforeAll(async () => {
    mkdirSync(LOG_DIR, { recursive: true });
    svc = new ServiceProcess(
      "logs-requests",
      "serve",
      await freePort(),
      () => ({ HOST: "127.0.0.1", LOG_REQUESTS: "1" }),
      LOG_DIR,
    );
    // The demo as a second `npm start` finds it (the first start's log is the describe above's).
    await copyDemoTemplate(svc.dataDir);
    // start() polls /readyz until 200: the 503s of the start-up (demo tenant not there yet) are logged.
    await svc.start();
  }, 120_000);
  afterAll(async () => svc?.dispose());

  it("/readyz 503 while starting and a 400 are plain lines; the key and the headers never appear", async () => {
    const demo = JSON.parse(readFileSync(join(svc.dataDir, "demo.json"), "utf8")) as DemoFile;
    await post(`${svc.url}/qr/generate`, { amount: "abc" }, AUTH.qr(demo.keys.qr));
    await waitFor(async () => svc.output.some((l) => / INFO: POST \/qr\/generate 400 \d+ ms$/.test(l)));
    // Each 503 the start's readiness poll received is a plain warning line (whether the poll lands in the start-up
    // window at all depends on the machine: it is asked every 50 ms).
    const notReady = svc.readyStatuses.filter((s) => s === 503).length;
    const lines503 = svc.output.filter((l) => l.includes("/readyz 503"));
    expect(lines503.filter((l) => !/ WARN: GET \/readyz 503$/.test(l))).toEqual([]);
    expect(lines503.length).toBeGreaterThanOrEqual(notReady);
    expect(svc.output.some((l) => / INFO: GET \/readyz 200 \d+ ms$/.test(l))).toBe(true);
    expect(svc.output.filter((l) => STACK.test(l))).toEqual([]);
    expect(svc.output.filter((l) => l.includes(demo.keys.qr) && PRETTY.test(l))).toEqual([]);
    expect(svc.output.filter((l) => /x-api-key|user-agent|headers/.test(l) && PRETTY.test(l))).toEqual([]);
  });
});

describe("production format (JSON), two processes on one database: each state change is logged once", () => {
  let svc: FuzzService;
  let api: ServiceProcess;
  let tenant: Tenant;
  beforeAll(async () => {
    mkdirSync(LOG_DIR, { recursive: true });
    const env = { LOG_LEVEL: "info", QR_MONITOR_INTERVAL_MS: "500" };
    svc = await startService(env);
    api = new ServiceProcess(
      "logs-api",
      "api",
      await freePort(),
      () => ({
        NODE_ENV: "test",
        HOST: "127.0.0.1",
        DATABASE_URL: svc.dbUrl,
        ADMIN_TOKEN: "test-admin-ocxiD6IezgDlp5-8L1138dOdBTY6FyqlyPyNaKLU6dE",
        SECRET_KEY: "test-secret-key-0123456789-0123456789",
        SIMULATORS: "true",
        DEMO: "false",
        RATE_LIMIT_PER_MINUTE: "0",
        ...env,
      }),
      LOG_DIR,
    );
    await api.start();
    tenant = await svc.createTenant();
  }, 120_000);
  afterAll(async () => {
    await api?.dispose();
    await svc?.stop();
  });

  it("created in the api process, paid by the serve process's monitor: one JSON line each, where it was committed", async () => {
    const g = await post(
      `${api.url}/qr/generate`,
      { amount: 1.5, currency: 840, expiredAfter: 120000 },
      AUTH.qr(tenant.keys.qr),
    );
    const {
      transactionId: id,
      data,
      clientToken,
    } = g.body as {
      transactionId: string;
      clientToken: string;
      data: { md5: string };
    };
    // The api process hears the payment by NOTIFY and publishes it on its bus, where the line would be written:
    // its subscriber receiving payment.completed proves it heard it.
    const { sub } = subscribe(
      api.url,
      { clientToken },
      `subscription($id: ID!) { transactionUpdated(transactionId: $id) { type transaction { status } } }`,
      { id },
    );
    // The monitor that sees the payment is the serve process's, asking its own network simulator (which cannot
    // describe a QR issued by another process: the payee is given).
    const payee = { toAccountId: "test_shop@devb", amount: "1.5", currency: "USD" };
    expect((await post(`${svc.url}/sim/network/pay`, { md5: data.md5, ...payee })).status).toBe(200);
    await waitFor(async () => sub.events.some((e) => e.transactionUpdated.type === "payment.completed"), 20_000);
    sub.close();
    const changes = (who: string, out: string[]) =>
      out
        .filter((l) => l.startsWith("{") && l.includes(id))
        .map((l) => JSON.parse(l) as { msg: string; activity?: { event: string; status: string } })
        .filter((j) => j.activity !== undefined && j.msg.startsWith("payment "))
        .map((j) => [who, j.activity?.event, j.activity?.status]);
    // The serve process's line reaches this process through its stdout pipe, which may be read after the event.
    const all = () => [...changes("serve", svc.output), ...changes("api", api.output)];
    await waitFor(async () => all().length >= 2, 10_000).catch(() => undefined);
    expect(all()).toEqual([
      ["serve", "payment.completed", "SUCCESS"],
      ["api", "payment.created", "PENDING"],
    ]);
  }, 60_000);
});
