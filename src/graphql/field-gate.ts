import { defaultFieldResolver, GraphQLError, isObjectType, type GraphQLSchema } from "graphql";
import type { GqlContext } from "./context.js";
import { refuseNul } from "./refuse-nul.js";

// What every field passes before it resolves, in one synchronous wrapper put on the schema once: the operation's time
// budget (where the request set one: HTTP GraphQL), and at the roots the NUL refusal. It replaces a type-graphql global
// middleware (async: every field of every answer became promises) and Apollo's willResolveField hook (which needs
// Apollo's pipeline around the execution). docs/decisions/0239-field-gate-instead-of-middleware.md.

const GATED = Symbol("field-gate");

/** The time budget message; the budget is spent once `ctx.deadline.at` has passed. */
function overBudget(budgetMs: number): GraphQLError {
  return new GraphQLError(`The operation ran over its time budget of ${budgetMs} ms (GRAPHQL_TIME_BUDGET_MS)`, {
    extensions: { code: "BAD_USER_INPUT" },
  });
}

/**
 * Wraps every field of the schema's object types (introspection's excepted). Once the deadline has passed, every
 * field still to resolve fails at once (what was resolved is kept), so an operation cannot hold the process for
 * longer than GRAPHQL_TIME_BUDGET_MS. A mutation's answer is spared: its work is done (a payment page may take 45 s
 * to give its QR), and cutting the answer would lose what it made; a further mutation of the operation is still
 * refused. Idempotent: a schema is built once per process and shared by its apps.
 */
export function gateFields(schema: GraphQLSchema): void {
  const marked = schema as GraphQLSchema & { [GATED]?: true };
  if (marked[GATED]) return;
  marked[GATED] = true;
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    const root = roots.has(type);
    for (const field of Object.values(type.getFields())) {
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args: Record<string, unknown>, ctx: GqlContext, info) => {
        const deadline = ctx?.deadline;
        if (
          deadline !== undefined &&
          Date.now() > deadline.at &&
          !(info.operation.operation === "mutation" && info.path.prev !== undefined)
        )
          throw overBudget(deadline.budgetMs);
        if (root) refuseNul(args, info);
        return resolve(source, args, ctx, info);
      };
    }
  }
}
