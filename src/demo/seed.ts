import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MODULES, type App, type ModuleList } from "../app.js";
import type { DemoSeed, Module } from "../module.js";
import { writeFileAtomic } from "../db/data-dir.js";
import { WebhookEndpointService } from "../webhooks/endpoint-service.js";
import { webhooksModule } from "../webhooks/index.js";
import { DEMO_MERCHANT_NAME } from "../simulators/demo-upstreams.js";
import { loadDemos } from "./areas.js";

/** demo.json: its `keys` and `simulators` have a field per area with a demo seed (README: qr, gateway, gatewayLink). */
export interface DemoFile {
  baseUrl: string;
  adminToken: string;
  keys: Record<string, string>;
  webhook: { url: string; secret: string };
  simulators: Record<string, string>;
  /** Not among the documented demo.json fields; kept so a restart finds the same tenant. */
  ids?: Record<string, string>;
}

/** An area's seed with its running module (what its target is created through). */
interface Seeding {
  kind: string;
  seed: DemoSeed;
  module: Module;
}

/** The demo merchant's deeplink settings: its generic QRs carry a deeplink (issue 20). */
const DEMO_DEEPLINK = {
  deeplinkAppName: DEMO_MERCHANT_NAME,
  deeplinkAppIconUrl: "https://demo-coffee.example/icon.png",
  deeplinkCallback: "democoffee://payment-done",
};

/**
 * The demo tenant of `npm start`: a merchant, one key of each area of `modules` that has a demo seed (its
 * `demo.ts`), a webhook endpoint pointing at the built-in inbox; printed and written to DATA_DIR/demo.json.
 * Restarting reuses the same tenant and keys.
 *
 * `print` receives the banner (keys, URLs, what to try): commands.ts prints it on stdout; a test that seeds a demo
 * in its own process passes nothing, so its output stays the test runner's.
 */
export async function seedDemo(
  app: App,
  print: (banner: string) => void = () => undefined,
  modules: ModuleList = MODULES,
): Promise<DemoFile> {
  const { config, admin } = app.core;
  const webhooks = app.module(webhooksModule).endpoints;
  const seedings: Seeding[] = (await loadDemos(modules)).flatMap(({ def, demo }) =>
    demo.seed === undefined || def.area === undefined
      ? []
      : [{ kind: def.area.key.kind, seed: demo.seed, module: app.module(def) }],
  );
  const seeds = seedings.map((s) => s.seed);
  const file = join(config.dataDir, "demo.json");
  const base = app.url;
  const previous = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as DemoFile) : null;
  const existing = previous?.ids ? await admin.merchant(previous.ids.merchant) : null;
  let demo: DemoFile;
  if (previous?.ids && existing) {
    demo = { ...previous, baseUrl: base };
    // The port may differ from the last run: keep the tenant's URLs pointing at this process.
    const ids = previous.ids;
    for (const { seed, module } of seedings) await seed.refresh?.(module, ids, base);
    await webhooks.update(previous.ids.webhook, { url: `${base}/sim/inbox` });
    // Demo data from before deeplink settings existed gets them too.
    if (existing.deeplinkAppName === null) await admin.updateMerchant(existing.id, DEMO_DEEPLINK);
  } else {
    const merchant = await admin.createMerchant({
      name: DEMO_MERCHANT_NAME,
      accountType: "merchant",
      bakongAccountId: "demo_coffee@devb",
      merchantName: DEMO_MERCHANT_NAME,
      merchantCity: "Phnom Penh",
      merchantId: "DEMO001",
      acquiringBank: "Dev Bank",
      merchantCategoryCode: "5814",
      defaultCurrency: 840,
      ...DEMO_DEEPLINK,
    });
    const keys: Record<string, string> = {};
    const ids: Record<string, string> = { merchant: merchant.id };
    const secret = WebhookEndpointService.newSecret();
    const endpoints = [];
    for (const { kind, seed, module } of seedings) {
      const bound = (await seed.target?.(module, merchant.id, base)) ?? { input: {}, ids: {} };
      const key = await admin.createApiKey({
        merchantId: merchant.id,
        kind,
        label: seed.label,
        ...bound.input,
      });
      keys[seed.keyField] = key.plain;
      Object.assign(ids, bound.ids, { [seed.idField]: key.key.id });
      endpoints.push(await webhooks.create({ apiKeyId: key.key.id, url: `${base}/sim/inbox`, secret }));
    }
    ids.webhook = endpoints[0]?.endpoint.id ?? "";
    demo = {
      baseUrl: base,
      adminToken: "",
      keys,
      webhook: { url: `${base}/sim/inbox`, secret },
      simulators: simulatorUrls(seeds, base),
      ids,
    };
  }
  demo.adminToken = app.core.auth.adminTokenForDemo();
  demo.simulators = simulatorUrls(seeds, base);
  mkdirSync(config.dataDir, { recursive: true });
  // Only the process holding DATA_DIR's lock gets here (commands.ts seeds in serve's demo mode, which takes it), and
  // it replaces the file whole: the quick start's second terminal reads it at any moment.
  writeFileAtomic(file, JSON.stringify(demo, null, 2));
  print(banner(demo, file, seeds, app.adminUrl ?? base));
  return demo;
}

/** demo.json's `simulators`: where each area's simulated upstream is. */
function simulatorUrls(seeds: DemoSeed[], base: string): DemoFile["simulators"] {
  return Object.fromEntries(seeds.map((s) => [s.simulator.name, s.simulator.url(base)]));
}

/** `dashboard`: the origin the dashboard is served on (the operator listener's, with ADMIN_PORT). */
function banner(d: DemoFile, file: string, seeds: DemoSeed[], dashboard: string): string {
  const keys = d.keys;
  const tryIt = seeds.find((s) => s.tryIt !== undefined);
  const pays = seeds.flatMap((s) => (s.payHint === undefined ? [] : [s.payHint]));
  const lines = [
    "",
    "  Payment QR Service — demo mode (embedded simulators; nothing leaves this machine)",
    "",
    `  Start here                ${d.baseUrl}/`,
    `  REST API docs             ${d.baseUrl}/docs`,
    `  GraphQL / Apollo Sandbox  ${d.baseUrl}/graphql`,
    `  GraphiQL (offline)        ${d.baseUrl}/graphiql`,
    `  Dashboard                 ${dashboard}/dashboard`,
    `  Webhook inbox             ${d.baseUrl}/sim/inbox`,
    `  Admin token               ${d.adminToken}`,
    ...seeds.map((s) => `  ${s.bannerLabel.padEnd(25)} ${keys[s.keyField]}`),
    `  Webhook secret            ${d.webhook.secret}`,
    "",
    ...(tryIt?.tryIt?.(d.baseUrl, keys[tryIt.keyField] ?? "") ?? []).map((l, i) =>
      i === 0 ? `  Try: ${l}` : `  ${l}`,
    ),
    ...payLines(d.baseUrl, pays),
    `  All of this is in ${file}`,
    "",
  ];
  return `${lines.join("\n")}\n`;
}

/** The banner's "Pay on the simulators" lines: each area's hint, two to a line. */
function payLines(base: string, hints: string[]): string[] {
  if (hints.length === 0) return [];
  const rows: string[] = [];
  for (let i = 0; i < hints.length; i += 2) rows.push(hints.slice(i, i + 2).join(", "));
  const last = rows.length - 1;
  return rows.map((row, i) => {
    const text = i === last ? `${row} (all controls: docs/simulator-controls.md)` : `${row},`;
    return i === 0 ? `  Pay on the simulators: POST ${base}${text}` : `         ${text}`;
  });
}
