import { mkdtempSync, rmSync } from "node:fs";
import { demoLinkUrl } from "../../src/simulators/demo-upstreams.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, migrationsOf, MODULES, type App, type ModuleList, type Role } from "../../src/app.js";
import { DEMO_MODULES } from "../../src/demo/index.js";
import { loadConfig } from "../../src/config.js";
import { createLogger, type Logger } from "../../src/logger.js";
import { OffsetClock } from "../../src/clock.js";
import { createTestDatabase } from "./db.js";
import { migratedTemplate, templateFits } from "./template-db.js";
import { checkRestAnswer } from "./openapi-contract.js";
import type { WebhookReceiver } from "./webhook-receiver.js";
import { waitFor } from "./wait.js";
import { TEST_KEEP_ALIVE_MS } from "./listen.js";

export const ADMIN_TOKEN = "test-admin-ocxiD6IezgDlp5-8L1138dOdBTY6FyqlyPyNaKLU6dE";

/**
 * How long a service on a fresh embedded database may take to answer once started: it initialises and migrates
 * PostgreSQL in WebAssembly, seen taking over 60 s on a 2-core machine busy with the rest of the suite.
 */
export const EMBEDDED_START_MS = 150_000;

export interface TestApp {
  app: App;
  url: string;
  clock: OffsetClock;
  dbUrl: string;
  admin<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

async function start(
  env: Record<string, string>,
  clock: OffsetClock,
  opts: { role?: Role; logger?: Logger; modules?: ModuleList },
) {
  const config = loadConfig(env);
  // The service's modules, with demo mode's simulators where SIMULATORS is on, as commands.ts does (a test may add
  // an area).
  const modules = opts.modules ?? (config.simulators ? DEMO_MODULES : MODULES);
  return createApp(config, { role: opts.role ?? "serve", clock, logger: opts.logger, modules, env });
}

/**
 * The real service on a fresh PostgreSQL database, port 0, simulators on (the demo module), a movable clock. The
 * database is a copy of the run's migrated template, or empty for a module list whose migrations do not start with
 * the service's (test/support/template-db.ts). With `embedded`: the default of `npm start` instead, the embedded
 * database (PGlite) in a fresh data directory.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  opts: { role?: Role; dbUrl?: string; embedded?: boolean; logger?: Logger; modules?: ModuleList } = {},
): Promise<TestApp> {
  const ownDb = !opts.dbUrl && !opts.embedded;
  const template = ownDb && templateFits(migrationsOf(opts.modules ?? MODULES)) ? await migratedTemplate() : undefined;
  const db = ownDb ? await createTestDatabase({ template }) : null;
  const dbUrl = opts.embedded ? "" : (opts.dbUrl ?? (db as { url: string }).url);
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-test-"));
  const fullEnv: Record<string, string> = {
    NODE_ENV: "test",
    PORT: "0",
    HOST: "127.0.0.1",
    ...(opts.embedded ? {} : { DATABASE_URL: dbUrl }),
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    ADMIN_TOKEN,
    SECRET_KEY: "test-secret-key-0123456789-0123456789",
    SIMULATORS: "true",
    DEMO: "false",
    QR_MONITOR_INTERVAL_MS: "500",
    GATEWAY_MONITOR_INTERVAL_MS: "500",
    // PayWay payments are polled at the real page's 3 s in production; the twin answers at once, and a test of
    // an outage waited out over many polls should not wait 30 s of wall clock for them.
    LINK_POLL_INTERVAL_MS: "500",
    DB_POOL_SIZE: "4",
    // The test and the service share one event loop (test/support/listen.ts says why this is longer).
    HTTP_KEEP_ALIVE_TIMEOUT_MS: String(TEST_KEEP_ALIVE_MS),
    RATE_LIMIT_PER_MINUTE: "0",
    // Tests send wrong bearer tokens on purpose from one address; the throttle has its own test.
    BEARER_FAILURES_PER_MINUTE: "100000",
    ...env,
  };
  const clock = new OffsetClock();
  // A start that is refused (tests of a refused start) leaves no database or data directory behind.
  const app = await start(fullEnv, clock, opts).catch(async (err: unknown) => {
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });
  return {
    app,
    url: app.url,
    clock,
    dbUrl,
    async admin<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
      const res = await fetch(`${app.adminUrl ?? app.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ query, variables }),
      });
      const json = (await res.json()) as { data?: T; errors?: { message: string }[] };
      if (json.errors?.length) throw new Error(`admin GraphQL error: ${json.errors.map((e) => e.message).join("; ")}`);
      return json.data as T;
    },
    async stop() {
      await app.stop();
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The service's own logger (its redaction included) writing into memory: every line it wrote, as text. With it,
 * set LOG_LEVEL in the app's env too: the access log is only mounted when the configured level is not silent.
 */
export function capturedLogger(level: "info" | "warn" | "debug" = "info"): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger({ logLevel: level }, { write: (line: string) => void lines.push(line.trimEnd()) });
  return { logger, lines };
}

export interface Tenant {
  merchantId: string;
  /** The merchant's name (also its display name, cut to 25 characters). */
  name: string;
  /** Its account on the national network (where a paid QR's money goes). */
  bakongAccountId: string;
  keys: { qr: string; gateway: string; gatewayLink: string };
  keyIds: { qr: string; gateway: string; gatewayLink: string };
  gatewayConfigId: string;
  linkConfigId: string;
}

