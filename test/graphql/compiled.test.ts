import { describe, it, expect } from "@jest/globals";
import { buildSchema, execute, getOperationAST, parse, type GraphQLSchema } from "graphql";
import { MAX_COMPILED_MISSES, runCompiled } from "../../src/graphql/compiled.js";

// What the direct door runs compiled (src/graphql/compiled.ts): list reads only, an answer only when it has no error,
// and an operation that keeps failing is left to graphql-js, so a failing read is not run twice on every request.

function fixture(): { schema: GraphQLSchema; calls: Record<string, number>; fail: { rows: boolean } } {
  const schema = buildSchema(`
    type Row { id: ID! amount: String! note: String }
    type Query { rows(first: Int!): [Row!]! row(id: ID!): Row }
    type Mutation { touch: [Row!]! }
  `);
  const calls: Record<string, number> = { rows: 0, row: 0, touch: 0 };
  const fail = { rows: false };
  const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `r${i}`, amount: `${i}.50`, note: null }));
  const fields = schema.getQueryType()!.getFields();
  fields.rows.resolve = async (_s, args: { first: number }) => {
    calls.rows++;
    if (fail.rows) throw new Error("no rows today");
    return rows(args.first);
  };
  fields.row.resolve = (_s, args: { id: string }) => {
    calls.row++;
    return { id: args.id, amount: "1.00", note: "one" };
  };
  schema.getMutationType()!.getFields().touch.resolve = () => {
    calls.touch++;
    return rows(1);
  };
  return { schema, calls, fail };
}

const run = (schema: GraphQLSchema, source: string, variables?: Record<string, unknown>) => {
  const document = parse(source);
  const operation = getOperationAST(document)!;
  return { document, go: () => runCompiled(schema, document, operation, { operationName: undefined, variables }, {}) };
};

describe("compiled execution of the direct door", () => {
  it("answers a list read as graphql-js does", async () => {
    const { schema } = fixture();
    const source = `query($n: Int!) { rows(first: $n) { id amount note __typename } }`;
    const { document, go } = run(schema, source, { n: 3 });
    const compiled = await go();
    const reference = await execute({ schema, document, variableValues: { n: 3 } });
    expect(JSON.stringify(compiled)).toBe(JSON.stringify(reference));
  });

  it("runs neither single reads nor mutations", async () => {
    const { schema, calls } = fixture();
    expect(await run(schema, `{ row(id: "a") { id } }`).go()).toBeUndefined();
    expect(await run(schema, `mutation { touch { id } }`).go()).toBeUndefined();
    expect(calls).toEqual({ rows: 0, row: 0, touch: 0 });
  });

  it("hands an answer with an error to graphql-js, and stops trying an operation that keeps failing", async () => {
    const { schema, calls, fail } = fixture();
    const { go } = run(schema, `{ rows(first: 2) { id } }`);
    fail.rows = true;
    for (let i = 0; i < MAX_COMPILED_MISSES + 2; i++) expect(await go()).toBeUndefined();
    // Each failing compiled run read once; after the last allowed miss, none.
    expect(calls.rows).toBe(MAX_COMPILED_MISSES);
    fail.rows = false;
    expect(await go()).toBeUndefined();
  });
});
