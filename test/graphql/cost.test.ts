// The cost of an operation (src/graphql/cost.ts), priced with each fragment measured once.
import { describe, it, expect } from "@jest/globals";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { buildSchema, parse } from "graphql";
import { operationCost } from "../../src/graphql/cost.js";

const schema = buildSchema(readFileSync("schema.graphql", "utf8"));
const cost = (query: string, variables: Record<string, unknown> = {}) => operationCost(schema, parse(query), variables);

describe("operation cost through fragments", () => {
  const A = "fragment A on Transaction { id qrImage }";

  it("a fragment spread in a list and on one row is priced for each (qrImage misplaced only in the list)", () => {
    // transactions 5 + edges 1 + 7 × (node 1 + id 1 + qrImage 50); transaction 1 + id 1 + qrImage 50.
    const inList = 5 + 1 + 7 * 52;
    const once = 1 + 1 + 50;
    const listFirst = `{ transactions(first: 7) { edges { node { ...A } } } t: transaction(id: "x") { ...A } } ${A}`;
    const onceFirst = `{ t: transaction(id: "x") { ...A } transactions(first: 7) { edges { node { ...A } } } } ${A}`;
    for (const q of [listFirst, onceFirst])
      expect(cost(q)).toEqual({ cost: inList + once, misplaced: ["Transaction.qrImage"] });
    expect(cost(`{ transaction(id: "x") { ...A } } ${A}`)).toEqual({ cost: once, misplaced: [] });
    // `first` from a variable, and 0 rows: nothing under the list is priced.
    const viaVariable = `query($n: Int!) { transactions(first: $n) { edges { node { ...A } } } } ${A}`;
    expect(cost(viaVariable, { n: 3 }).cost).toBe(5 + 1 + 3 * 52);
    expect(cost(viaVariable, { n: 0 })).toEqual({ cost: 6, misplaced: [] });
  });

  it("30 fragments that each spread the next twice are priced without walking 2^30 paths", () => {
    const defs = Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`);
    // merchants 1 + 50 assumed rows × id 1, reached 2^30 times.
    const query = `{ ...F0 } ${defs.join(" ")} fragment F30 on Query { merchants { id } }`;
    expect(cost(query)).toEqual({ cost: 51 * 2 ** 30, misplaced: [] });
    const rows = "transactions(first: 2) { edges { node { ...A } } }";
    const withQr = `{ ...F0 } ${defs.join(" ")} fragment F30 on Query { ${rows} } ${A}`;
    // The misplaced field is named once, not 2^30 times.
    expect(cost(withQr)).toEqual({ cost: (5 + 1 + 2 * 52) * 2 ** 30, misplaced: ["Transaction.qrImage"] });
  });
});

describe("the dashboard's overview query", () => {
  it("fits the default budget (GRAPHQL_MAX_COST 5000) with the overview's list sizes", async () => {
    const { OVERVIEW_QUERY } = (await import(pathToFileURL("src/dashboard/public/js/overview-query.js").href)) as {
      OVERVIEW_QUERY: string;
    };
    const c = cost(OVERVIEW_QUERY, { from: "2026-01-01T00:00:00Z", to: "2026-01-31T00:00:00Z" });
    expect(c.misplaced).toEqual([]);
    // Priced as 2 currencies × 100 points, 50 merchants, 3 areas: well under the budget, but not free.
    expect(c.cost).toBeLessThanOrEqual(5000);
    expect(c.cost).toBeGreaterThan(1500);
  });
});
