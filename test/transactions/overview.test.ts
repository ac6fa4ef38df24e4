import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import {
  startTestApp,
  createTenant,
  post,
  AUTH,
  ADMIN_TOKEN,
  EMBEDDED_START_MS,
  type TestApp,
  type Tenant,
} from "../support/app.js";
import { waitFor } from "../support/wait.js";
import { overviewFigures, type Counts } from "../../src/transactions/overview.js";

/**
 * The operators' overview against a scripted day on a real PostgreSQL: payments paid, failed, expired, left
 * pending and paid late, in USD and KHR, for two merchants in two areas. The expected figures come from the
 * script (what each payment was made to become), not from the code under test; the webhook figures from SQL
 * of the test's own.
 */

type Outcome = "paid" | "failed" | "expired" | "pending" | "late";
interface Scripted {
  id: string;
  merchant: "alpha" | "beta";
  area: "qr" | "gateway";
  currency: "USD" | "KHR";
  amount: number;
  outcome: Outcome;
  createdAt?: number;
}

const COUNTS = "payments paid failed expired pending late finished successRate";
const QUERY = `query($from: DateTimeISO!, $to: DateTimeISO!, $merchantId: ID, $area: Area) {
  overview(from: $from, to: $to, merchantId: $merchantId, area: $area) {
    bucket timeZone totals { ${COUNTS} }
    currencies { currency paidAmount counts { ${COUNTS} } series { start paidAmount counts { ${COUNTS} } } }
    merchants { id name counts { ${COUNTS} } paid { currency count amount } }
    areas { id name counts { ${COUNTS} } paid { currency count amount } }
    webhooks { delivered retrying failed failingEndpoints disabledEndpoints p95LatencyMs } } }`;

