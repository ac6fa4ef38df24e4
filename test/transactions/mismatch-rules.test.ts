import { describe, it, expect } from "@jest/globals";
import { differences } from "../../src/transactions/mismatch.js";
import { canonicalDecimal } from "../../src/money/money.js";
import { approvalMismatch } from "../../src/gateway-link/approval-check.js";
import { encodeKhqr } from "../../src/khqr/index.js";
import type { TxRecord } from "../../src/transactions/record.js";

// What counts as "what was asked" (docs/decisions/0184-what-each-area-compares.md): exact decimals, currency codes,
// receiving accounts without case; and, for a payment link, the QR the page produced.

describe("a payment is compared with what was asked as exact decimals, never rounded", () => {
  const usd = { amount: "1.50", currency: "USD", account: "shop@devb" };
  it.each([
    [{ amount: 1.5, currency: "USD", account: "shop@devb" }, []],
    [{ amount: "1.5", currency: "840", account: "SHOP@devb " }, []],
    [{ amount: 1, currency: "USD", account: "shop@devb" }, ["amount"]],
    [{ amount: "1.505", currency: "USD", account: "shop@devb" }, ["amount"]],
    [{ amount: 1.49, currency: "USD", account: "shop@devb" }, ["amount"]],
    [{ amount: 1.5, currency: "KHR", account: "shop@devb" }, ["currency"]],
    [{ amount: 1.5, currency: "USD", account: "other@devb" }, ["account"]],
    [{ amount: null, currency: null, account: null }, ["amount", "currency", "account"]],
    [{ amount: -1.5, currency: "usd", account: "shop@devb" }, ["amount"]],
    [{ amount: 1.5e-7, currency: "USD", account: "shop@devb" }, ["amount"]],
  ])("1.50 USD to shop@devb vs %j → %j", (arrived, fields) => {
    expect(differences(usd, arrived)).toEqual(fields);
  });

  it("riel is whole: 4000 and 4000.00 agree, 4000.5 does not; no account asked, none compared", () => {
    expect(differences({ amount: "4000", currency: "KHR" }, { amount: "4000.00", currency: "KHR" })).toEqual([]);
    expect(differences({ amount: "4000", currency: "KHR" }, { amount: 4000.5, currency: "KHR" })).toEqual(["amount"]);
    expect(canonicalDecimal("0004000.500")).toBe("4000.5");
  });
});

describe("a payment-link approval is checked against the QR the page produced", () => {
  const qr = (amount: string | undefined, currency: 116 | 840) =>
    encodeKhqr({
      accountType: "individual",
      bakongAccountId: "shop@devb",
      merchantName: "Shop",
      merchantCity: "Phnom Penh",
      currency,
      ...(amount === undefined
        ? {}
        : { amount, creationTimestamp: 1_800_000_000_000, expirationTimestamp: 1_800_000_180_000 }),
    }).qr;
  const tx = (q: string) => ({ amount: "5000.00", currency: "KHR", qr: q, upstreamRef: "cl_1" }) as unknown as TxRecord;
  const now = new Date(1_800_000_100_000);

  it("the QR's own amount and currency (tags 54, 53) must be the request's; a QR without an amount differs", () => {
    expect(approvalMismatch(tx(qr("5000", 116)), now)).toBeNull();
    expect(approvalMismatch(tx(qr("500", 116)), now)).toMatchObject({
      fields: ["amount"],
      arrived: { amount: "500", currency: "KHR" },
      source: "payment-link page's QR",
      reference: "cl_1",
    });
    expect(approvalMismatch(tx(qr("5000", 840)), now)?.fields).toEqual(["currency"]);
    expect(approvalMismatch(tx(qr(undefined, 116)), now)?.fields).toEqual(["amount"]);
  });
});
