import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createApp, MODULES, restOpenApi, schemaSdl } from "../../src/app.js";
import { ConfigError } from "../../src/config.js";
import { verifyWebhook } from "../../src/index.js";
import { withDemo, seedDemo, type DemoModule } from "../../src/demo/index.js";
import type { ModuleDefinition } from "../../src/module.js";
import { startTestApp, post, AUTH, ADMIN_TOKEN, type TestApp } from "../support/app.js";
import { waitFor } from "../support/wait.js";
import { startReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { subscribe } from "../support/ws.js";
import type { TerminalSimulator } from "../fixtures/fourth-area/simulator.js";
import { terminalModule } from "../fixtures/fourth-area/index.js";

/**
 * An area is a registration (docs/architecture.md, "Adding a fourth area"): a fourth upstream area, defined in
 * test/fixtures/fourth-area/ with its own key kind bound to its own configurations, x-auth-type, migrations, REST
 * path, GraphQL resolvers, monitor, Idempotency-Key, upstream client and demo part (its simulator, its seed), joins
 * the module list and works end to end with no file of src/ changed for it.
 */
const TERMINAL = (key: string) => ({ "x-api-key": key, "x-auth-type": "api-terminal" });
const ONE = `subscription($id: ID!) { transactionUpdated(transactionId: $id) {
  id type transaction { transactionId area status } } }`;
type One = { transactionUpdated: { id: string; type: string; transaction: { area: string; status: string } } };
type Charge = { transactionId: string; chargeId: string; status: string; amount: string };

describe("a fourth area, added by one line of the module list", () => {
  let upstream: TerminalSimulator;
  let t: TestApp;
  let terminalConfigId: string;
  let receiver: WebhookReceiver;
  let merchantId: string;
  let key: string;
  let keyId: string;
  let secret: string;
  const modules = [...MODULES, terminalModule];

  const createKey = async (kind: string) =>
    (
      await t.admin<{ createApiKey: { apiKey: string; key: { id: string; kind: string } } }>(
        `mutation($i: ApiKeyInput!) { createApiKey(input: $i) { apiKey key { id kind } } }`,
        { i: { merchantId, kind } },
      )
    ).createApiKey;
  /** A terminal key, bound to a terminal: the admin API's createApiKey takes the field the area's key target names. */
  const createTerminalKey = async (terminalConfigId: string, merchant = merchantId) => {
    const { createApiKey: created } = await t.admin<{
      createApiKey: { apiKey: string; key: { id: string; kind: string; terminalConfigId: string } };
    }>(`mutation($i: ApiKeyInput!) { createApiKey(input: $i) { apiKey key { id kind terminalConfigId } } }`, {
      i: { merchantId: merchant, kind: "terminal", terminalConfigId },
    });
    expect(created.key.terminalConfigId).toBe(terminalConfigId);
    return created;
  };
  const createTerminal = async (upstreamTerminalId: string, merchant = merchantId) =>
    (
      await t.admin<{ createTerminalConfig: { id: string } }>(
        `mutation($i: TerminalConfigInput!) { createTerminalConfig(input: $i) { id } }`,
        { i: { merchantId: merchant, name: `Till ${upstreamTerminalId}`, upstreamTerminalId } },
      )
    ).createTerminalConfig.id;
  const terminalKey = async () => (await createTerminalKey(terminalConfigId)).apiKey;
  const graphql = async <T>(query: string, variables: Record<string, unknown>, headers: Record<string, string>) => {
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    // The throttle is on (120 a minute: a burst of 30 per credential) so the new area's path can be seen throttled.
    // The area's own settings come from the environment like any other (its module reads them). Simulators are on:
    // demo mode's module, built from the same list, starts the area's simulator (its demo.ts), which its client calls.
    const withItsDemo = await withDemo(modules);
    t = await startTestApp(
      { RATE_LIMIT_PER_MINUTE: "120", TERMINAL_MONITOR_INTERVAL_MS: "300" },
      { modules: withItsDemo },
    );
    const demo = t.app.module(withItsDemo[0] as ModuleDefinition<never, DemoModule, unknown>);
    upstream = demo.simulators.terminal as TerminalSimulator;
    const { createMerchant } = await t.admin<{ createMerchant: { id: string } }>(
      `mutation($i: MerchantInput!) { createMerchant(input: $i) { id } }`,
      {
        i: {
          name: "Terminal Shop",
          accountType: "merchant",
          bakongAccountId: "terminal_shop@devb",
          merchantName: "Terminal Shop",
          merchantCity: "Phnom Penh",
          merchantId: "TM001",
          acquiringBank: "Dev Bank",
          defaultCurrency: 840,
        },
      },
    );
    merchantId = createMerchant.id;
    terminalConfigId = await createTerminal("T-100");
    const created = await createTerminalKey(terminalConfigId);
    key = created.apiKey;
    keyId = created.key.id;
    const { createWebhookEndpoint } = await t.admin<{ createWebhookEndpoint: { secret: string } }>(
      `mutation($i: WebhookEndpointInput!) { createWebhookEndpoint(input: $i) { secret } }`,
      { i: { apiKeyId: keyId, url: receiver.url() } },
    );
    secret = createWebhookEndpoint.secret;
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await receiver?.down();
  });

  it("the admin API issues keys of the new kind (its own tag), and the schema and OpenAPI list it", async () => {
    expect(key).toMatch(/^pqr_tm_/);
    const kinds = await t.admin<{ __type: { enumValues: { name: string }[] } }>(
      `{ __type(name: "KeyKind") { enumValues { name } } }`,
    );
    expect(kinds.__type.enumValues.map((v) => v.name)).toEqual(["qr", "gateway", "gateway_link", "terminal"]);
    const doc = (await restOpenApi(modules)) as {
      paths: Record<
        string,
        { post: { parameters: { name: string; schema: { const?: string } }[]; security: unknown } }
      >;
      tags: { name: string }[];
    };
    const op = doc.paths["/terminal/charge"]?.post;
    expect(op?.parameters.find((p) => p.name === "x-auth-type")?.schema.const).toBe("api-terminal");
    expect(op?.security).toEqual([{ terminalKey: [] }]);
    expect(doc.tags.map((tag) => tag.name)).toContain("terminal");
    // Derived per module list: the default schema and document stay as committed, without the fourth area.
    // (test/graphql/schema.test.ts holds the default schema to the committed file.)
    const standard = await schemaSdl();
    expect(standard).not.toMatch(/TerminalCharge|^ {2}terminal$/m);
    expect(standard).toMatch(/enum Area \{\n {2}qr\n {2}gateway\n {2}gateway_link\n\}/);
    expect(await schemaSdl(modules)).toMatch(/enum Area \{\n {2}qr\n {2}gateway\n {2}gateway_link\n {2}terminal\n\}/);
    expect(((await restOpenApi()) as { paths: Record<string, unknown> }).paths["/terminal/charge"]).toBeUndefined();
  });

  it("generate (REST and GraphQL) → its monitor asks its upstream → SUCCESS → signed webhook and subscription", async () => {
    const rest = await post(`${t.url}/terminal/charge`, { amount: 4.2, currency: "USD" }, TERMINAL(key));
    expect(rest.status).toBe(200);
    const charge = rest.body as Charge;
    expect(charge).toMatchObject({ status: "PENDING", amount: "4.20" });
    // Opened on the key's terminal (its configuration), through the area's upstream client.
    expect(upstream.charges.get(charge.chargeId)).toMatchObject({
      status: "PENDING",
      currency: "USD",
      terminalId: "T-100",
      reference: charge.transactionId,
    });
    const viaGraphql = await graphql<{ terminalCharge: Charge }>(
      `
        mutation ($i: TerminalChargeInput!) {
          terminalCharge(input: $i) {
            transactionId
            chargeId
            status
          }
        }
      `,
      { i: { amount: 1, currency: "KHR" } },
      TERMINAL(key),
    );
    expect(viaGraphql.errors).toBeUndefined();
    expect(viaGraphql.data?.terminalCharge.status).toBe("PENDING");
    // The area's own migration made its table; the charge is recorded there.
    const rows = await t.app.core.db.query<{ charge_id: string }>(
      `select charge_id from terminal_charge where transaction_ref = ?`,
      [charge.transactionId],
    );
    expect(rows).toEqual([{ charge_id: charge.chargeId }]);

    // Subscribed while PENDING (the monitor asks the upstream while the card is not tapped); then the card holder pays.
    const { sub } = subscribe<One>(t.url, TERMINAL(key), ONE, { id: charge.transactionId });
    const asked = upstream.statusCalls;
    await waitFor(async () => upstream.statusCalls > asked, 10_000);
    expect(upstream.pay(charge.transactionId)).toBe(true);

    const status = async () =>
      (
        await graphql<{ terminalChargeStatus: Charge }>(
          `
            query ($id: ID!) {
              terminalChargeStatus(transactionId: $id) {
                status
              }
            }
          `,
          { id: charge.transactionId },
          TERMINAL(key),
        )
      ).data?.terminalChargeStatus.status;
    await waitFor(async () => (await status()) === "SUCCESS", 15_000);
    // Through the one transition: its event is in the outbox.
    const events = await t.app.core.db.query<{ type: string; status: string }>(
      `select type, status from transaction_event where transaction_ref = ? order by seq`,
      [charge.transactionId],
    );
    expect(events).toEqual([
      { type: "payment.created", status: "PENDING" },
      { type: "payment.completed", status: "SUCCESS" },
    ]);

    const hook = await waitFor(
      async () =>
        receiver.received.find((r) => {
          const b = JSON.parse(r.body) as { type: string; data: { transaction: { transactionId: string } } };
          return b.type === "payment.completed" && b.data.transaction.transactionId === charge.transactionId;
        }),
      15_000,
    );
    expect(verifyWebhook(hook.body, hook.headers, secret)).toBe(true);
    expect(verifyWebhook(hook.body.replace("SUCCESS", "FAILED"), hook.headers, secret)).toBe(false);
    expect(JSON.parse(hook.body).data.transaction).toMatchObject({ area: "terminal", status: "SUCCESS" });

    // The operators' reconciliation export knows the new area (its filter takes the module list's areas).
    const csv = await fetch(
      `${t.url}/admin/export/transactions.csv?from=2000-01-01&to=2100-01-01&area=terminal&status=SUCCESS`,
      { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
    );
    expect(csv.status).toBe(200);
    expect(await csv.text()).toContain(charge.transactionId);
    const unknown = await fetch(`${t.url}/admin/export/transactions.csv?from=2000-01-01&to=2100-01-01&area=nope`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(unknown.status).toBe(400);

    await waitFor(async () => sub.events.some((e) => e.transactionUpdated.transaction.status === "SUCCESS"), 10_000);
    await sub.done;
    sub.close();
    expect(sub.error).toBeNull();
    expect(sub.events.at(-1)?.transactionUpdated).toMatchObject({
      type: "payment.completed",
      transaction: { area: "terminal", status: "SUCCESS" },
    });
  }, 60_000);

  it("reads the area's settings from the environment: a missing one stops the start naming it", async () => {
    // Read before anything starts (no database, no listener): the same config without simulators, an environment
    // without its upstream's address (with simulators it defaults to its simulator's).
    const config = { ...t.app.core.config, simulators: false };
    const started = createApp(config, { modules: [terminalModule], env: { TERMINAL_MONITOR_INTERVAL_MS: "300" } });
    await expect(started).rejects.toThrow(new ConfigError("TERMINAL_API_URL is required"));
    const bad = createApp(config, { modules: [terminalModule], env: { TERMINAL_API_URL: "ftp://terminal.example" } });
    await expect(bad).rejects.toThrow(/^TERMINAL_API_URL must use http: or https:, got "ftp:"$/);
  });

  it("refuses a key of another kind on the new area's path, in REST and GraphQL", async () => {
    const qr = await createKey("qr");
    const rest = await post(`${t.url}/terminal/charge`, { amount: 1, currency: "USD" }, AUTH.qr(qr.apiKey));
    expect(rest.status).toBe(401);
    expect((rest.body as { error: { message: string } }).error.message).toBe(
      "This API key is for /qr/* (x-auth-type: api-key); /terminal/* needs a key of its own kind, " +
        "sent with x-auth-type: api-terminal",
    );
    const wrongType = await post(
      `${t.url}/terminal/charge`,
      { amount: 1, currency: "USD" },
      {
        "x-api-key": qr.apiKey,
        "x-auth-type": "api-terminal",
      },
    );
    expect(wrongType.status).toBe(401);
    const gql = await graphql(
      `
        mutation {
          terminalCharge(input: { amount: 1, currency: "USD" }) {
            transactionId
          }
        }
      `,
      {},
      AUTH.qr(qr.apiKey),
    );
    expect(gql.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    expect(gql.errors?.[0]?.message).toBe(
      "This API key is for the qr area; this operation needs a key of its own kind, sent with x-auth-type: api-terminal",
    );
    // And the new kind's key opens nothing of the other areas.
    expect((await post(`${t.url}/qr/verify`, { qrData: "x" }, TERMINAL(key))).status).toBe(401);
  });

  it("throttles the new area's REST path per credential (its prefix comes from its module definition)", async () => {
    const own = await terminalKey();
    const answers: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 45 && !answers.includes(429); i++) {
      // A body the path refuses (400) is still a request charged to the key's bucket.
      const r = await post(`${t.url}/terminal/charge`, {}, TERMINAL(own));
      answers.push(r.status);
      if (r.status === 429) retryAfter = r.headers.get("retry-after");
    }
    expect(answers).toContain(429);
    expect(answers.indexOf(429)).toBeGreaterThanOrEqual(25);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // Another credential has its own bucket.
    expect((await post(`${t.url}/terminal/charge`, { amount: 1, currency: "USD" }, TERMINAL(key))).status).toBe(200);
  });

  it("binds its keys to one of its configurations (the key target), checked by the admin API", async () => {
    // The admin API's createApiKey knows the kind, and that its keys need a terminal.
    const unbound = await graphql<unknown>(
      `
        mutation ($i: ApiKeyInput!) {
          createApiKey(input: $i) {
            apiKey
          }
        }
      `,
      { i: { merchantId, kind: "terminal" } },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(JSON.stringify(unbound.errors)).toMatch(/terminalConfigId.*is required for a terminal key/);
    const refuse = (id: string) =>
      graphql<unknown>(
        `
          mutation ($i: ApiKeyInput!) {
            createApiKey(input: $i) {
              apiKey
            }
          }
        `,
        { i: { merchantId, kind: "terminal", terminalConfigId: id } },
        { authorization: `Bearer ${ADMIN_TOKEN}` },
      ).then((r) => JSON.stringify(r.errors));
    // Another merchant's terminal is not this merchant's to bind.
    const { createMerchant: other } = await t.admin<{ createMerchant: { id: string } }>(
      `mutation($i: MerchantInput!) { createMerchant(input: $i) { id } }`,
      {
        i: {
          name: "Other",
          accountType: "merchant",
          bakongAccountId: "other@devb",
          merchantName: "Other",
          merchantCity: "Phnom Penh",
          merchantId: "TM002",
          acquiringBank: "Dev Bank",
          defaultCurrency: 840,
        },
      },
    );
    expect(await refuse(await createTerminal("T-200", other.id))).toMatch(
      /Terminal configuration not found for this merchant/,
    );
    const listed = await t.admin<{ terminalConfigs: { id: string; upstreamTerminalId: string }[] }>(
      `query($m: ID) { terminalConfigs(merchantId: $m) { id upstreamTerminalId } }`,
      { m: merchantId },
    );
    expect(listed.terminalConfigs).toEqual([{ id: terminalConfigId, upstreamTerminalId: "T-100" }]);
  });

  it("answers a retry with the same Idempotency-Key once, and refuses the key with another body", async () => {
    const own = await terminalKey();
    const send = (body: unknown) =>
      post(`${t.url}/terminal/charge`, body, { ...TERMINAL(own), "idempotency-key": "till-42" });
    const first = await send({ amount: 3, currency: "USD" });
    const again = await send({ amount: 3, currency: "USD" });
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const opened = [...upstream.charges.values()].filter((c) => c.reference === (first.body as Charge).transactionId);
    expect(opened).toHaveLength(1);
    const other = await send({ amount: 4, currency: "USD" });
    expect(other.status).toBe(409);
    expect((other.body as { error: { code: string } }).error.code).toBe("IDEMPOTENCY_CONFLICT");
  });

  it("calls its upstream through the shared client: a refusal is UPSTREAM_UNAVAILABLE naming the terminal API", async () => {
    const off = await createTerminal("T-OFF-1");
    const { apiKey } = await createTerminalKey(off);
    const res = await graphql<unknown>(
      `
        mutation {
          terminalCharge(input: { amount: 1, currency: "USD" }) {
            transactionId
          }
        }
      `,
      {},
      TERMINAL(apiKey),
    );
    expect(res.errors?.[0]).toMatchObject({
      message: "terminal API /charges: HTTP 503",
      extensions: { code: "UPSTREAM_UNAVAILABLE", upstream: "terminal", reason: "HTTP_STATUS" },
    });
  });

  it("has a demo part and seed of its own: its controls on the dashboard, its key in the demo tenant", async () => {
    const config = (await (await fetch(`${t.url}/dashboard/config.json`)).json()) as {
      controls: Record<string, { label: string; path: string }[]>;
    };
    expect(config.controls.terminal).toEqual([
      { label: "Tap card", path: "terminal/pay", fields: { reference: "transactionId" } },
    ]);
    const demo = await seedDemo(t.app, undefined, modules);
    expect(demo.keys.terminal).toMatch(/^pqr_tm_/);
    expect(demo.simulators.terminal).toBe(`${t.url}/sim/terminal-api`);
    const charged = await post(
      `${t.url}/terminal/charge`,
      { amount: 2, currency: "KHR" },
      TERMINAL(demo.keys.terminal),
    );
    expect(charged.status).toBe(200);
    const { transactionId, chargeId } = charged.body as Charge;
    expect(upstream.charges.get(chargeId)?.terminalId).toBe("T-DEMO-01");
    // The dashboard's button: the control's body takes the transaction's field it names.
    const tap = await post(`${t.url}/sim/terminal/pay`, { reference: transactionId }, {});
    expect(tap.status).toBe(200);
    const statusOf = async () =>
      (
        await t.app.core.db.query<{ status: string }>(`select status from "transaction" where id = ?`, [transactionId])
      )[0]?.status;
    await waitFor(async () => (await statusOf()) === "SUCCESS", 15_000);
  });
});