export interface TenantOptions {
  /** Default "Test Shop". */
  name?: string;
  /** Default "test_shop@devb". */
  bakongAccountId?: string;
  /** Default the PayWay twin's KHR link on this service's port (demo mode's). */
  linkUrl?: string;
  linkCurrency?: number;
  /** The link configuration's page adapter (`payway`); unset: the default (the same). */
  linkProtocol?: string;
  gatewayMerchantId?: string;
  gatewaySecret?: string;
  /** One webhook endpoint per key on this receiver (all event kinds), its secret told to the receiver. */
  webhooks?: WebhookReceiver;
}

/**
 * A merchant with one key of each kind (and its gateway and link configurations), created through the admin
 * API of `t`: an in-process TestApp, or any running service (`adminOf(url)` in traffic.ts).
 */
export async function createTenant(t: Pick<TestApp, "admin" | "url">, opts: TenantOptions = {}): Promise<Tenant> {
  const name = opts.name ?? "Test Shop";
  const bakongAccountId = opts.bakongAccountId ?? "test_shop@devb";
  const { createMerchant: m } = await t.admin<{ createMerchant: { id: string } }>(
    `mutation($input: MerchantInput!) { createMerchant(input: $input) { id } }`,
    {
      input: {
        name,
        accountType: "merchant",
        bakongAccountId,
        merchantName: name.slice(0, 25),
        merchantCity: "Phnom Penh",
        merchantId: "TS001",
        acquiringBank: "Dev Bank",
        defaultCurrency: 840,
      },
    },
  );
  const { createGatewayConfig: g } = await t.admin<{ createGatewayConfig: { id: string } }>(
    `mutation($input: GatewayConfigInput!) { createGatewayConfig(input: $input) { id } }`,
    {
      input: {
        merchantId: m.id,
        name: "gw",
        upstreamMerchantId: opts.gatewayMerchantId ?? `m_${m.id.slice(-8)}`,
        apiSecret: opts.gatewaySecret ?? "sim-secret-0123456789",
      },
    },
  );
  const { createLinkConfig: l } = await t.admin<{ createLinkConfig: { id: string } }>(
    `mutation($input: LinkConfigInput!) { createLinkConfig(input: $input) { id } }`,
    {
      input: {
        merchantId: m.id,
        name: "link",
        url: opts.linkUrl ?? demoLinkUrl(t.url),
        currency: opts.linkCurrency ?? 116,
        ...(opts.linkProtocol === undefined ? {} : { protocol: opts.linkProtocol }),
      },
    },
  );
  const key = async (kind: string, extra: Record<string, string>) =>
    (
      await t.admin<{ createApiKey: { apiKey: string; key: { id: string } } }>(
        `mutation($input: ApiKeyInput!) { createApiKey(input: $input) { apiKey key { id } } }`,
        { input: { merchantId: m.id, kind, ...extra } },
      )
    ).createApiKey;
  const qr = await key("qr", {});
  const gw = await key("gateway", { gatewayConfigId: g.id });
  const gl = await key("gateway_link", { linkConfigId: l.id });
  const tenant: Tenant = {
    merchantId: m.id,
    name,
    bakongAccountId,
    keys: { qr: qr.apiKey, gateway: gw.apiKey, gatewayLink: gl.apiKey },
    keyIds: { qr: qr.key.id, gateway: gw.key.id, gatewayLink: gl.key.id },
    gatewayConfigId: g.id,
    linkConfigId: l.id,
  };
  const receiver = opts.webhooks;
  if (receiver !== undefined)
    for (const keyId of Object.values(tenant.keyIds)) {
      const { createWebhookEndpoint: w } = await t.admin<{ createWebhookEndpoint: { secret: string } }>(
        `mutation($i: WebhookEndpointInput!) { createWebhookEndpoint(input: $i) { secret } }`,
        { i: { apiKeyId: keyId, url: receiver.url(keyId) } },
      );
      receiver.setSecret(keyId, w.secret);
    }
  return tenant;
}

export const AUTH = {
  qr: (key: string) => ({ "x-api-key": key, "x-auth-type": "api-key" }),
  gateway: (key: string) => ({ "x-api-key": key, "x-auth-type": "api-gateway" }),
  gatewayLink: (key: string) => ({ "x-api-key": key, "x-auth-type": "api-gateway-link" }),
};

/** POST JSON to the service; returns status and parsed body. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  await checkRestAnswer(url, res.status, parsed, res.headers.get("content-type"));
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Completed runs of one of the app's jobs (the scheduler's job_runs_total, every outcome). */
export async function jobRuns(t: TestApp, job: string): Promise<number> {
  const { values } = await t.app.core.metrics.jobRuns.get();
  return values.filter((v) => v.labels.job === job).reduce((sum, v) => sum + v.value, 0);
}

/**
 * Waits until `job` has completed `n` more runs than now. The proof that time passed for a negative assertion
 * ("nothing changed", "asked only once"): those runs happened, however slow the machine.
 */
export async function moreJobRuns(t: TestApp, job: string, n: number, timeoutMs = 60_000): Promise<void> {
  const from = await jobRuns(t, job);
  await waitFor(async () => (await jobRuns(t, job)) >= from + n, timeoutMs, 100, `${n} more runs of ${job}`);
}

/** The transaction's count of consecutive failed checks (each fault the monitor met adds one). */
export async function checkFailures(t: TestApp, transactionId: string): Promise<number> {
  const [row] = await t.app.core.db.query<{ f: number }>(`select check_failures as f from "transaction" where id = ?`, [
    transactionId,
  ]);
  return Number(row.f);
}
