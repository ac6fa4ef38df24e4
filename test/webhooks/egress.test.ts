import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import { startReceiver } from "../support/webhook-receiver.js";
import { hostname } from "node:os";
import { checkTargetUrl, isPublicAddress } from "../../src/upstreams/egress.js";
import { waitFor } from "../support/wait.js";

/** The bypasses the review found (issue 16, finding 1), and addresses that must stay reachable. */
const REFUSED = [
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "::ffff:169.254.169.254",
  "169.254.169.254",
  "192.0.2.10",
  "198.18.0.1",
  "198.19.255.1",
  "224.0.0.1",
  "240.0.0.1",
  "255.255.255.255",
  "fe80::1",
  "fe90::1",
  "febf::1",
  "fec0::1",
  "64:ff9b::7f00:1",
  "64:ff9b::a9fe:a9fe",
  "::7f00:1",
  "::a9fe:a9fe",
  "2002:7f00:1::1",
  "2002:a9fe:a9fe::1",
  "0.0.0.0",
  "::",
  "::1",
  "10.1.2.3",
  "100.64.0.1",
  "fd00::1",
  "2001:db8::1",
];
const ALLOWED = ["8.8.8.8", "2606:4700:4700::1111", "64:ff9b::808:808", "2002:808:808::1"];

/**
 * Loopback as a URL's host may spell it (the finding: `localhost.` was accepted and then retried for 24 h). The
 * WHATWG parser turns the IPv4 and IPv6 spellings into the literals above; the names are the policy's to know.
 */
const LOOPBACK_SPELLINGS = [
  "localhost",
  "localhost.",
  "localhost..",
  "LOCALHOST",
  "LocalHost.",
  "foo.localhost",
  "foo.localhost.",
  "a.b.localhost",
  "localhost.localdomain",
  "localhost6",
  "ip6-localhost",
  "ip6-loopback",
  "127.1",
  "0x7f.1",
  "2130706433",
  "0x7f000001",
  "0177.0.0.1",
  "127.000.000.001",
  "127.0.0.1.",
  "0",
  "0.0.0.0",
  "[::1]",
  "[0:0:0:0:0:0:0:1]",
  "[::ffff:127.0.0.1]",
  "[::127.0.0.1]",
  "[::]",
];

const addEndpoint = (t: TestApp, apiKeyId: string, url: string) =>
  post(
    `${t.url}/graphql`,
    {
      query: `mutation($i: WebhookEndpointInput!) { createWebhookEndpoint(input: $i) { endpoint { id } } }`,
      variables: { i: { apiKeyId, url } },
    },
    { authorization: `Bearer ${ADMIN_TOKEN}` },
  ).then((r) => r.body as { data?: { createWebhookEndpoint: { endpoint: { id: string } } }; errors?: unknown[] });

/** An endpoint's deliveries as the admin API lists them. */
const deliveriesOf = async (t: TestApp, endpointId: string) =>
  (
    await t.admin<{ webhookDeliveries: { attempts: number; lastError: string | null }[] }>(
      `query($e: ID) { webhookDeliveries(endpointId: $e) { attempts lastError } }`,
      { e: endpointId },
    )
  ).webhookDeliveries;

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("the egress policy (ipaddr.js ranges, embedded IPv4 forms)", () => {
  it.each(REFUSED)("refuses %s", (a) => expect(isPublicAddress(a)).toBe(false));
  it.each(ALLOWED)("allows %s", (a) => expect(isPublicAddress(a)).toBe(true));
  it("refuses every spelling of loopback in a URL when strict, and none when private addresses are allowed", () => {
    const judged = (permissive: boolean) =>
      LOOPBACK_SPELLINGS.filter((h) => checkTargetUrl(`https://${h}:8443/hook`, { permissive }) === null);
    expect(judged(false)).toEqual([]);
    expect(judged(true)).toEqual(LOOPBACK_SPELLINGS);
    expect(checkTargetUrl("https://hooks.example.com./in", { permissive: false })).toBeNull();
    expect(checkTargetUrl("https://localhost.example.com/in", { permissive: false })).toBeNull();
  });
});

