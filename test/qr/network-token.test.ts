import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { startTestApp, createTenant, post, AUTH, ADMIN_TOKEN, type TestApp, type Tenant } from "../support/app.js";
import { qrModule } from "../../src/qr/index.js";
import { runAdminCli } from "../../src/admin/cli.js";
import { networkSim } from "../support/simulators.js";
import { waitFor } from "../support/wait.js";

// Issue 20, point 3: the network token is a JWT valid ~90 days; an expired one answers 401.

const DAY = 24 * 3600_000;

/** A token shaped like the network's (the simulator accepts it as configured, until its exp). */
function jwt(expiresInMs: number): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const exp = Math.floor((Date.now() + expiresInMs) / 1000);
  return `${part({ alg: "HS256", typ: "JWT" })}.${part({ data: { id: "t" }, exp })}.${randomBytes(16).toString("base64url")}`;
}

const expOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()) as { exp: number }).exp;

async function gql<T>(t: TestApp, query: string, variables: Record<string, unknown> = {}, auth = ADMIN_TOKEN) {
  const res = await fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${auth}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
}

async function payAndStatus(t: TestApp, tenant: Tenant) {
  const tx = (
    await post(`${t.url}/qr/generate`, { amount: 1, currency: 840, expiredAfter: 3_600_000 }, AUTH.qr(tenant.keys.qr))
  ).body as { transactionId: string; data: { md5: string } };
  await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5 });
  const status = async () =>
    ((await post(`${t.url}/qr/check`, { md5: tx.data.md5 }, AUTH.qr(tenant.keys.qr))).body as { status: string })
      .status;
  return { tx, status };
}

