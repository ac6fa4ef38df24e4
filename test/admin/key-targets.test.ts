import { describe, it, expect } from "@jest/globals";
import { readFileSync } from "node:fs";
import { keyKindsOf, MODULES, schemaSdl } from "../../src/app.js";
import { runAdminCli } from "../../src/admin/cli.js";
import { terminalModule } from "../fixtures/fourth-area/index.js";

/**
 * What an API key is bound to is a field its area names (`AreaDefinition.key.target.field`): the admin API and the
 * CLI list the fields of the app's module list, so a new area's keys are bound through `createApiKey` too
 * (docs/decisions/0231-app-wires-storage-readiness-key-targets.md).
 */
describe("the areas' key-target fields", () => {
  const typeOf = (sdl: string, keyword: string, name: string) =>
    new RegExp(`\\n${keyword} ${name} \\{[^}]*\\}`).exec(sdl)?.[0] ?? "";

  it("join ApiKey and ApiKeyInput of the schema of a list with a new area, and no other schema's", async () => {
    const withIt = await schemaSdl([...MODULES, terminalModule]);
    expect(typeOf(withIt, "type", "ApiKey")).toContain(
      "prefix: String!\n  gatewayConfigId: ID\n  linkConfigId: ID\n  terminalConfigId: ID\n  createdAt",
    );
    expect(typeOf(withIt, "input", "ApiKeyInput")).toContain(
      "label: String\n  gatewayConfigId: ID\n  linkConfigId: ID\n  terminalConfigId: ID\n}",
    );
    // Built after it in the same process: the built-in areas' schema, as committed.
    expect(await schemaSdl(MODULES)).toBe(readFileSync("schema.graphql", "utf8"));
  });

  it("are named, with the kinds, by the CLI's help for key:create", async () => {
    const lines: string[] = [];
    const log = console.log;
    console.log = (s: string) => void lines.push(s);
    try {
      const kinds = keyKindsOf([...MODULES, terminalModule]).list;
      expect(await runAdminCli(["help"], {}, { kinds })).toBe(0);
    } finally {
      console.log = log;
    }
    expect(lines.find((l) => l.trimStart().startsWith("key:create"))).toContain(
      "--kind qr|gateway|gateway_link|terminal [--label --gatewayConfigId --linkConfigId --terminalConfigId]",
    );
  });
});
