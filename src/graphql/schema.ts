import "reflect-metadata";
import { buildSchema } from "type-graphql";
import { printSchema, type GraphQLSchema } from "graphql";
import { createPubSub } from "@graphql-yoga/subscription";
import { AdminResolver } from "../admin/admin.resolver.js";
import { RESOLVERS } from "./resolvers.js";
import { RefuseNul } from "./refuse-nul.js";

let built: Promise<GraphQLSchema> | null = null;

/** The one schema: built once per process from the decorated resolvers. */
export function appSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({ resolvers: [AdminResolver, ...RESOLVERS], validate: false, emitSchemaFile: false, globalMiddlewares: [RefuseNul],
    // type-graphql insists on a PubSub; our subscriptions bring their own streams (transactions/live-events.ts).
    pubSub: createPubSub() });
  return built;
}

/** What `npm run schema` writes to schema.graphql and the drift test compares. */
export async function schemaSdl(): Promise<string> {
  return `${printSchema(await appSchema())}\n`;
}
