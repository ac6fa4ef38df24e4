import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";
import {
  getNamedType,
  getNullableType,
  getVariableValues,
  isListType,
  isObjectType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";

// Compiled execution of the direct door's list reads (graphql-jit): a query that selects a list of objects (a page of
// transactions, a key's deliveries) is compiled once into a function that runs its selection without graphql-js's
// per-field bookkeeping. It is kept with the document object (whose cache is bounded and expires: admission.ts), per
// schema and operation name; nothing in it depends on a credential (the verdicts do, and they stay in the admission).
// Only an answer without errors is taken from it: graphql-jit words, orders and shapes some errors differently from
// graphql-js (non-null errors last, a scalar's own error without its extensions, every sibling of a nulled object
// run), so a run that met any error is run again by graphql-js, which answers it as it always has, and an operation
// whose compiled runs keep meeting errors is left to graphql-js. Mutations and subscriptions are never compiled;
// neither are single reads (one object: nothing to gain, and a not-found read would run twice).
// docs/decisions/0259-compiled-list-reads.md.

/** Compiled runs of one operation that may meet an error before it is left to graphql-js for good. */
export const MAX_COMPILED_MISSES = 3;

interface Entry {
  query: CompiledQuery | null;
  misses: number;
}

const entries = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, Entry>>>();

/** Whether the operation selects, at any depth, a list of objects (a page): what compilation pays for. */
export function selectsObjectList(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
): boolean {
  const typeInfo = new TypeInfo(schema);
  let found = false;
  // The operation's own fields and every fragment of the document (fragments it does not spread only widen this).
  const parts = [operation, ...document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION)];
  for (const part of parts)
    visit(
      part,
      visitWithTypeInfo(typeInfo, {
        Field() {
          const type = typeInfo.getType();
          const nullable = type === null || type === undefined ? null : getNullableType(type);
          if (nullable !== null && isListType(nullable) && isObjectType(getNamedType(nullable))) found = true;
        },
      }),
    );
  return found;
}

function entryFor(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  operationName: string | undefined,
): Entry {
  let bySchema = entries.get(schema);
  if (bySchema === undefined) entries.set(schema, (bySchema = new WeakMap()));
  let byName = bySchema.get(document);
  if (byName === undefined) bySchema.set(document, (byName = new Map()));
  const key = operationName ?? "";
  let entry = byName.get(key);
  if (entry === undefined) {
    let query: CompiledQuery | null = null;
    if (operation.operation === "query" && selectsObjectList(schema, document, operation))
      try {
        const compiled = compileQuery(schema, document, operationName, { disablingCapturingStackErrors: true });
        if (isCompiledQuery(compiled)) query = compiled;
      } catch {
        // Whatever it cannot compile, graphql-js runs.
      }
    byName.set(key, (entry = { query, misses: 0 }));
  }
  return entry;
}

/**
 * The answer of the operation's compiled run when it answered without an error; undefined when the operation is not
 * compiled, its variables are refused by graphql-js's coercion (graphql-js answers: execution never starts), or the
 * run met an error. Then graphql-js runs the operation, exactly as it did before there was a compiled path.
 */
export async function runCompiled(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  request: { operationName: string | undefined; variables: Record<string, unknown> | undefined },
  contextValue: unknown,
): Promise<ExecutionResult | undefined> {
  const entry = entryFor(schema, document, operation, request.operationName);
  if (entry.query === null) return undefined;
  const variables = request.variables ?? {};
  // graphql-jit coerces variables with code of its own: it only runs what graphql-js's coercion accepts.
  const definitions = operation.variableDefinitions ?? [];
  if (definitions.length > 0 && "errors" in getVariableValues(schema, definitions, variables)) return undefined;
  let result: ExecutionResult | undefined;
  try {
    result = await entry.query.query(undefined, contextValue, variables);
  } catch {
    // graphql-jit's own failure (not a resolver's: those are in its errors): graphql-js runs the operation.
  }
  if (result !== undefined && result.errors === undefined && result.data != null) return result;
  if (++entry.misses >= MAX_COMPILED_MISSES) entry.query = null;
  return undefined;
}
