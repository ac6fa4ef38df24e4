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
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  visit,
} from "graphql";

/**
 * What one operation may cost before it runs (docs/decisions/0132-graphql-cost.md). Every selected field costs
 * 1, times how many times it will be resolved: a list multiplies what is selected under it by its size
 * (`first` where the field takes one, otherwise the assumed size below). Fields that do more than read a
 * value cost more (a PNG render, a query per row). Introspection is not priced (it is off in production).
 * graphql-armor's cost-limit was measured against this rule and not adopted
 * (docs/decisions/0227-graphql-limits-stay-ours.md).
 */
const FIELD_COST: Record<string, number> = {
  "Query.transactions": 5,
  "Query.webhookDeliveries": 5,
  "Transaction.qrImage": 50,
  "Transaction.events": 5,
  "Transaction.webhookDeliveries": 5,
  // One aggregate statement over the window's rows; the webhook health one more.
  "Query.overview": 20,
  "Overview.webhooks": 10,
};

/** How many items a list without `first` is assumed to hold. */
const LIST_SIZE: Record<string, number> = {
  "Transaction.events": 20,
  "WebhookDelivery.log": 10,
  // The overview: always USD and KHR; three areas; a series has one point per bucket (48 hourly, 31 daily for
  // 30 days; up to 401 for the longest range, priced as 100: its points are a few numbers each).
  "Overview.currencies": 2,
  "Overview.areas": 3,
  "Overview.merchants": 50,
  "OverviewCurrency.series": 100,
  "OverviewGroup.paid": 2,
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
  if (operation === undefined) return { cost: 0, misplaced: [] };
  const root =
    operation.operation === "query"
      ? schema.getQueryType()
      : operation.operation === "mutation"
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  if (!root) return { cost: 0, misplaced: [] };
  const walker = new CostWalker(schema, fragments, variables ?? {});
  return walker.walk(operation.selectionSet, root, 1, null);
}

/**
 * Whether the cost of an operation of this document can depend on its variables: only a `first` argument is read
 * from them (CostWalker.first). Without one, the cost is the same for every request of the document.
 */
export function costReadsVariables(document: DocumentNode): boolean {
  let reads = false;
  visit(document, {
    Argument(node) {
      if (node.name.value === "first" && node.value.kind === Kind.VARIABLE) reads = true;
    },
  });
  return reads;
}

/** Costs above this are over any budget: counting further only spends time. */
const HOPELESS = 1e12;

/**
 * Walks an operation's selections, pricing each field. A fragment is priced once per way it can be spread
 * (its connection size, and whether it is resolved once or many times) and that price is reused, scaled by
 * how many times it is resolved: following every spread anew costs 2^n for n fragments that each spread the
 * next one twice (docs/decisions/0139-graphql-validation-is-linear.md).
 */
class CostWalker {
  /** Fragment name + how it is spread → its cost when resolved once, and the fields misplaced in it. */
  private readonly priced = new Map<string, Cost | null>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: Map<string, FragmentDefinitionNode>,
    private readonly variables: Record<string, unknown>,
  ) {}

  walk(set: SelectionSetNode, type: GraphQLCompositeType, times: number, connectionSize: number | null): Cost {
    const out: Cost = { cost: 0, misplaced: [] };
    for (const sel of set.selections) {
      if (out.cost > HOPELESS) break;
      let inner: Cost | null;
      if (sel.kind === Kind.INLINE_FRAGMENT) {
        const t = sel.typeCondition ? this.schema.getType(sel.typeCondition.name.value) : type;
        inner =
          t && (isObjectType(t) || isInterfaceType(t)) ? this.walk(sel.selectionSet, t, times, connectionSize) : null;
      } else if (sel.kind === Kind.FRAGMENT_SPREAD) inner = this.spread(sel.name.value, times, connectionSize);
      else inner = this.field(sel, type, times, connectionSize);
      if (inner !== null) add(out, inner);
    }
    return out;
  }

  /** A fragment's cost at `times`: priced once with the same connection size and the same "once or many". */
  private spread(name: string, times: number, connectionSize: number | null): Cost | null {
    if (times === 0) return null;
    const many = times > 1;
    const key = `${name}|${connectionSize ?? ""}|${many ? "many" : "once"}`;
    if (!this.priced.has(key)) {
      const frag = this.fragments.get(name);
      const t = frag && this.schema.getType(frag.typeCondition.name.value);
      // null while it is priced: a spread of itself (a cycle, refused by validation) adds nothing.
      this.priced.set(key, null);
      if (t && (isObjectType(t) || isInterfaceType(t))) {
        // Priced at times 1 (or 2, which misplaces exactly what any times > 1 does), then scaled.
        const unit = many ? 2 : 1;
        const c = this.walk(frag.selectionSet, t, unit, connectionSize);
        this.priced.set(key, { cost: c.cost / unit, misplaced: c.misplaced });
      }
    }
    const c = this.priced.get(key);
    return c == null ? null : { cost: c.cost * times, misplaced: c.misplaced };
  }

  private field(sel: FieldNode, type: GraphQLCompositeType, times: number, connectionSize: number | null): Cost | null {
    const name = sel.name.value;
    if (name.startsWith("__")) return null;
    if (!isObjectType(type) && !isInterfaceType(type)) return null;
    const def = type.getFields()[name] as GraphQLField<unknown, unknown> | undefined;
    if (def === undefined) return null;
    const coordinate = `${type.name}.${name}`;
    const out: Cost = { cost: (FIELD_COST[coordinate] ?? 1) * times, misplaced: [] };
    if (SINGLE_ONLY.has(coordinate) && times > 1) out.misplaced.push(coordinate);
    const inner = getNamedType(def.type);
    if (!sel.selectionSet || (!isObjectType(inner) && !isInterfaceType(inner))) return out;
    const first = this.first(def, sel);
    const list = isListType(getNullableType(def.type));
    const size = !list
      ? 1
      : name === "edges" && connectionSize !== null
        ? connectionSize
        : (first ?? LIST_SIZE[coordinate] ?? DEFAULT_LIST_SIZE);
    // A connection (an object with `first`): its edges are `first` long.
    const below = this.walk(sel.selectionSet, inner, times * size, !list && first !== null ? first : null);
    add(out, below);
    return out;
  }

  private first(def: GraphQLField<unknown, unknown>, sel: FieldNode): number | null {
    if (!def.args.some((a) => a.name === "first")) return null;
    try {
      const v = getArgumentValues(def, sel, this.variables).first;
      if (typeof v === "number" && Number.isFinite(v)) return Math.max(0, v);
    } catch {
      /* an invalid argument is reported by validation or execution, not here */
    }
    return null;
  }
}

/** Adds `inner` to `out`; a misplaced field is named once (a reused fragment would repeat it 2^n times). */
function add(out: Cost, inner: Cost): void {
  out.cost += inner.cost;
  for (const m of inner.misplaced) if (!out.misplaced.includes(m)) out.misplaced.push(m);
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
