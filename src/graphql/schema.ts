import "reflect-metadata";
import { buildSchemaSync, getMetadataStorage, type NonEmptyArray } from "type-graphql";
import { GraphQLEnumType, printSchema, type GraphQLSchema } from "graphql";
import { createPubSub } from "@graphql-yoga/subscription";
import { gateFields } from "./field-gate.js";
import { validateArgument } from "../validation/check.js";
import type { GqlContext } from "./context.js";
import type { ClassOf } from "./container.js";
import type { ListedValues } from "./listed-enums.js";

const built = new Map<string, GraphQLSchema>();

/**
 * The one schema, from the resolver classes the modules declare and what the module list fills (the areas: listed
 * enums and fields); built once per process for a given list (every app of the process shares it: the resolver
 * instances come from each request's container).
 */
export function buildAppSchema(resolvers: ClassOf[], listed: readonly ListedValues[] = []): Promise<GraphQLSchema> {
  const key = [
    resolvers.map((r) => r.name).join(","),
    ...listed.map((e) => `${e.listed.name}:${e.values.join(",")}`),
  ].join(";");
  let schema = built.get(key);
  if (schema === undefined) {
    // Filled and read in one synchronous step: no other build can see these values.
    for (const e of listed) e.listed.fill(e.values);
    // type-graphql keeps an object type's field list once a schema is built and adds the fields of the field
    // resolvers it is given to that list: a later schema of the process would carry every earlier list's (the areas'
    // fields, transactions/area-fields.ts). Each build lists its own.
    for (const t of getMetadataStorage().objectTypes) t.fields = undefined;
    schema = buildSchemaSync({
      // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- type-graphql's own resolver list type
      resolvers: resolvers as unknown as NonEmptyArray<Function>,
      container: ({ context }: { context: GqlContext }) => context.container,
      // Input classes carry their rules (src/validation); every input-object argument is checked before its resolver.
      validateFn: validateArgument,
      emitSchemaFile: false,
      // type-graphql insists on a PubSub; our subscriptions bring their own streams (events/live-events.ts).
      pubSub: createPubSub(),
    });
    for (const e of listed) {
      const type = schema.getType(e.listed.name);
      if (type instanceof GraphQLEnumType && e.description !== undefined) type.description = e.description;
    }
    // The time budget and the NUL refusal (graphql/field-gate.ts), on every app's schema alike.
    gateFields(schema);
    built.set(key, schema);
  }
  return Promise.resolve(schema);
}

/** What `npm run schema` writes to schema.graphql and the drift test compares. */
export async function printAppSchema(resolvers: ClassOf[], listed: readonly ListedValues[] = []): Promise<string> {
  return `${printSchema(await buildAppSchema(resolvers, listed))}\n`;
}