describe("network token: expiry exposed, replaced without a restart, in every process", () => {
  const initial = jwt(10 * DAY);
  let t: TestApp;
  let other: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({ NETWORK_API_TOKEN: initial });
    other = await startTestApp({ NETWORK_API_TOKEN: initial }, { dbUrl: t.dbUrl, role: "api" });
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await other?.stop().catch(() => undefined);
    await t?.stop();
  });

  it("reads the JWT's exp: metric, /readyz detail and the dashboard's warning (from 14 days before)", async () => {
    const metrics = await (
      await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    expect(metrics).toContain(`network_token_expires_at_seconds ${expOf(initial)}`);
    const ready = (await (await fetch(`${t.url}/readyz`)).json()) as {
      ok: boolean;
      details?: { networkToken?: { expiresAt: string; warning: string } };
    };
    expect(ready.ok).toBe(true); // informational: generating QRs still works
    expect(ready.details?.networkToken?.expiresAt).toBe(new Date(expOf(initial) * 1000).toISOString());
    expect(ready.details?.networkToken?.warning).toMatch(/expires .* \(in 10 days\)/);
    const status = await gql<{ networkToken: { source: string; warning: string | null } }>(
      t,
      "{ networkToken { source expiresAt warning } }",
    );
    expect(status.data?.networkToken).toMatchObject({
      source: "environment",
      warning: expect.stringMatching(/10 days/),
    });
    // Only the operator sees it.
    const byKey = await gql(t, "{ networkToken { source } }", {}, tenant.keys.qr);
    expect(byKey.errors?.[0].extensions?.code).toBe("UNAUTHENTICATED");
  });

  it("expired → payments stay PENDING (never unpaid); setNetworkToken → followed again, in the other process too", async () => {
    t.clock.advance(11 * DAY);
    const { tx, status } = await payAndStatus(t, tenant);
    await waitFor(async () => {
      const [row] = await t.app.core.db.query<{ f: number }>(
        `select check_failures as f from "transaction" where id = ?`,
        [tx.transactionId],
      );
      return row.f >= 1;
    }, 15_000);
    expect(await status()).toBe("PENDING");
    expect((await (await fetch(`${t.url}/readyz`)).json()).details.networkToken.warning).toMatch(/expired/);

    const fresh = (await post(`${t.url}/sim/network/token`, { expiresInMs: 90 * DAY })).body as { token: string };
    const bad = await gql(t, 'mutation { setNetworkToken(token: "x y") { source } }');
    expect(bad.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    const set = await gql<{ setNetworkToken: { source: string; expiresAt: string; warning: string | null } }>(
      t,
      "mutation($token: String!) { setNetworkToken(token: $token) { source expiresAt warning } }",
      { token: fresh.token },
    );
    expect(set.errors).toBeUndefined();
    expect(set.data?.setNetworkToken).toMatchObject({ source: "stored", warning: null });
    await waitFor(async () => (await status()) === "SUCCESS", 60_000);
    // The other process (same database) uses it at once, without a restart.
    await waitFor(async () => other.app.module(qrModule).token.current() === fresh.token, 5_000);
    // Stored encrypted.
    const [row] = await t.app.core.db.query<{ sealed: string }>(`select sealed from upstream_credential`);
    expect(row.sealed).not.toContain(fresh.token.slice(0, 20));
  });

  /** The admin CLI in this process, its output kept; `stdin` is what is piped to it. */
  const cli = async (args: string[], stdin = "") => {
    const lines: string[] = [];
    const [log, error] = [console.log, console.error];
    console.log = console.error = (s: string) => void lines.push(s);
    try {
      const code = await runAdminCli(args, { PQR_URL: t.url, ADMIN_TOKEN }, { stdin: Readable.from([stdin]) });
      return { code, text: lines.join("\n") };
    } finally {
      [console.log, console.error] = [log, error];
    }
  };

  it("the CLI replaces it too, reading it from standard input or a file, never from its arguments", async () => {
    const piped = (await post(`${t.url}/sim/network/token`, { expiresInMs: 90 * DAY })).body as { token: string };
    expect((await cli(["network-token:set"], `${piped.token}\n`)).code).toBe(0);
    expect(t.app.module(qrModule).token.current()).toBe(piped.token);
    await waitFor(async () => other.app.module(qrModule).token.current() === piped.token, 5_000);

    const filed = (await post(`${t.url}/sim/network/token`, { expiresInMs: 90 * DAY })).body as { token: string };
    const dir = mkdtempSync(join(tmpdir(), "pqr-token-"));
    try {
      writeFileSync(join(dir, "token"), `${filed.token}\n`, { mode: 0o600 });
      expect((await cli(["network-token:set", "--file", join(dir, "token")])).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(t.app.module(qrModule).token.current()).toBe(filed.token);

    // On the command line (readable in /proc/<pid>/cmdline by any user): refused, saying how to pass it.
    const argued = (await post(`${t.url}/sim/network/token`, { expiresInMs: 90 * DAY })).body as { token: string };
    const refused = await cli(["network-token:set", "--token", argued.token]);
    expect(refused.code).toBe(2);
    expect(refused.text).toMatch(/does not take --token.*standard input.*--file PATH/s);
    expect(t.app.module(qrModule).token.current()).toBe(filed.token);
    // Nothing piped: refused too.
    expect(await cli(["network-token:set"], "")).toMatchObject({ code: 2, text: expect.stringMatching(/no token/) });
  });
});

describe("network token: automatic renewal with NETWORK_API_EMAIL", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({ NETWORK_API_TOKEN: jwt(30 * DAY), NETWORK_API_EMAIL: "renewals@merchant.example" });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  it("a 401 renews once and the check goes on; a renewal that fails is not retried for the same token", async () => {
    const sim = networkSim(t.app);
    t.clock.advance(31 * DAY);
    const first = await payAndStatus(t, tenant);
    await waitFor(async () => (await first.status()) === "SUCCESS", 15_000);
    expect(sim.state.renewals.calls).toBe(1);
    expect(t.app.module(qrModule).token.status().source).toBe("stored");

    // The renewed token expires too, and now renewal is broken: one attempt, then faults (no loop).
    await post(`${t.url}/sim/network/token`, { renewalWorks: false });
    t.clock.advance(91 * DAY);
    const second = await payAndStatus(t, tenant);
    await waitFor(async () => {
      const [row] = await t.app.core.db.query<{ f: number }>(
        `select check_failures as f from "transaction" where id = ?`,
        [second.tx.transactionId],
      );
      return row.f >= 3;
    }, 30_000);
    expect(sim.state.renewals.calls).toBe(2);
    expect(await second.status()).toBe("PENDING");
  });

  it("ahead of expiry (within 14 days) the scheduled job renews, at most once a day", async () => {
    const sim = networkSim(t.app);
    const token = t.app.module(qrModule).token;
    const soon = (await post(`${t.url}/sim/network/token`, { expiresInMs: 10 * DAY, renewalWorks: true })).body as {
      token: string;
    };
    await token.replace(soon.token, "operator");
    const calls = sim.state.renewals.calls;
    await token.renewAhead();
    expect(sim.state.renewals.calls).toBe(calls + 1);
    expect(token.current()).not.toBe(soon.token);
    expect(token.status().warning).toBeNull();
    await token.renewAhead();
    expect(sim.state.renewals.calls).toBe(calls + 1);
  });
});
