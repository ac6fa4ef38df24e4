import { describe, it, expect } from "@jest/globals";
import { MODULES } from "../../src/app.js";
import { ResolverContainer } from "../../src/graphql/container.js";
import { opsModule } from "../../src/ops/index.js";
import { eventsModule } from "../../src/events/index.js";
import { transactionsModule } from "../../src/transactions/index.js";
import { startTestApp } from "../support/app.js";

/**
 * Each resolver type-graphql asks for is the instance a module built with its own dependencies: a resolver class
 * no module created stops the app as it is built, never constructed on the side with none; and a module is given
 * the services of the modules before it in the list, or told which module to list first.
 */
class Built {}
class Forgotten {}

describe("the resolver container and the module list", () => {
  it("refuses a declared resolver class that no module created, and hands out the created instances", () => {
    const built = new Built();
    expect(() => new ResolverContainer([Built, Forgotten], [built])).toThrow(
      "No module created the resolver class Forgotten",
    );
    const container = new ResolverContainer([Built], [built]);
    expect(container.get(Built)).toBe(built);
    expect(() => container.get(Forgotten)).toThrow("No module created the resolver class Forgotten");
  });

  it("stops the app at build when a module lists a resolver class its create did not return", async () => {
    const forgetful = { ...opsModule, create: () => ({}) };
    const modules = MODULES.map((def) => (def === opsModule ? forgetful : def));
    await expect(startTestApp({}, { modules })).rejects.toThrow(
      /No module created the resolver class HealthResolver: a module that lists a resolver class returns its instance/,
    );
  });

  it("tells a module listed before the provider of a service it needs which module to list first", async () => {
    const modules = MODULES.filter((def) => def !== transactionsModule);
    modules.splice(modules.indexOf(eventsModule) + 1, 0, transactionsModule);
    await expect(startTestApp({}, { modules })).rejects.toThrow(
      'Module "events" needs store, which the transactions module provides: list transactions before it',
    );
  });
});
