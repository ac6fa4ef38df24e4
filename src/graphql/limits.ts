import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type ValidationContext,
  type SelectionSetNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
} from "graphql";

/** Levels below a selection set (0: only leaf fields) and the fields it selects, fragments expanded. */
interface Size {
  depth: number;
  fields: number;
}

/** Thrown to stop measuring at the first field over the limit. */
class TooWide {}

const NOTHING: Size = { depth: 0, fields: 0 };

/**
 * Depth and breadth limits, so a single document cannot make the server do unbounded work (deep nesting,
 * thousands of aliases). Fragments are followed, but each fragment is measured once and its size reused:
 * following every spread anew costs 2^n for n fragments that each spread the next one twice, and a 1 KB
 * document held the event loop for seconds (docs/decisions/0139-graphql-validation-is-linear.md). Measuring
 * stops at the first field over the limit, and is not continued into an unknown fragment or around a cycle
 * (graphql-js's own rules refuse those documents). graphql-armor's max-depth and max-aliases were measured against
 * this rule and not adopted (docs/decisions/0227-graphql-limits-stay-ours.md).
 */
export function limitsRule(maxDepth: number, maxFields: number) {
  return (context: ValidationContext): ASTVisitor => {
    const measure = fragmentMeasurer(context, maxFields);
    let reported = false;
    return {
      OperationDefinition(node) {
        if (reported) return;
        const error = limitError(node, measure, maxDepth, maxFields);
        if (error === null) return;
        reported = true;
        context.reportError(error);
      },
    };
  };
}

function limitError(
  node: OperationDefinitionNode,
  measure: (set: SelectionSetNode) => Size,
  maxDepth: number,
  maxFields: number,
): GraphQLError | null {
  let size: Size;
  try {
    size = measure(node.selectionSet);
  } catch (err) {
    if (!(err instanceof TooWide)) throw err;
    size = { depth: 0, fields: maxFields + 1 };
  }
  const refuse = (message: string) =>
    new GraphQLError(message, { nodes: [node], extensions: { code: "BAD_USER_INPUT" } });
  if (size.fields > maxFields) return refuse(`Query selects more than ${maxFields} fields; the limit is ${maxFields}`);
  // An operation's own fields are level 1.
  const depth = size.depth + 1;
  if (depth > maxDepth) return refuse(`Query is nested ${depth} levels deep; the limit is ${maxDepth}`);
  return null;
}

/**
 * Measures selection sets of one document, each fragment's once. An unknown fragment, or one met again while
 * it is being measured (a cycle), adds nothing.
 */
function fragmentMeasurer(context: ValidationContext, maxFields: number): (set: SelectionSetNode) => Size {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of context.getDocument().definitions)
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  /** A fragment's size, or null while it is being measured (so meeting it again is a cycle). */
  const sizes = new Map<string, Size | null>();
  const fragmentSize = (name: string): Size => {
    const known = sizes.get(name);
    if (known !== undefined) return known ?? NOTHING;
    const fragment = fragments.get(name);
    if (fragment === undefined) return NOTHING;
    sizes.set(name, null);
    const size = measure(fragment.selectionSet);
    sizes.set(name, size);
    return size;
  };
  const measure = (set: SelectionSetNode): Size => {
    let depth = 0;
    let fields = 0;
    for (const sel of set.selections) {
      let inner: Size;
      if (sel.kind === Kind.FIELD) {
        fields++;
        if (sel.selectionSet === undefined) inner = NOTHING;
        else {
          const below = measure(sel.selectionSet);
          // Introspection's type references (`ofType { ofType { … } }`, nine deep in graphql-js's own query) are a
          // chain of one field each: they cost nothing in breadth, so they do not count as depth. Without this,
          // GraphiQL's and every standard client's introspection query (depth 15) was refused.
          inner = { depth: sel.name.value === "ofType" ? below.depth : below.depth + 1, fields: below.fields };
        }
      } else if (sel.kind === Kind.INLINE_FRAGMENT) inner = measure(sel.selectionSet);
      else inner = fragmentSize(sel.name.value);
      depth = Math.max(depth, inner.depth);
      fields += inner.fields;
      if (fields > maxFields) throw new TooWide();
    }
    return { depth, fields };
  };
  return measure;
}