describe("webhook and payment-link egress in strict mode (production's default)", () => {
  let t: TestApp;
  let tenant: Tenant;
  // Both names: the earlier one is what the code before this policy read.
  const strict = { EGRESS_ALLOW_PRIVATE_URLS: "false", WEBHOOK_ALLOW_PRIVATE_URLS: "false" };
  beforeAll(async () => {
    t = await startTestApp(strict);
    tenant = await createTenant(t, { linkUrl: "https://8.8.8.8/p/shop" });
  });
  afterAll(async () => t?.stop());

  it("refuses every literal bypass at registration", async () => {
    const accepted: string[] = [];
    for (const a of REFUSED) {
      const host = a.includes(":") ? `[${a}]` : a;
      const r = await addEndpoint(t, tenant.keyIds.qr, `http://${host}:8080/hook`);
      if (!r.errors) accepted.push(a);
    }
    expect(accepted).toEqual([]);
  });

  it("refuses every spelling of loopback at registration, and a name that resolves to it", async () => {
    const accepted: string[] = [];
    // This machine's own name resolves to 127.0.0.1 through /etc/hosts.
    for (const host of [...LOOPBACK_SPELLINGS, hostname()]) {
      const r = await addEndpoint(t, tenant.keyIds.qr, `http://${host}:8080/hook`);
      if (!r.errors) accepted.push(host);
    }
    expect(accepted).toEqual([]);
  });

  /** Endpoints stored before the policy (or by a name): delivery is refused at connect time, coarsely logged. */
  it("does not deliver to loopback through a mapped address, a name or a closed port; the log says only 'refused'", async () => {
    const rx = await startReceiver(() => 204);
    const port = Number(new URL(rx.url()).port);
    const dead = await closedPort();
    const urls = [
      `http://[::ffff:127.0.0.1]:${port}/hook`, // the exact bypass: delivered with 204 before
      `http://vm:${port}/hook`, // this machine's name, which resolves to 127.0.0.1
      `http://[::ffff:127.0.0.1]:${dead}/hook`, // a closed port: must read like the open one
      `http://no-such-host.invalid:${port}/hook`, // DNS failure: fail closed, same text
    ];
    try {
      // Stored as an older release (or a permissive operator) would have: registered, then the URL set directly.
      const ids: string[] = [];
      for (const [i, url] of urls.entries()) {
        const r = await addEndpoint(t, tenant.keyIds.qr, `https://8.8.8.8/hook${i}`);
        const id = r.data!.createWebhookEndpoint.endpoint.id;
        await t.app.core.db.query(`update webhook_endpoint set url = ? where id = ?`, [url, id]);
        ids.push(id);
      }
      const g = await post(
        `${t.url}/qr/generate`,
        { amount: 1, currency: 840, expiredAfter: 60000 },
        AUTH.qr(tenant.keys.qr),
      );
      expect(g.status).toBe(200);
      const errors = async () => {
        const out: (string | null)[] = [];
        for (const id of ids) {
          const d = await deliveriesOf(t, id);
          out.push(d[0]?.attempts ? d[0].lastError : null);
        }
        return out;
      };
      await waitFor(async () => (await errors()).every((e) => e !== null), 15_000);
      expect(rx.received).toEqual([]);
      const texts = await errors();
      expect(new Set(texts).size).toBe(1);
      expect(texts[0]).toMatch(/^refused/);
    } finally {
      await rx.down();
    }
  });

  it("refuses a payment-link page on loopback, and does not drive one stored before", async () => {
    const r = await post(
      `${t.url}/graphql`,
      {
        query: `mutation($i: LinkConfigInput!) { createLinkConfig(input: $i) { id } }`,
        variables: {
          i: { merchantId: tenant.merchantId, name: "x", url: `${t.url}/sim/payway/ABAPAYDEMO01`, currency: 116 },
        },
      },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect((r.body as { errors?: { message: string }[] }).errors?.[0]?.message).toMatch(/url/);
    // A loopback page stored by an older release: generating from it fails without opening the page.
    await t.app.core.db.query(`update link_config set url = ? where id = ?`, [
      `${t.url}/sim/payway/ABAPAYDEMO01`,
      tenant.linkConfigId,
    ]);
    const g = await post(
      `${t.url}/gateway-link/generate-qr`,
      { amount: 100, currency: 116 },
      AUTH.gatewayLink(tenant.keys.gatewayLink),
    );
    expect(g.status).toBe(502);
  });
});

describe("permissive mode (the demo and test default) still reaches loopback", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t?.stop());

  it("delivers to a loopback receiver; the demo's own inbox and loopback names are accepted", async () => {
    const tenant = await createTenant(t);
    const rx = await startReceiver(() => 204);
    try {
      for (const url of [`${t.url}/sim/webhooks`, "http://localhost.:4000/hooks", `http://${hostname()}:4000/hooks`])
        expect((await addEndpoint(t, tenant.keyIds.qr, url)).errors).toBeUndefined();
      expect((await addEndpoint(t, tenant.keyIds.qr, rx.url())).errors).toBeUndefined();
      await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 60000 }, AUTH.qr(tenant.keys.qr));
      await waitFor(async () => rx.received.length >= 1, 10_000);
    } finally {
      await rx.down();
    }
  });

  it("never follows a redirect: a 307 is a failed attempt and its Location gets nothing", async () => {
    const tenant = await createTenant(t);
    const target = await startReceiver(() => 200);
    const redirecting = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: target.url() }).end();
    });
    await new Promise<void>((r) => redirecting.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hook`;
      const created = await addEndpoint(t, tenant.keyIds.qr, url);
      const id = created.data!.createWebhookEndpoint.endpoint.id;
      await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 60000 }, AUTH.qr(tenant.keys.qr));
      const first = async () => (await deliveriesOf(t, id))[0];
      await waitFor(async () => ((await first())?.attempts ?? 0) >= 1, 10_000);
      // The attempt is recorded as the 307 itself: a followed redirect would have reached the target within it.
      expect((await first())?.lastError).toBe("HTTP 307");
      expect(target.received).toEqual([]);
    } finally {
      redirecting.close();
      await target.down();
    }
  });
});
