// Traffic against a running api process (the fault suites): the admin API at its URL, the three areas'
// client calls (generate) and payer actions (pay, fail, scan, approve, break) on the simulators, and what the
// service wrote, read from its database. Tenants come from createTenant (app.ts) through `adminOf`.

import { randomBytes } from "node:crypto";
import pg from "pg";
import { AUTH, type Tenant, type TestApp } from "./app.js";
import type { Area } from "../../src/transactions/transaction.entity.js";
import { ADMIN_TOKEN } from "./cluster.js";
import type { Upstreams } from "./upstreams.js";
import { checkRestAnswer } from "./openapi-contract.js";

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep text */
  }
  await checkRestAnswer(url, res.status, parsed);
  return { status: res.status, body: parsed };
}

export async function admin<T = Record<string, unknown>>(
  apiUrl: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<T> {
  const r = await postJson(`${apiUrl}/graphql`, { query, variables }, { authorization: `Bearer ${ADMIN_TOKEN}` });
  const json = r.body as { data?: T; errors?: { message: string }[] };
  if (r.status !== 200 || json.errors?.length)
    throw new Error(`admin GraphQL error (HTTP ${r.status}): ${JSON.stringify(json.errors ?? r.body)}`);
  return json.data as T;
}

/** The admin API of the service at `apiUrl` (the faults' admin token), as createTenant takes it. */
export function adminOf(apiUrl: string): Pick<TestApp, "admin" | "url"> {
  return { url: apiUrl, admin: (query, variables) => admin(apiUrl, query, variables) };
}

/** The service's own: an area is whatever the module list registers (src/module.ts). */
export type { Area } from "../../src/transactions/transaction.entity.js";
export type Outcome = "SUCCESS" | "FAILED" | "EXPIRED";

/** A transaction the test created, and the outcome the test drives it to. */
export interface Tracked {
  id: string;
  area: Area;
  tenant: Tenant;
  expect: Outcome;
  md5?: string;
  amount: string;
  orderId?: string;
  clientId?: string;
}

function ok<T>(what: string, r: { status: number; body: unknown }): T {
  if (r.status !== 200) throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as T;
}

export async function generateQr(apiUrl: string, t: Tenant, expect: Outcome, expiredAfter = 600_000): Promise<Tracked> {
  const amount = (1 + Math.floor(Math.random() * 9000) / 100).toFixed(2);
  const b = ok<{ transactionId: string; data: { md5: string } }>(
    "qr/generate",
    await postJson(
      `${apiUrl}/qr/generate`,
      { amount: Number(amount), currency: 840, expiredAfter, meta: { tenant: t.name } },
      AUTH.qr(t.keys.qr),
    ),
  );
  return { id: b.transactionId, area: "qr", tenant: t, expect, md5: b.data.md5, amount };
}

export async function generateGateway(apiUrl: string, t: Tenant, expect: Outcome): Promise<Tracked> {
  const amount = (1 + Math.floor(Math.random() * 9000) / 100).toFixed(2);
  const orderId = `o${randomBytes(8).toString("hex")}`;
  const b = ok<{ transactionId: string }>(
    "gateway/generate-qr",
    await postJson(
      `${apiUrl}/gateway/generate-qr`,
      { qrData: { orderId, amount: Number(amount), currency: "USD", lifetime: 10 }, metaData: { tenant: t.name } },
      AUTH.gateway(t.keys.gateway),
    ),
  );
  return { id: b.transactionId, area: "gateway", tenant: t, expect, orderId, amount };
}

export async function generateLink(apiUrl: string, t: Tenant, expect: Outcome): Promise<Tracked> {
  const amount = String(1000 + Math.floor(Math.random() * 90) * 100);
  const b = ok<{ transactionId: string; data: { clientId: string } }>(
    "gateway-link/generate-qr",
    await postJson(
      `${apiUrl}/gateway-link/generate-qr`,
      { amount: Number(amount), currency: 116, meta: { tenant: t.name } },
      AUTH.gatewayLink(t.keys.gatewayLink),
    ),
  );
  return { id: b.transactionId, area: "gateway_link", tenant: t, expect, clientId: b.data.clientId, amount };
}

/** The payer's side: pay or fail on the network, approve or decline at the gateway and on the PayWay twin. */
export async function settle(ups: Upstreams, tx: Tracked): Promise<void> {
  let r: { status: number; body: unknown };
  if (tx.area === "qr") {
    r =
      tx.expect === "SUCCESS"
        ? await ups.network.post("/sim/network/pay", {
            md5: tx.md5,
            toAccountId: tx.tenant.bakongAccountId,
            amount: tx.amount,
            currency: "USD",
          })
        : await ups.network.post("/sim/network/fail", { md5: tx.md5 });
  } else if (tx.area === "gateway") {
    r = await ups.gateway.post("/sim/gateway/pay", {
      tranId: tx.orderId,
      outcome: tx.expect === "SUCCESS" ? "APPROVED" : "DECLINED",
    });
  } else {
    r = await ups.link.post(tx.expect === "SUCCESS" ? "/sim/link/approve" : "/sim/link/decline", {
      clientId: tx.clientId,
    });
  }
  if (r.status !== 200)
    throw new Error(`settling ${tx.area} ${tx.id} (${tx.expect}): HTTP ${r.status} ${JSON.stringify(r.body)}`);
}

export async function scan(ups: Upstreams, tx: Tracked): Promise<void> {
  const r = await ups.link.post("/sim/link/scan", { clientId: tx.clientId });
  if (r.status !== 200) throw new Error(`scan ${tx.id}: HTTP ${r.status}`);
}

/** A direct connection to the service's database, for reading what the service wrote. */
export async function dbClient(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on("error", () => undefined); // a restarted server drops it; the caller reconnects
  await c.connect();
  return c;
}

export async function statuses(url: string, ids: string[]): Promise<Map<string, string>> {
  const c = await dbClient(url);
  try {
    const { rows } = await c.query<{ id: string; status: string }>(
      `select id, status from "transaction" where id = any($1)`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r.status]));
  } finally {
    await c.end();
  }
}
