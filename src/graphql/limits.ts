import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type ValidationContext,
  type SelectionSetNode,
  type FragmentDefinitionNode,
} from "graphql";

/**
 * Depth and breadth limits, so a single document cannot make the server do unbounded work
 * (deep nesting, thousands of aliases). Fragments are followed; cycles are already a validation error.
 */
export function limitsRule(maxDepth: number, maxFields: number) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions)
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    const measure = (set: SelectionSetNode, depth: number, seen: Set<string>): { depth: number; fields: number } => {
      let deepest = depth;
      let fields = 0;
      for (const sel of set.selections) {
        if (fields > maxFields) break;
        if (sel.kind === Kind.FIELD) {
          fields++;
          if (sel.selectionSet) {
            // Introspection's type references (`ofType { ofType { … } }`, nine deep in graphql-js's own query) are a
            // chain of one field each: they cost nothing in breadth, so they do not count as depth. Without this,
            // GraphiQL's and every standard client's introspection query (depth 15) was refused.
            const inner = measure(sel.selectionSet, sel.name.value === "ofType" ? depth : depth + 1, seen);
            deepest = Math.max(deepest, inner.depth);
            fields += inner.fields;
          }
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          const inner = measure(sel.selectionSet, depth, seen);
          deepest = Math.max(deepest, inner.depth);
          fields += inner.fields;
        } else {
          const frag = fragments.get(sel.name.value);
          if (frag && !seen.has(frag.name.value)) {
            const inner = measure(frag.selectionSet, depth, new Set([...seen, frag.name.value]));
            deepest = Math.max(deepest, inner.depth);
            fields += inner.fields;
          }
        }
      }
      return { depth: deepest, fields };
    };
    return {
      OperationDefinition(node) {
        const { depth, fields } = measure(node.selectionSet, 1, new Set());
        if (depth > maxDepth)
          context.reportError(
            new GraphQLError(`Query is nested ${depth} levels deep; the limit is ${maxDepth}`, {
              nodes: [node],
              extensions: { code: "BAD_USER_INPUT" },
            }),
          );
        if (fields > maxFields)
          context.reportError(
            new GraphQLError(`Query selects more than ${maxFields} fields; the limit is ${maxFields}`, {
              nodes: [node],
              extensions: { code: "BAD_USER_INPUT" },
            }),
          );
      },
    };
  };
}
