import "reflect-metadata";
import { buildSchema, type NonEmptyArray } from "type-graphql";
import { printSchema, type GraphQLSchema } from "graphql";
import { createPubSub } from "@graphql-yoga/subscription";
import { RefuseNul } from "./refuse-nul.js";
import { validateArgument } from "../validation/check.js";
import type { GqlContext } from "./context.js";
import type { ClassOf } from "./container.js";

const built = new Map<string, Promise<GraphQLSchema>>();

/**
 * The one schema, from the resolver classes the modules declare; built once per process for a given list
 * (every app of the process shares it: the resolver instances come from each request's container).
 */
export function buildAppSchema(resolvers: ClassOf[]): Promise<GraphQLSchema> {
  const key = resolvers.map((r) => r.name).join(",");
  let schema = built.get(key);
  if (schema === undefined) {
    schema = buildSchema({
      // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- type-graphql's own resolver list type
      resolvers: resolvers as unknown as NonEmptyArray<Function>,
      container: ({ context }: { context: GqlContext }) => context.container,
      // Input classes carry their rules (src/validation); every input-object argument is checked before its resolver.
      validateFn: validateArgument,
      emitSchemaFile: false,
      globalMiddlewares: [RefuseNul],
      // type-graphql insists on a PubSub; our subscriptions bring their own streams (events/live-events.ts).
      pubSub: createPubSub(),
    });
    built.set(key, schema);
  }
  return schema;
}

/** What `npm run schema` writes to schema.graphql and the drift test compares. */
export async function printAppSchema(resolvers: ClassOf[]): Promise<string> {
  return `${printSchema(await buildAppSchema(resolvers))}\n`;
}
