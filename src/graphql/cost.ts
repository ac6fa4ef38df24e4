import {
  GraphQLError,
  Kind,
  getArgumentValues,
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  isInterfaceType,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";

/**
 * What one operation may cost before it runs (docs/decisions.md "GraphQL cost"). Every selected field costs
 * 1, times how many times it will be resolved: a list multiplies what is selected under it by its size
 * (`first` where the field takes one, otherwise the assumed size below). Fields that do more than read a
 * value cost more (a PNG render, a query per row). Introspection is not priced (it is off in production).
 */
const FIELD_COST: Record<string, number> = {
  "Query.transactions": 5,
  "Query.webhookDeliveries": 5,
  "Transaction.qrImage": 50,
  "Transaction.events": 5,
  "Transaction.webhookDeliveries": 5,
};

/** How many items a list without `first` is assumed to hold. */
const LIST_SIZE: Record<string, number> = {
  "Transaction.events": 20,
  "WebhookDelivery.log": 10,
};
const DEFAULT_LIST_SIZE = 50;

/** Fields rendered only where one transaction is read: in a list they would be done once per row. */
const SINGLE_ONLY = new Set(["Transaction.qrImage"]);

export interface Cost {
  cost: number;
  /** Fields refused where they are (qrImage in a list). */
  misplaced: string[];
}

export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName?: string | null,
): Cost {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    else if (def.kind === Kind.OPERATION_DEFINITION && (operationName == null || def.name?.value === operationName))
      operation ??= def;
  }
  const out: Cost = { cost: 0, misplaced: [] };
  if (operation === undefined) return out;
  const root =
    operation.operation === "query"
      ? schema.getQueryType()
      : operation.operation === "mutation"
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  if (!root) return out;

  const walk = (
    set: SelectionSetNode,
    type: GraphQLCompositeType,
    times: number,
    connectionSize: number | null,
    seen: Set<string>,
  ): void => {
    for (const sel of set.selections) {
      if (out.cost > 1e12) return;
      if (sel.kind === Kind.INLINE_FRAGMENT) {
        const t = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : type;
        if (t && (isObjectType(t) || isInterfaceType(t))) walk(sel.selectionSet, t, times, connectionSize, seen);
        continue;
      }
      if (sel.kind === Kind.FRAGMENT_SPREAD) {
        const frag = fragments.get(sel.name.value);
        if (!frag || seen.has(frag.name.value)) continue;
        const t = schema.getType(frag.typeCondition.name.value);
        if (t && (isObjectType(t) || isInterfaceType(t)))
          walk(frag.selectionSet, t, times, connectionSize, new Set([...seen, frag.name.value]));
        continue;
      }
      const name = sel.name.value;
      if (name.startsWith("__")) continue;
      if (!isObjectType(type) && !isInterfaceType(type)) continue;
      const def = type.getFields()[name] as GraphQLField<unknown, unknown> | undefined;
      if (def === undefined) continue;
      const coordinate = `${type.name}.${name}`;
      out.cost += (FIELD_COST[coordinate] ?? 1) * times;
      if (SINGLE_ONLY.has(coordinate) && times > 1) out.misplaced.push(coordinate);
      if (!sel.selectionSet) continue;
      let first: number | null = null;
      if (def.args.some((a) => a.name === "first")) {
        try {
          const v = getArgumentValues(def, sel, variables ?? {}).first;
          if (typeof v === "number" && Number.isFinite(v)) first = Math.max(0, v);
        } catch {
          /* an invalid argument is reported by validation or execution, not here */
        }
      }
      const inner = getNamedType(def.type);
      if (!isObjectType(inner) && !isInterfaceType(inner)) continue;
      const list = isListType(getNullableType(def.type));
      const size = !list
        ? 1
        : name === "edges" && connectionSize !== null
          ? connectionSize
          : (first ?? LIST_SIZE[coordinate] ?? DEFAULT_LIST_SIZE);
      // A connection (an object with `first`): its edges are `first` long.
      walk(sel.selectionSet, inner, times * size, !list && first !== null ? first : null, seen);
    }
  };
  walk(operation.selectionSet, root, 1, null, new Set());
  return out;
}

/** The refusal of an operation over budget (or with a field where it may not be): 400 BAD_USER_INPUT. */
export function costError(c: Cost, budget: number): GraphQLError | null {
  if (c.cost > budget)
    return new GraphQLError(
      `Query cost ${Math.ceil(c.cost)} exceeds the budget of ${budget} per operation (GRAPHQL_MAX_COST); ` +
        "ask for fewer rows (first) or fewer fields per row",
      { extensions: { code: "BAD_USER_INPUT", http: { status: 400 } } },
    );
  if (c.misplaced.length > 0)
    return new GraphQLError(
      `${[...new Set(c.misplaced)].join(", ")} is rendered only where one transaction is read (transaction(id)), ` +
        "not for every row of a list",
      { extensions: { code: "BAD_USER_INPUT", http: { status: 400 } } },
    );
  return null;
}
