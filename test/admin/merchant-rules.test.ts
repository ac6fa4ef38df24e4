import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import {
  ACCOUNT_TYPES,
  MERCHANT_FIELD_RULES,
  MERCHANT_GROUP_RULES,
  validateMerchantAccount,
} from "../../src/admin/merchant-rules.js";
import { validateKhqrInput } from "../../src/khqr/index.js";

type BrowserRules = {
  checkMerchant(values: Record<string, string>, rules: unknown): { field: string; message: string }[];
};
const rules = { fields: MERCHANT_FIELD_RULES, groups: MERCHANT_GROUP_RULES, accountTypes: [...ACCOUNT_TYPES] };

// Values like a form's: strings, often near the limits, sometimes empty, with and without '@'.
const text = (max: number) =>
  fc.oneof(
    fc.constant(""),
    fc.string({ maxLength: max + 3 }),
    fc.stringMatching(/^[a-z_]{1,20}@[a-z]{1,14}$/),
    fc.stringMatching(/^\d{3,5}$/),
  );
const merchant = fc.record({
  accountType: fc.constantFrom("individual", "merchant", ""),
  name: text(100),
  bakongAccountId: text(32),
  merchantName: text(25),
  merchantCity: text(15),
  merchantId: text(32),
  acquiringBank: text(32),
  merchantCategoryCode: text(4),
});
// Mostly acceptable merchants, up to every limit, to probe the rules against the codec.
const filled = (max: number) => fc.string({ minLength: 1, maxLength: max });
const plausible = fc.record({
  accountType: fc.constantFrom("individual", "merchant"),
  name: filled(100),
  bakongAccountId: fc.stringMatching(/^[a-z0-9_.]{1,25}@[a-z]{1,6}$/),
  merchantName: filled(25),
  merchantCity: filled(15),
  merchantId: fc.oneof(fc.constant(""), filled(32)),
  acquiringBank: fc.oneof(fc.constant(""), filled(32)),
  merchantCategoryCode: fc.stringMatching(/^\d{4}$/),
});

describe("merchant rules (one table for the server, the dashboard and the codec)", () => {
  it("the dashboard's checkMerchant gives exactly the server's errors for any form input", async () => {
    const url = pathToFileURL(join(process.cwd(), "src/dashboard/public/js/merchant-rules.js")).href;
    const browser = (await import(url)) as BrowserRules;
    fc.assert(
      fc.property(merchant, (m) => {
        expect(browser.checkMerchant(m, rules)).toEqual(validateMerchantAccount(m));
      }),
      { numRuns: 400 },
    );
  });

  it("a merchant the rules accept always encodes (no KHQR account errors)", () => {
    fc.assert(
      fc.property(plausible, (m) => {
        fc.pre(validateMerchantAccount(m).length === 0);
        const input = {
          ...m,
          accountType: m.accountType as "individual" | "merchant",
          merchantId: m.merchantId || undefined,
          acquiringBank: m.acquiringBank || undefined,
          currency: 116 as const,
        };
        expect(validateKhqrInput(input)).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it("names the rules' limits after the codec's", () => {
    const max = Object.fromEntries(MERCHANT_FIELD_RULES.map((r) => [r.field, r.maxLength]));
    expect(max).toMatchObject({
      bakongAccountId: 32,
      merchantName: 25,
      merchantCity: 15,
      merchantId: 32,
      acquiringBank: 32,
      merchantCategoryCode: 4,
    });
    const tooLong = validateMerchantAccount({
      accountType: "merchant",
      name: "n",
      bakongAccountId: `${"a".repeat(27)}@bank`,
      merchantName: "m",
      merchantCity: "c",
      merchantId: "x".repeat(32),
      acquiringBank: "y".repeat(32),
      merchantCategoryCode: "5999",
    });
    expect(tooLong).toEqual([{ field: "bakongAccountId", message: expect.stringMatching(/99 characters together/) }]);
  });
});
