import { describe, it, expect } from "@jest/globals";
import { parse } from "csv-parse/sync";
import { csvCell, csvColumns, csvLine, csvRow as areaRow, localTime } from "../../src/transactions/csv-export.js";
import { areaViewsOf, MODULES } from "../../src/app.js";
import { parseInstant, readExportRequest } from "../../src/transactions/export-route.js";
import type { TxRecord } from "../../src/transactions/record.js";

const tx = (over: Partial<TxRecord> = {}): TxRecord => ({
  id: "txn_1",
  area: "qr",
  merchantRef: "mer_1",
  apiKeyRef: "key_1",
  status: "SUCCESS",
  amount: "4000.00",
  currency: "KHR",
  upstreamRef: "0123456789abcdef0123456789abcdef",
  qr: "000201",
  meta: {},
  request: {},
  upstream: { payment: { hash: "abc123", externalRef: "100FT42" } },
  expiresAt: new Date("2026-11-25T10:03:00Z"),
  createdAt: new Date("2026-11-25T10:00:00.123Z"),
  updatedAt: new Date("2026-11-25T10:01:00Z"),
  completedAt: new Date("2026-11-25T10:01:00Z"),
  nextCheckAt: null,
  checkFailures: 0,
  version: 2,
  ...over,
});

// The columns of the service's areas, placed among the core's where each area's field says (AreaDefinition.data).
const views = areaViewsOf(MODULES);
const COLUMNS = csvColumns(views);
const CSV_HEADER = csvLine(COLUMNS);
const csvRow = (t: TxRecord, merchantName: string) => areaRow(t, merchantName, views, COLUMNS);

const read = (csv: string) => parse(csv, { columns: true, relax_column_count: false }) as Record<string, string>[];

describe("the reconciliation export's rows", () => {
  it("has the columns it always had, in their order, the areas' among the core's", () => {
    expect(COLUMNS.join(",")).toBe(
      "transaction_id,merchant_id,merchant_name,area,status,amount,currency,created_at_utc,created_at_phnom_penh," +
        "paid_at_utc,paid_at_phnom_penh,expired_at_utc,expired_at_phnom_penh,completed_at_utc,md5,order_id,client_id," +
        "payment_hash,external_ref,receipt_url,late,meta",
    );
    const [gw] = read(CSV_HEADER + csvRow(tx({ area: "gateway", upstreamRef: "ORDER-1" }), "A"));
    expect(gw).toMatchObject({ md5: "", order_id: "ORDER-1", client_id: "", receipt_url: "" });
    const link = tx({ area: "gateway_link", upstreamRef: "cl_1", upstream: { receiptUrl: "https://r.example/1" } });
    expect(read(CSV_HEADER + csvRow(link, "A"))[0]).toMatchObject({
      md5: "",
      client_id: "cl_1",
      receipt_url: "https://r.example/1",
    });
  });

  it("open in a CSV parser with every field intact: Khmer, commas, quotes, line breaks, exact amounts", () => {
    const meta = { note: 'ការទូទាត់, "quoted"\r\nsecond line', n: 1.1 };
    const rows = read(
      CSV_HEADER +
        csvRow(tx({ meta }), 'ហាងកាហ្វេ, "Phnom" Penh') +
        csvRow(tx({ id: "txn_2", amount: "1.5", currency: "USD", status: "EXPIRED", completedAt: null }), "B"),
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      transaction_id: "txn_1",
      merchant_name: 'ហាងកាហ្វេ, "Phnom" Penh',
      amount: "4000",
      currency: "KHR",
      created_at_utc: "2026-11-25T10:00:00.123Z",
      created_at_phnom_penh: "2026-11-25 17:00:00",
      paid_at_utc: "2026-11-25T10:01:00.000Z",
      paid_at_phnom_penh: "2026-11-25 17:01:00",
      expired_at_utc: "",
      md5: "0123456789abcdef0123456789abcdef",
      order_id: "",
      payment_hash: "abc123",
      external_ref: "100FT42",
      late: "false",
    });
    expect(JSON.parse(rows[0].meta)).toEqual(meta);
    expect(rows[1]).toMatchObject({
      amount: "1.50",
      status: "EXPIRED",
      paid_at_utc: "",
      expired_at_utc: "2026-11-25T10:03:00.000Z",
    });
  });

  it("neutralises cells a spreadsheet would run as a formula, and only those", () => {
    for (const evil of ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\r=1"])
      expect(csvCell(evil).replace(/^"|"$/g, "").startsWith("'")).toBe(true);
    expect(csvCell("1.50")).toBe("1.50");
    expect(csvCell("a,b")).toBe('"a,b"');
    const [row] = read(CSV_HEADER + csvRow(tx(), "=cmd|' /C calc'!A0"));
    expect(row.merchant_name).toBe("'=cmd|' /C calc'!A0");
  });

  it("marks a late payment, with the deadline it passed", () => {
    const [row] = read(CSV_HEADER + csvRow(tx({ upstream: { late: true } }), "A"));
    expect(row).toMatchObject({
      late: "true",
      expired_at_utc: "2026-11-25T10:03:00.000Z",
      paid_at_utc: "2026-11-25T10:01:00.000Z",
    });
  });

  it("writes Phnom Penh time across midnight and the year", () => {
    expect(localTime(new Date("2026-12-31T17:30:00Z"))).toBe("2027-01-01 00:30:00");
  });
});

describe("the export's query string", () => {
  const areas = ["qr", "gateway", "gateway_link"];
  it("reads a bare date as that day in Phnom Penh and refuses a timestamp without an offset", () => {
    expect(parseInstant("2026-11-25")?.toISOString()).toBe("2026-11-24T17:00:00.000Z");
    expect(parseInstant("2026-11-25T00:00:00Z")?.toISOString()).toBe("2026-11-25T00:00:00.000Z");
    expect(parseInstant("2026-11-25T00:00:00")).toBeNull();
    expect(parseInstant("2026-13-45")).toBeNull();
    expect(parseInstant("yesterday")).toBeNull();
    // Days the calendar does not have: not rolled over into the next month.
    expect(parseInstant("2026-11-31")).toBeNull();
    expect(parseInstant("2026-02-29T10:00:00Z")).toBeNull();
    expect(parseInstant("2028-02-29")?.toISOString()).toBe("2028-02-28T17:00:00.000Z");
  });

  it("names every problem, one per field", () => {
    const r = readExportRequest(
      { from: "2026-11-26", to: "2026-11-25", area: "nope", status: "PAID", extra: "1", merchantId: ["a", "b"] },
      areas,
    );
    expect("problems" in r && r.problems.map((p) => p.field).sort()).toEqual(
      ["area", "extra", "merchantId", "status", "to"].sort(),
    );
    const missing = readExportRequest({}, areas);
    expect("problems" in missing && missing.problems.map((p) => p.field)).toEqual(["from", "to"]);
    const ok = readExportRequest({ from: "2026-11-01", to: "2026-12-01", area: "qr", status: "SUCCESS" }, areas);
    expect("ok" in ok && ok.ok.filter).toMatchObject({ area: "qr", status: "SUCCESS" });
  });
});
