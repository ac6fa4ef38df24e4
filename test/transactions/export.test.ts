import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { parse } from "csv-parse/sync";
import { AUTH, ADMIN_TOKEN, createTenant, post, startTestApp, type Tenant, type TestApp } from "../support/app.js";
import { waitFor } from "../support/wait.js";

const PATH = "/admin/export/transactions.csv";

/**
 * The reconciliation export over HTTP as an operator downloads it: admin only, the documented error body for every
 * bad parameter, and a file a CSV parser reads back with every field as stored — Khmer, commas, quotes, line
 * breaks, exact amounts, the network's references — and nothing a spreadsheet would run.
 */
describe("GET /admin/export/transactions.csv", () => {
  let t: TestApp;
  let tenant: Tenant;
  let paidId = "";
  const metas = [
    { note: 'ការទូទាត់, "ហាង"\r\nline two', n: 1.1 },
    { formula: '=HYPERLINK("http://evil.example","x")', plus: "+1", at: "@SUM(A1)" },
  ];
  beforeAll(async () => {
    t = await startTestApp({ QR_MONITOR_INTERVAL_MS: "300" });
    tenant = await createTenant(t, { name: "=cmd|' /C calc'!A0" });
    const ids: string[] = [];
    for (const [i, meta] of metas.entries()) {
      // The first body as raw text, so its number keeps the spelling it was sent with (1.10).
      const body =
        i === 0
          ? JSON.stringify({ amount: 1.5, currency: 840, expiredAfter: 600_000, meta }).replace('"n":1.1}', '"n":1.10}')
          : { amount: 4000, currency: 116, expiredAfter: 600_000, meta };
      const r = await post(`${t.url}/qr/generate`, body, AUTH.qr(tenant.keys.qr));
      expect(r.status).toBe(200);
      ids.push((r.body as { transactionId: string }).transactionId);
      if (i === 0) await post(`${t.url}/sim/network/pay`, { md5: (r.body as { data: { md5: string } }).data.md5 });
    }
    paidId = ids[0];
    await waitFor(async () => {
      const [row] = await t.app.core.db.query<{ status: string }>(`select status from "transaction" where id = ?`, [
        paidId,
      ]);
      return row?.status === "SUCCESS" || undefined;
    }, 20_000);
  });
  afterAll(async () => t?.stop());

  const get = (query: string, token: string | null = ADMIN_TOKEN) =>
    fetch(`${t.url}${PATH}?${query}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  const today = () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    return `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
  };

  it("opens in a CSV parser with every field intact, and no cell a spreadsheet would run", async () => {
    const res = await get(`${today()}&merchantId=${tenant.merchantId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv; charset=utf-8/);
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="transactions-.*\.csv"$/);
    const text = await res.text();
    expect(text.charCodeAt(0)).not.toBe(0xfeff);
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(2);
    const [paid, open] = rows;
    expect(paid).toMatchObject({
      transaction_id: paidId,
      status: "SUCCESS",
      amount: "1.50",
      currency: "USD",
      late: "false",
    });
    expect(open).toMatchObject({ status: "PENDING", amount: "4000", currency: "KHR", paid_at_utc: "" });
    expect(JSON.parse(paid.meta)).toEqual(metas[0]);
    expect(paid.meta).toContain('"n":1.10'); // exactly as sent
    expect(JSON.parse(open.meta)).toEqual(metas[1]);
    // The network's references of the paid KHQR, for matching the bank statement.
    expect(paid.payment_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(paid.external_ref).toMatch(/^100FT\d+$/);
    // Phnom Penh is UTC+7.
    const utc = Date.parse(paid.created_at_utc);
    expect(paid.created_at_phnom_penh).toBe(new Date(utc + 7 * 3_600_000).toISOString().slice(0, 19).replace("T", " "));
    // A merchant name that is a formula is shown as text.
    for (const r of rows) expect(r.merchant_name.startsWith("'=")).toBe(true);
    for (const cell of rows.flatMap((r) => Object.values(r))) expect(/^[=+\-@\t\r]/.test(cell)).toBe(false);
  });

  it("filters by area and status, as reads show the status", async () => {
    const paid = parse(await (await get(`${today()}&status=SUCCESS&area=qr`)).text(), { columns: true }) as object[];
    expect(paid.map((r) => (r as { transaction_id: string }).transaction_id)).toEqual([paidId]);
    const none = parse(await (await get(`${today()}&area=gateway`)).text(), { columns: true }) as object[];
    expect(none).toEqual([]);
  });

  it("is for the operator only, and names every bad parameter", async () => {
    for (const token of [null, "wrong-token", tenant.keys.qr]) {
      const res = await get(today(), token);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("UNAUTHENTICATED");
    }
    const res = await get("from=2026-11-02&to=2026-11-01&area=moon&status=PAID&x=1");
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; details: { field: string }[] } };
    expect(body.error.code).toBe("BAD_USER_INPUT");
    expect(body.error.details.map((d) => d.field).sort()).toEqual(["area", "status", "to", "x"]);
    const key = await fetch(`${t.url}${PATH}?${today()}`, { headers: AUTH.qr(tenant.keys.qr) });
    expect(key.status).toBe(401);
  });

  it("answers an impossible day 400 'not a date', not a rolled-over day and a misleading complaint about `to`", async () => {
    for (const query of ["from=2026-11-31&to=2026-12-02", "from=2026-11-01&to=2026-02-29T00:00:00Z"]) {
      const res = await get(query);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { details: { field: string; message: string }[] } };
      const field = query.includes("11-31") ? "from" : "to";
      expect(body.error.details).toEqual([{ field, message: expect.stringMatching(/^is not a date/) }]);
    }
  });

  it("GraphQL's list filter and the overview's period refuse the same impossible day: 400, not a rolled-over date", async () => {
    for (const [query, variables] of [
      [
        "query($f: TransactionFilter) { transactions(first: 1, filter: $f) { edges { node { id } } } }",
        { f: { createdFrom: "2026-11-31T00:00:00Z" } },
      ],
      [
        "query($from: DateTimeISO!, $to: DateTimeISO!) { overview(from: $from, to: $to) { bucket } }",
        { from: "2026-11-31T00:00:00Z", to: "2026-12-02T00:00:00Z" },
      ],
    ] as const) {
      const res = await fetch(`${t.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ query, variables }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0]).toMatchObject({
        message: expect.stringContaining("cannot represent an invalid date-time-string 2026-11-31T00:00:00Z"),
        extensions: { code: "BAD_USER_INPUT" },
      });
    }
  });

  it("names the file by the Phnom Penh days of the period, the zone a bare date means", async () => {
    const nameOf = async (query: string) =>
      /filename="([^"]+)"/.exec((await get(query)).headers.get("content-disposition") ?? "")?.[1];
    // "Today" on the dashboard on 28 November (Phnom Penh): [00:00, 24:00) there, sent as UTC instants.
    expect(await nameOf("from=2026-11-27T17:00:00.000Z&to=2026-11-28T17:00:00.000Z")).toBe(
      "transactions-2026-11-28.csv",
    );
    expect(await nameOf("from=2026-11-22&to=2026-11-29")).toBe("transactions-2026-11-22-2026-11-28.csv");
  });
});
