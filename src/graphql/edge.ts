import type { ApolloServer } from "@apollo/server";
import type { RequestHandler } from "express";
import type { DocumentNode, GraphQLFormattedError, GraphQLSchema } from "graphql";
import type { Logger } from "../logger.js";
import type { GqlContext } from "./context.js";

// What the GraphQL edge offers and the failure log its two doors share: types of their own, so that the edge's
// parts (server.ts over http-edge.ts and ws-edge.ts) import them from here and never each other back.

export interface GraphQLEdge {
  schema: GraphQLSchema;
  apollo: ApolloServer<GqlContext>;
  middleware: RequestHandler;
  contextFor(headers: Record<string, string | string[] | undefined>, requestId: string): Promise<GqlContext>;
  /** Parses and validates a fixed document once (the REST shim's eight); throws when it is not valid. */
  prepare(source: string): DocumentNode;
  /** Executes a prepared document against the schema, errors formatted exactly as Apollo formats them. */
  run(
    document: DocumentNode,
    variables: Record<string, unknown>,
    ctx: GqlContext,
  ): Promise<{ data?: Record<string, unknown> | null; errors?: GraphQLFormattedError[] }>;
  dispose(): Promise<void>;
}

/** Logs the cause of an INTERNAL (error) or SERVICE_UNAVAILABLE (warning) answer; the client sees a generic message. */
export type FailureLog = (f: GraphQLFormattedError, err: unknown, path: unknown, where: string) => void;

export function failureLog(logger: Logger): FailureLog {
  return (f, err, path, where) => {
    if (f.extensions?.code === "INTERNAL") logger.error({ err, path }, `internal error in ${where}`);
    else if (f.extensions?.code === "SERVICE_UNAVAILABLE")
      logger.warn({ err, path }, `service unavailable during ${where}`);
  };
}
