import { describe, it, expect } from "@jest/globals";
import { readFileSync } from "node:fs";
import { schemaSdl } from "../../src/app.js";

describe("schema.graphql", () => {
  it("is exactly what the code generates (run `npm run schema` after changing resolvers)", async () => {
    const committed = readFileSync(new URL("../../schema.graphql", import.meta.url), "utf8");
    expect(committed).toBe(await schemaSdl());
  });

  it("has Query, Mutation and Subscription roots", async () => {
    const sdl = await schemaSdl();
    expect(sdl).toMatch(/^type Query \{/m);
    expect(sdl).toMatch(/^type Mutation \{/m);
    expect(sdl).toMatch(/^type Subscription \{/m);
  });
});
