import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { seedDemo, type DemoFile } from "../../src/demo/seed.js";
import { DEMO_MODULES } from "../../src/demo/index.js";
import { AUTH, post } from "../support/app.js";
import { subscribe } from "../support/ws.js";
import { waitFor } from "../support/wait.js";

/**
 * What `npm start` runs — the embedded database, demo tenant with its webhook endpoint, simulators and
 * monitors in the process — at 64 requests in flight, on every write and read path. PGlite is one session
 * behind a socket; before the embedded server kept each connection's statements and units apart, a burst
 * like these answered 500 ("prepared statement … already exists") and left paid QRs PENDING.
 */
const CONCURRENCY = 64;

type Res = Awaited<ReturnType<typeof post>>;
const statuses = (rs: Res[]) => rs.map((r) => r.status);
const failures = (rs: Res[]) =>
  rs.filter((r) => r.status !== 200).map((r) => `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);

describe("the embedded default at concurrency 64", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-embedded-c64-"));
  // The shared settings and the areas' own (QR_MONITOR_INTERVAL_MS…) from one environment, as commands.ts reads both.
  const env = {
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    QR_MONITOR_INTERVAL_MS: "500",
    GATEWAY_MONITOR_INTERVAL_MS: "500",
    RATE_LIMIT_PER_MINUTE: "0",
    // The simulators answer from this process, behind the event loop the 64 requests keep busy: on a 2-core machine
    // running the rest of the suite, a loopback answer was seen taking over the default 10 s. This file is about the
    // database at concurrency; upstream timeouts have tests of their own.
    UPSTREAM_TIMEOUT_MS: "60000",
  };
  const config = loadConfig(env);
  let app: App;
  let demo: DemoFile;
  let url: string;
  const admin = async <T>(query: string, variables: Record<string, unknown> = {}) => {
    const r = await post(`${url}/graphql`, { query, variables }, { authorization: `Bearer ${demo.adminToken}` });
    return r as Res & { body: { data?: T; errors?: unknown[] } };
  };
  const gql = (key: string, query: string, variables: Record<string, unknown> = {}) =>
    post(`${url}/graphql`, { query, variables }, AUTH.qr(key));

  // What the generate burst issued, for the later tests.
  const qrs: { transactionId: string; md5: string; clientToken: string }[] = [];
  const gateways: { transactionId: string; orderId: string }[] = [];
  const links: { transactionId: string; clientId: string }[] = [];

  beforeAll(async () => {
    app = await createApp(config, { deferStartup: true, modules: DEMO_MODULES, env });
    demo = await seedDemo(app);
    app.startupDone();
    url = app.url;
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("64 generates at once across the three areas, GraphQL and idempotent retries: every one answers", async () => {
    const idem = Array.from({ length: 8 }, (_, i) => `burst-${i}-${Date.now()}`);
    const jobs: Promise<Res & { kind: string; idem?: string }>[] = [];
    const tag = (kind: string, p: Promise<Res>, extra: { idem?: string } = {}) =>
      jobs.push(p.then((r) => ({ ...r, kind, ...extra })));
    for (let i = 0; i < 28; i++)
      tag(
        "qr",
        post(
          `${url}/qr/generate`,
          { amount: 1 + i / 10, currency: 840, expiredAfter: 120_000, meta: { n: i } },
          AUTH.qr(demo.keys.qr),
        ),
      );
    // Each idempotency key twice at once: one creates, the other waits for it or is told it is in progress.
    for (const k of idem)
      for (let j = 0; j < 2; j++) {
        tag(
          "idem",
          post(
            `${url}/qr/generate`,
            { amount: 3, currency: 840, expiredAfter: 120_000 },
            { ...AUTH.qr(demo.keys.qr), "idempotency-key": k },
          ),
          { idem: k },
        );
      }
    for (let i = 0; i < 12; i++) {
      tag(
        "gateway",
        post(
          `${url}/gateway/generate-qr`,
          { qrData: { orderId: `c64-${Date.now().toString(36)}-${i}`, amount: 2, currency: "USD" } },
          AUTH.gateway(demo.keys.gateway),
        ),
      );
    }
    for (let i = 0; i < 4; i++)
      tag(
        "link",
        post(
          `${url}/gateway-link/generate-qr`,
          { amount: 1000 + i, currency: 116, meta: { i } },
          AUTH.gatewayLink(demo.keys.gatewayLink),
        ),
      );
    for (let i = 0; i < CONCURRENCY - 28 - 16 - 12 - 4; i++) {
      tag(
        "graphql",
        gql(
          demo.keys.qr,
          `mutation($i: GenerateQrInput!) { generateQr(input: $i) { transactionId data { md5 } clientToken } }`,
          { i: { amount: 5, currency: 840, expiredAfter: 120_000 } },
        ),
      );
    }
    expect(jobs).toHaveLength(CONCURRENCY);
    const results = await Promise.all(jobs);

    expect(failures(results.filter((r) => r.kind !== "idem"))).toEqual([]);
    for (const r of results.filter((x) => x.kind === "graphql"))
      expect((r.body as { errors?: unknown }).errors).toBeUndefined();
    // Idempotency: never two transactions for one key; a loser is a 409 "in progress", never a 500.
    for (const k of idem) {
      const pair = results.filter((r) => r.idem === k);
      expect(statuses(pair).every((s) => s === 200 || s === 409)).toBe(true);
      const ids = new Set(
        pair.filter((r) => r.status === 200).map((r) => (r.body as { transactionId: string }).transactionId),
      );
      expect(ids.size).toBe(1);
      const again = await post(
        `${url}/qr/generate`,
        { amount: 3, currency: 840, expiredAfter: 120_000 },
        { ...AUTH.qr(demo.keys.qr), "idempotency-key": k },
      );
      expect(again.status).toBe(200);
      expect((again.body as { transactionId: string }).transactionId).toBe([...ids][0]);
    }

    for (const r of results) {
      const b = r.body as Record<string, unknown>;
      if (r.kind === "qr")
        qrs.push({
          transactionId: b.transactionId as string,
          md5: (b.data as { md5: string }).md5,
          clientToken: b.clientToken as string,
        });
      if (r.kind === "graphql") {
        const g = (b.data as { generateQr: { transactionId: string; data: { md5: string }; clientToken: string } })
          .generateQr;
        qrs.push({ transactionId: g.transactionId, md5: g.data.md5, clientToken: g.clientToken });
      }
      if (r.kind === "gateway")
        gateways.push({ transactionId: b.transactionId as string, orderId: b.orderId as string });
      if (r.kind === "link")
        links.push({ transactionId: b.transactionId as string, clientId: (b.data as { clientId: string }).clientId });
    }
    expect(new Set(qrs.map((q) => q.md5)).size).toBe(qrs.length);
  }, 120_000);

  it("64 reads at once: checks in every area, verify, decode, transaction lists and readiness", async () => {
    const jobs: Promise<Res>[] = [];
    for (let i = 0; i < 20; i++)
      jobs.push(post(`${url}/qr/check`, { md5: qrs[i % qrs.length]!.md5 }, AUTH.qr(demo.keys.qr)));
    for (let i = 0; i < 12; i++)
      jobs.push(
        post(
          `${url}/gateway/check-status`,
          { transactionId: gateways[i % gateways.length]!.transactionId },
          AUTH.gateway(demo.keys.gateway),
        ),
      );
    for (let i = 0; i < 8; i++)
      jobs.push(
        post(
          `${url}/gateway-link/check`,
          { transactionId: links[i % links.length]!.transactionId },
          AUTH.gatewayLink(demo.keys.gatewayLink),
        ),
      );
    const qrString = (
      (await post(`${url}/qr/check`, { md5: qrs[0]!.md5 }, AUTH.qr(demo.keys.qr))).body as { data: { qr: string } }
    ).data.qr;
    for (let i = 0; i < 8; i++) jobs.push(post(`${url}/qr/verify`, { qrData: qrString }, AUTH.qr(demo.keys.qr)));
    for (let i = 0; i < 8; i++) jobs.push(post(`${url}/qr/decode`, { qrData: qrString }, AUTH.qr(demo.keys.qr)));
    for (let i = 0; i < 6; i++)
      jobs.push(gql(demo.keys.qr, `{ transactions(first: 50) { edges { node { id status } } } }`));
    for (let i = 0; i < 2; i++)
      jobs.push(
        fetch(`${url}/readyz`).then(async (r) => ({ status: r.status, body: await r.json(), headers: r.headers })),
      );
    expect(jobs).toHaveLength(CONCURRENCY);
    const results = await Promise.all(jobs);
    expect(failures(results)).toEqual([]);
    expect(results.filter((r) => (r.body as { errors?: unknown }).errors !== undefined)).toEqual([]);
  }, 60_000);

  it("every payment made on the simulators reaches SUCCESS through the monitors, live and by signed webhook", async () => {
    const watched = qrs[0]!;
    const { sub } = subscribe<{ transactionUpdated: { transaction: { status: string } } }>(
      url,
      { clientToken: watched.clientToken },
      `subscription($id: ID!) { transactionUpdated(transactionId: $id) { transaction { status } } }`,
      { id: watched.transactionId },
    );
    const sim = (path: string, body: unknown) => post(`${url}${path}`, body);
    const pays = [
      ...qrs.map((q) => sim("/sim/network/pay", { md5: q.md5 })),
      ...gateways.map((g) => sim("/sim/gateway/pay", { tranId: g.orderId, outcome: "APPROVED" })),
      ...links.map(async (l) => {
        await sim("/sim/link/scan", { clientId: l.clientId });
        return sim("/sim/link/approve", { clientId: l.clientId });
      }),
    ];
    expect(failures(await Promise.all(pays))).toEqual([]);

    const status = async () => {
      const all = await Promise.all([
        ...qrs.map((q) => post(`${url}/qr/check`, { md5: q.md5 }, AUTH.qr(demo.keys.qr))),
        ...gateways.map((g) =>
          post(`${url}/gateway/check-status`, { transactionId: g.transactionId }, AUTH.gateway(demo.keys.gateway)),
        ),
        ...links.map((l) =>
          post(
            `${url}/gateway-link/check`,
            { transactionId: l.transactionId },
            AUTH.gatewayLink(demo.keys.gatewayLink),
          ),
        ),
      ]);
      expect(failures(all)).toEqual([]);
      return all.map((r) => (r.body as { status: string }).status);
    };
    await waitFor(async () => (await status()).every((s) => s === "SUCCESS"), 45_000, 500);
    await sub.done;
    expect(sub.events.at(-1)?.transactionUpdated.transaction.status).toBe("SUCCESS");

    const ids = new Set([...qrs, ...gateways, ...links].map((t) => t.transactionId));
    await waitFor(
      async () => {
        const inbox = (await (await fetch(`${url}/sim/inbox`)).json()) as {
          headers: Record<string, string>;
          body: string;
        }[];
        const completed = new Set(
          inbox
            .map((e) => JSON.parse(e.body) as { type: string; data: { transaction: { transactionId: string } } })
            .filter((e) => e.type === "payment.completed")
            .map((e) => e.data.transaction.transactionId),
        );
        return (
          [...ids].every((id) => completed.has(id)) && inbox.every((e) => e.headers["x-signature"]?.startsWith("v1="))
        );
      },
      30_000,
      500,
    );
  }, 120_000);

  it("the admin API and the dashboard's reads answer 64 operations at once", async () => {
    const jobs: Promise<Res & { body: { data?: unknown; errors?: unknown[] } }>[] = [];
    for (let i = 0; i < 24; i++) {
      jobs.push(
        admin(`mutation($input: MerchantInput!) { createMerchant(input: $input) { id } }`, {
          input: {
            name: `Shop ${i}`,
            accountType: "merchant",
            bakongAccountId: `shop_${i}@devb`,
            merchantName: `Shop ${i}`,
            merchantCity: "Phnom Penh",
            merchantId: `S${i}`,
            acquiringBank: "Dev Bank",
            defaultCurrency: 840,
          },
        }),
      );
    }
    for (let i = 0; i < 8; i++)
      jobs.push(
        admin(
          `mutation { createApiKey(input: { merchantId: "${demo.ids!.merchant}", kind: qr, label: "k${i}" }) { apiKey } }`,
        ),
      );
    for (let i = 0; i < 12; i++)
      jobs.push(admin(`{ transactions(first: 50) { edges { node { id status area } } } merchants { id } }`));
    for (let i = 0; i < 8; i++)
      jobs.push(admin(`{ webhookDeliveries(first: 50) { id state } webhookEndpoints { id url } }`));
    for (let i = 0; i < 8; i++) jobs.push(admin(`{ apiKeys { id kind } gatewayConfigs { id } linkConfigs { id } }`));
    for (let i = 0; i < 4; i++)
      jobs.push(
        fetch(`${url}/dashboard/`).then(async (r) => ({
          status: r.status,
          body: { text: await r.text() } as { data?: unknown; errors?: unknown[] },
          headers: r.headers,
        })),
      );
    expect(jobs).toHaveLength(CONCURRENCY);
    const results = await Promise.all(jobs);
    expect(failures(results)).toEqual([]);
    expect(results.flatMap((r) => r.body.errors ?? [])).toEqual([]);
  }, 60_000);

  it("stays ready, and later work still goes through (no session left broken by the bursts)", async () => {
    const r = await fetch(`${url}/readyz`);
    expect(r.status).toBe(200);
    const g = await post(
      `${url}/qr/generate`,
      { amount: 9.99, currency: 840, expiredAfter: 60_000 },
      AUTH.qr(demo.keys.qr),
    );
    expect(g.status).toBe(200);
    await post(`${url}/sim/network/pay`, { md5: (g.body as { data: { md5: string } }).data.md5 });
    await waitFor(
      async () =>
        (
          (
            await post(
              `${url}/qr/check`,
              { md5: (g.body as { data: { md5: string } }).data.md5 },
              AUTH.qr(demo.keys.qr),
            )
          ).body as { status: string }
        ).status === "SUCCESS",
      15_000,
      250,
    );
  }, 60_000);
});
