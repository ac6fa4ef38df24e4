import "reflect-metadata";
import { buildSchema } from "type-graphql";
import { printSchema, type GraphQLSchema } from "graphql";
import { AdminResolver } from "../admin/admin.resolver.js";
import { RESOLVERS } from "./resolvers.js";

let built: Promise<GraphQLSchema> | null = null;

/** The one schema: built once per process from the decorated resolvers. */
export function appSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({ resolvers: [AdminResolver, ...RESOLVERS], validate: false, emitSchemaFile: false });
  return built;
}

/** What `npm run schema` writes to schema.graphql and the drift test compares. */
export async function schemaSdl(): Promise<string> {
  return `${printSchema(await appSchema())}\n`;
}