interface Overview {
  bucket: string;
  timeZone: string;
  totals: Counts;
  currencies: {
    currency: string;
    paidAmount: string;
    counts: Counts;
    series: { start: string; paidAmount: string; counts: Counts }[];
  }[];
  merchants: {
    id: string;
    name: string | null;
    counts: Counts;
    paid: { currency: string; count: number; amount: string }[];
  }[];
  areas: {
    id: string;
    name: string | null;
    counts: Counts;
    paid: { currency: string; count: number; amount: string }[];
  }[];
  webhooks: {
    delivered: number;
    retrying: number;
    failed: number;
    failingEndpoints: number;
    disabledEndpoints: number;
    p95LatencyMs: number | null;
  };
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Expected counts of a set of scripted payments. */
function expectCounts(list: Scripted[]): Counts {
  const n = (o: Outcome[]) => list.filter((p) => o.includes(p.outcome)).length;
  const paid = n(["paid", "late"]);
  const finished = paid + n(["failed", "expired"]);
  return {
    payments: list.length,
    paid,
    failed: n(["failed"]),
    expired: n(["expired"]),
    pending: n(["pending"]),
    late: n(["late"]),
    finished,
    successRate: finished === 0 ? null : paid / finished,
  };
}

/** Sum of the paid amounts in cents (USD) or riel (KHR), written as the money rule writes it. */
function expectPaid(list: Scripted[], currency: "USD" | "KHR"): string {
  const units = list
    .filter((p) => p.currency === currency && (p.outcome === "paid" || p.outcome === "late"))
    .reduce((s, p) => s + Math.round(p.amount * (currency === "USD" ? 100 : 1)), 0);
  return currency === "USD" ? `${Math.floor(units / 100)}.${String(units % 100).padStart(2, "0")}` : String(units);
}

/** Midnight in Phnom Penh of the local day holding `t` (+ `days`), computed with Intl, not the code under test. */
function phnomPenhMidnight(t: number, days = 0): number {
  const local = new Intl.DateTimeFormat("en-CA", { timeZone: "Asia/Phnom_Penh", dateStyle: "short" }).format(t);
  return Date.parse(`${local}T00:00:00+07:00`) + days * DAY;
}

describe("overview: the operators' figures of a scripted day", () => {
  let t: TestApp;
  let alpha: Tenant;
  let beta: Tenant;
  const script: Scripted[] = [];
  let n = 0;

  const gql = async (query: string, variables: Record<string, unknown>, headers: Record<string, string>) => {
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as {
      data?: { overview: Overview };
      errors?: { message: string; extensions: { code: string; details?: { field: string }[] } }[];
    };
  };
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const overview = async (vars: Record<string, unknown>) => {
    const r = await gql(QUERY, vars, admin);
    expect(r.errors).toBeUndefined();
    return r.data!.overview;
  };
  const qrStatus = async (md5: string) =>
    ((await post(`${t.url}/qr/check`, { md5 }, AUTH.qr(alpha.keys.qr))).body as { status: string }).status;
  const gwStatus = async (transactionId: string) =>
    (
      (await post(`${t.url}/gateway/check-status`, { transactionId }, AUTH.gateway(beta.keys.gateway))).body as {
        status: string;
      }
    ).status;

  const qr = async (amount: number, currency: 840 | 116, outcome: Outcome, expiredAfter = 60_000) => {
    const r = (await post(`${t.url}/qr/generate`, { amount, currency, expiredAfter }, AUTH.qr(alpha.keys.qr))).body as {
      transactionId: string;
      data: { md5: string };
    };
    const p: Scripted = {
      id: r.transactionId,
      merchant: "alpha",
      area: "qr",
      currency: currency === 840 ? "USD" : "KHR",
      amount,
      outcome,
    };
    script.push(p);
    return r.data.md5;
  };
  const gateway = async (amount: number, currency: "USD" | "KHR", outcome: Outcome, lifetime = 60) => {
    const r = (
      await post(
        `${t.url}/gateway/generate-qr`,
        { qrData: { orderId: `ov-${Date.now().toString(36)}-${n++}`, amount, currency, lifetime } },
        AUTH.gateway(beta.keys.gateway),
      )
    ).body as { transactionId: string; orderId: string };
    script.push({ id: r.transactionId, merchant: "beta", area: "gateway", currency, amount, outcome });
    return r;
  };

  beforeAll(async () => {
    t = await startTestApp({
      QR_EXPIRY_GRACE_MS: "30000",
      QR_LATE_WATCH_MS: "3600000",
      QR_LATE_CHECK_INTERVAL_MS: "500",
    });
    alpha = await createTenant(t, { name: "Alpha Shop" });
    beta = await createTenant(t, {
      name: "Beta Store",
      gatewayMerchantId: "ov_gw_beta",
      gatewaySecret: "ov-gw-secret-0123456789",
    });
    await post(`${t.url}/sim/gateway/merchants`, { merchantId: "ov_gw_beta", apiKey: "ov-gw-secret-0123456789" });
    // Alpha's QR key delivers to the demo inbox (delivered) and to a closed port (retrying, endpoint failing).
    for (const url of [`${t.url}/sim/inbox`, "http://127.0.0.1:9/hook"])
      await t.admin(`mutation($input: WebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret } }`, {
        input: { apiKeyId: alpha.keyIds.qr, url },
      });

    // The script. Alpha (generic QR): paid in both currencies, failed, expired, and a late payment.
    const paidUsd = await qr(2.5, 840, "paid");
    const paidKhr = await qr(4000, 116, "paid");
    const failed = await qr(1000, 116, "failed");
    await qr(1.25, 840, "expired");
    const late = await qr(3, 840, "late");
    for (const md5 of [paidUsd, paidKhr]) await post(`${t.url}/sim/network/pay`, { md5 });
    await post(`${t.url}/sim/network/fail`, { md5: failed });
    // Sent before the expiry, recorded by the network two minutes later: EXPIRED first, then a late SUCCESS.
    await post(`${t.url}/sim/network/pay`, { md5: late, acknowledgeAfterMs: 120_000 });
    await waitFor(
      async () => (await qrStatus(paidUsd)) === "SUCCESS" && (await qrStatus(paidKhr)) === "SUCCESS",
      20_000,
    );
    await waitFor(async () => (await qrStatus(failed)) === "FAILED", 20_000);

    // Beta (hosted gateway): approved, declined, one left open and one whose expiry passes unread.
    const approved = await gateway(10.5, "USD", "paid");
    const declined = await gateway(1000, "KHR", "failed");
    await gateway(5, "USD", "expired", 3);
    await post(`${t.url}/sim/gateway/pay`, { tranId: approved.orderId, outcome: "APPROVED" });
    await post(`${t.url}/sim/gateway/pay`, { tranId: declined.orderId, outcome: "DECLINED" });
    await waitFor(async () => (await gwStatus(approved.transactionId)) === "SUCCESS", 20_000);
    await waitFor(async () => (await gwStatus(declined.transactionId)) === "FAILED", 20_000);

    t.clock.advance(61_000);
    await waitFor(async () => (await qrStatus(late)) === "EXPIRED", 20_000);
    t.clock.advance(60_000);
    await waitFor(async () => (await qrStatus(late)) === "SUCCESS", 20_000);
    // Past the 3-minute gateway payment's expiry (whether the monitor or a read ends it, it counts as EXPIRED).
    t.clock.advance(60_000);
    // Created now, open for an hour: still pending when read.
    await gateway(7.75, "USD", "pending");
    await gateway(2500, "KHR", "pending");

    const { transactions } = await t.admin<{ transactions: { edges: { node: { id: string; createdAt: string } }[] } }>(
      `{ transactions(first: 100) { edges { node { id createdAt } } } }`,
    );
    for (const e of transactions.edges) {
      const p = script.find((s) => s.id === e.node.id);
      if (p) p.createdAt = Date.parse(e.node.createdAt);
    }
    expect(script.filter((p) => p.createdAt === undefined)).toEqual([]);
  }, 120_000);
  afterAll(async () => t?.stop());

  it("per currency: counts, exact paid amounts and the success rate, as the script made them", async () => {
    const now = t.clock.now().getTime();
    const o = await overview({ from: new Date(now - 6 * HOUR).toISOString(), to: new Date(now + HOUR).toISOString() });
    expect(o.bucket).toBe("HOUR");
    expect(o.timeZone).toBe("Asia/Phnom_Penh");
    expect(o.totals).toEqual(expectCounts(script));
    for (const currency of ["USD", "KHR"] as const) {
      const c = o.currencies.find((x) => x.currency === currency)!;
      const mine = script.filter((p) => p.currency === currency);
      expect(c.counts).toEqual(expectCounts(mine));
      expect(c.paidAmount).toBe(expectPaid(mine, currency));
    }
    // The script's exact figures, written out once: USD 2.50 + 3.00 + 10.50 paid; KHR 4000 paid.
    expect(o.currencies.map((c) => [c.currency, c.paidAmount])).toEqual([
      ["USD", "16.00"],
      ["KHR", "4000"],
    ]);
    expect(o.totals).toMatchObject({ payments: 10, paid: 4, failed: 2, expired: 2, pending: 2, late: 1 });
    expect(o.totals.successRate).toBeCloseTo(4 / 8, 10);
  });

  it("by merchant (with its name) and by area", async () => {
    const now = t.clock.now().getTime();
    const o = await overview({ from: new Date(now - 6 * HOUR).toISOString(), to: new Date(now + HOUR).toISOString() });
    for (const [tenant, key, name] of [
      [alpha, "alpha", "Alpha Shop"],
      [beta, "beta", "Beta Store"],
    ] as const) {
      const m = o.merchants.find((x) => x.id === tenant.merchantId)!;
      const mine = script.filter((p) => p.merchant === key);
      expect(m.name).toBe(name);
      expect(m.counts).toEqual(expectCounts(mine));
      expect(m.paid).toEqual(
        (["USD", "KHR"] as const)
          .filter((c) => mine.some((p) => p.currency === c))
          .map((c) => ({
            currency: c,
            count: mine.filter((p) => p.currency === c && (p.outcome === "paid" || p.outcome === "late")).length,
            amount: expectPaid(mine, c),
          })),
      );
    }
    expect(o.merchants).toHaveLength(2);
    expect(o.areas.map((a) => a.id).sort()).toEqual(["gateway", "qr"]);
    for (const area of ["qr", "gateway"] as const)
      expect(o.areas.find((a) => a.id === area)!.counts).toEqual(expectCounts(script.filter((p) => p.area === area)));
  });

  it("counts a pending payment past its expiry as EXPIRED, as reads show it, while its row still says pending", async () => {
    // Read two hours on: the two open payments (an hour's lifetime) are past their expiry; nothing has ended them.
    const now = t.clock.now().getTime();
    const later = new Date(now + 2 * HOUR);
    const open = script.filter((p) => p.outcome === "pending").map((p) => p.id);
    const rows = await t.app.core.db.query<{ status: string }>(`select status from "transaction" where id = any(?)`, [
      open,
    ]);
    expect(rows.map((r) => r.status)).toEqual(["CHECKOUT", "CHECKOUT"]);
    const f = await overviewFigures(t.app.core.db, { graces: () => [["qr", 30_000]] }, later, {
      from: new Date(now - 6 * HOUR),
      to: new Date(now + HOUR),
    });
    const asRead = script.map((p) => (p.outcome === "pending" ? { ...p, outcome: "expired" as const } : p));
    expect(f.totals).toEqual(expectCounts(asRead));
  });

  it("filters by merchant and by area", async () => {
    const now = t.clock.now().getTime();
    const range = { from: new Date(now - 6 * HOUR).toISOString(), to: new Date(now + HOUR).toISOString() };
    const b = await overview({ ...range, merchantId: beta.merchantId });
    expect(b.totals).toEqual(expectCounts(script.filter((p) => p.merchant === "beta")));
    expect(b.merchants.map((m) => m.id)).toEqual([beta.merchantId]);
    const q = await overview({ ...range, area: "qr" });
    expect(q.totals).toEqual(expectCounts(script.filter((p) => p.area === "qr")));
    expect(q.areas.map((a) => a.id)).toEqual(["qr"]);
    const none = await overview({ ...range, area: "gateway_link" });
    expect(none.totals).toMatchObject({ payments: 0, successRate: null });
    expect(none.currencies.map((c) => c.paidAmount)).toEqual(["0.00", "0"]);
  });

  it("hourly buckets: every hour of the range, zero-filled, each payment in the hour it was created", async () => {
    const now = t.clock.now().getTime();
    const from = now - 5 * HOUR - 30 * 60_000;
    const o = await overview({ from: new Date(from).toISOString(), to: new Date(now + HOUR).toISOString() });
    const firstHour = Math.floor(from / HOUR) * HOUR;
    const expectedStarts: string[] = [];
    for (let s = firstHour; s < now + HOUR; s += HOUR) expectedStarts.push(new Date(s).toISOString());
    for (const c of o.currencies) {
      expect(c.series.map((p) => p.start)).toEqual(expectedStarts);
      for (const point of c.series) {
        const start = Date.parse(point.start);
        const inIt = script.filter(
          (p) => p.currency === c.currency && p.createdAt! >= start && p.createdAt! < start + HOUR,
        );
        expect(point.counts).toEqual(expectCounts(inIt));
        expect(point.paidAmount).toBe(expectPaid(inIt, c.currency as "USD" | "KHR"));
      }
    }
    // Holes are zeros: most hours of the range hold nothing.
    expect(o.currencies[0].series.filter((p) => p.counts.payments === 0).length).toBeGreaterThanOrEqual(4);
  });

  it("daily buckets start at midnight in Phnom Penh (17:00 UTC), every day present", async () => {
    const now = t.clock.now().getTime();
    const from = phnomPenhMidnight(now, -2);
    const to = phnomPenhMidnight(now, 1);
    const o = await overview({ from: new Date(from).toISOString(), to: new Date(to).toISOString() });
    expect(o.bucket).toBe("DAY");
    for (const c of o.currencies) {
      expect(c.series.map((p) => p.start)).toEqual([0, 1, 2].map((d) => new Date(from + d * DAY).toISOString()));
      expect(c.series.every((p) => p.start.endsWith("T17:00:00.000Z"))).toBe(true);
      // Each payment in the Phnom Penh day it was created (near midnight the script may span two days).
      for (const point of c.series) {
        const start = Date.parse(point.start);
        const inIt = script.filter(
          (p) => p.currency === c.currency && p.createdAt! >= start && p.createdAt! < start + DAY,
        );
        expect(point.counts).toEqual(expectCounts(inIt));
        expect(point.paidAmount).toBe(expectPaid(inIt, c.currency as "USD" | "KHR"));
      }
    }
    // A range not on midnights: the first bucket is the Phnom Penh day holding `from`.
    const o2 = await overview({
      from: new Date(from + 3 * HOUR).toISOString(),
      to: new Date(from + 3 * DAY).toISOString(),
    });
    expect(o2.currencies[0].series[0].start).toBe(new Date(from).toISOString());
  });

  it("webhook health: the window's deliveries as the database holds them, the failing endpoint, p95 latency", async () => {
    // Alpha's events reach the inbox; the closed port keeps failing.
    await waitFor(async () => {
      const r = await t.app.core.db.query<{ n: number }>(
        `select count(*)::int as n from webhook_delivery where state = 'pending' and attempts > 0`,
      );
      return r[0].n > 0;
    }, 20_000);
    const now = t.clock.now().getTime();
    const from = new Date(now - 6 * HOUR);
    const to = new Date(now + HOUR);
    const o = await overview({ from: from.toISOString(), to: to.toISOString() });
    const [db] = await t.app.core.db.query<Record<string, number | null>>(
      `select count(*) filter (where state = 'delivered')::int as delivered,
              count(*) filter (where state = 'pending' and attempts > 0)::int as retrying,
              count(*) filter (where state = 'failed')::int as failed
         from webhook_delivery where created_at >= ? and created_at < ?`,
      [from, to],
    );
    const latencies = (
      await t.app.core.db.query<{ l: number }>(
        `select a.latency_ms as l from webhook_attempt a join webhook_delivery d on d.id = a.delivery_ref
          where d.created_at >= ? and d.created_at < ? order by 1`,
        [from, to],
      )
    ).map((r) => Number(r.l));
    // The dispatcher keeps working between the two reads: compare what cannot move backwards within bounds.
    expect(o.webhooks.delivered).toBeGreaterThan(0);
    expect(o.webhooks.delivered).toBeLessThanOrEqual(Number(db.delivered));
    expect(o.webhooks.retrying + o.webhooks.failed).toBeGreaterThan(0);
    expect(o.webhooks.failingEndpoints).toBe(1);
    expect(o.webhooks.disabledEndpoints).toBe(0);
    // Nearest-rank 95th percentile of the attempts measured (percentile_disc): one of the values, at rank ceil(0.95 n).
    expect(latencies.length).toBeGreaterThan(0);
    expect(latencies).toContain(o.webhooks.p95LatencyMs);
    // Beta's key has no endpoints: its overview has no deliveries.
    const b = await overview({ from: from.toISOString(), to: to.toISOString(), merchantId: beta.merchantId });
    expect(b.webhooks).toEqual({
      delivered: 0,
      retrying: 0,
      failed: 0,
      failingEndpoints: 0,
      disabledEndpoints: 0,
      p95LatencyMs: null,
    });
  });

  it("is the operator's: an API key is refused; a reversed or over-400-day range names the field", async () => {
    const now = t.clock.now().getTime();
    const keyed = await gql(
      QUERY,
      { from: new Date(now - HOUR).toISOString(), to: new Date(now).toISOString() },
      AUTH.qr(alpha.keys.qr),
    );
    expect(keyed.errors?.[0].extensions.code).toBe("UNAUTHENTICATED");
    const reversed = await gql(QUERY, { from: new Date(now).toISOString(), to: new Date(now).toISOString() }, admin);
    expect(reversed.errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", details: [{ field: "to" }] });
    const long = await gql(
      QUERY,
      { from: new Date(now - 401 * DAY).toISOString(), to: new Date(now).toISOString() },
      admin,
    );
    expect(long.errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", details: [{ field: "to" }] });
    // 400 days exactly is answered, in days.
    const year = await overview({ from: new Date(now - 400 * DAY).toISOString(), to: new Date(now).toISOString() });
    expect(year.bucket).toBe("DAY");
    expect(year.currencies[0].series.length).toBeGreaterThanOrEqual(400);
  });
});

describe("overview on the embedded database (npm start's default)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({}, { embedded: true });
  }, EMBEDDED_START_MS + 30_000);
  afterAll(async () => t?.stop());

  it("answers the same statement: a payment in today's Phnom Penh bucket, zeros elsewhere", async () => {
    const tenant = await createTenant(t);
    const r = await post(
      `${t.url}/qr/generate`,
      { amount: 1.5, currency: 840, expiredAfter: 600_000 },
      AUTH.qr(tenant.keys.qr),
    );
    expect(r.status).toBe(200);
    const now = t.clock.now().getTime();
    const from = phnomPenhMidnight(now, -1);
    const { overview } = await t.admin<{ overview: Overview }>(QUERY, {
      from: new Date(from).toISOString(),
      to: new Date(phnomPenhMidnight(now, 1)).toISOString(),
    });
    expect(overview.bucket).toBe("HOUR");
    expect(overview.totals).toMatchObject({ payments: 1, pending: 1, successRate: null });
    const usd = overview.currencies.find((c) => c.currency === "USD")!;
    expect(usd.series).toHaveLength(48);
    expect(usd.series[0].start).toBe(new Date(from).toISOString());
    const id = (r.body as { transactionId: string }).transactionId;
    const { transaction } = await t.admin<{ transaction: { createdAt: string } }>(
      `query($id: ID!) { transaction(id: $id) { createdAt } }`,
      { id },
    );
    const hour = Math.floor(Date.parse(transaction.createdAt) / HOUR) * HOUR;
    expect(usd.series.filter((p) => p.counts.payments > 0).map((p) => Date.parse(p.start))).toEqual([hour]);
  }, 60_000);
});
