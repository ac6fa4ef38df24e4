import {
  getOperationAST,
  GraphQLError,
  parse,
  separateOperations,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from "graphql";
import type { Principal } from "../auth/principal.js";
import { TtlCache } from "../cache/ttl-cache.js";
import { documentNesting, MAX_DOCUMENT_NESTING, tooDeepMessage } from "./nesting.js";
import { limitsRule } from "./limits.js";
import { costError, costReadsVariables, operationCost } from "./cost.js";
import { checkoutViewError, outsideCheckoutView } from "./checkout-view.js";

// GraphQL admission: what a document and an operation must pass before they run, the same for both doors of
// /graphql (HTTP in http-edge.ts, websockets in ws-edge.ts) and the REST shim's fixed documents. One place for
// the rules: nesting before any parse, validation (graphql-js's rules and the depth and field limits), the
// operation's verdict (no subscription over HTTP, a client token's checkout view, the cost budget).
// docs/decisions/0221-one-graphql-admission.md. Valid documents are kept by their text, and each operation's
// verdict with its document (docs/decisions/0238-one-graphql-execution-path.md).

/**
 * The one narrow call to the cost rules: an error when the operation would cost more than the budget. Whatever
 * prices operations (graphql/cost.ts today) slots in here.
 */
export type CostJudge = (
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | null | undefined,
  budget: number,
) => GraphQLError | null;

/** The cost rules of graphql/cost.ts (docs/decisions/0132-graphql-cost.md). */
export const serviceCost: CostJudge = (schema, document, variables, operationName, budget) =>
  costError(operationCost(schema, document, variables, operationName), budget);

/** The depth and field-count limits every document is validated with (graphql/limits.ts). */
export const MAX_DEPTH = 12;
export const MAX_FIELDS = 500;

/** Valid documents kept by their text: the most recently used this many, each for at most DOCUMENT_TTL_MS. */
export const MAX_DOCUMENTS = 1000;
const DOCUMENT_TTL_MS = 3600_000;

/**
 * Introspection refused where it is off (production), on both doors: the rule (and message) Apollo Server adds
 * itself, so a document that passed one door's validation is valid on the other too.
 */
const noIntrospection: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value === "__schema" || node.name.value === "__type")
      context.reportError(
        new GraphQLError(
          "GraphQL introspection is not allowed by Apollo Server, but the query contained __schema or __type. " +
            "To enable introspection, pass introspection: true to ApolloServer in production",
          { nodes: [node], extensions: { validationErrorCode: "INTROSPECTION_DISABLED" } },
        ),
      );
  },
});

export interface AdmissionOptions {
  /** Whether "Did you mean …?" suggestions may name fields and types (off where introspection is off). */
  introspection: boolean;
  /** The cost budget of one operation (GRAPHQL_MAX_COST). */
  maxCost: number;
  cost?: CostJudge;
}

/** One operation as either door sees it once its document is parsed and valid. */
export interface OperationRequest {
  document: DocumentNode;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  principal: Principal;
  /** HTTP serves queries and mutations; subscriptions are served over the websocket only. */
  transport: "http" | "websocket";
}

/** A document's text after admission: the parsed document, or the errors to answer with. */
export type Parsed = { document: DocumentNode } | { errors: GraphQLError[] };

const badInput = (message: string) => new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT" } });

export class GraphQLAdmission {
  /** The edge's own validation rule (depth, fields): Apollo takes it beside graphql-js's own. */
  readonly limitsRule: ValidationRule = limitsRule(MAX_DEPTH, MAX_FIELDS);
  /** Every rule a document is validated with (Apollo adds the introspection rule itself where it is off). */
  readonly rules: readonly ValidationRule[];
  private readonly valid = new WeakSet<DocumentNode>();
  /** Valid documents by text: the same text is the same DocumentNode (validated once, verdicts kept with it). */
  private readonly documents: TtlCache<DocumentNode>;
  /**
   * A document's verdicts, by operation, door and what the credential may read (`full`, or a client token's
   * `checkout` view): the only part of the credential a verdict depends on. The cost is in it too, unless a
   * request's variables can change it (`first: $n`): such an operation is priced at each request.
   */
  private readonly verdicts = new WeakMap<DocumentNode, Map<string, GraphQLError | null>>();
  private readonly readsVariables = new WeakMap<DocumentNode, boolean>();
  private readonly cost: CostJudge;

  constructor(
    readonly schema: GraphQLSchema,
    private readonly options: AdmissionOptions,
    now: () => number = Date.now,
  ) {
    this.cost = options.cost ?? serviceCost;
    this.rules = [...specifiedRules, this.limitsRule, ...(options.introspection ? [] : [noIntrospection])];
    this.documents = new TtlCache(DOCUMENT_TTL_MS, now, MAX_DOCUMENTS);
  }

  /** A document nested too deeply is refused from its text, before any parser sees it (graphql/nesting.ts). */
  tooDeep(source: string): GraphQLError | null {
    const nesting = documentNesting(source);
    return nesting > MAX_DOCUMENT_NESTING ? badInput(tooDeepMessage(nesting)) : null;
  }

  /** A document of this text that validated before (the same object each time), or undefined. */
  known(source: string): DocumentNode | undefined {
    return this.documents.peek(source);
  }

  /** A document another validator (Apollo's, with `rules`) found valid: kept under its text as if validated here. */
  remember(source: string, document: DocumentNode): void {
    this.valid.add(document);
    this.documents.put(source, document);
  }

  /** Text → document: one that validated before, else the nesting check and a parse. */
  parse(source: string): Parsed {
    const known = this.documents.peek(source);
    if (known !== undefined) return { document: known };
    const deep = this.tooDeep(source);
    if (deep !== null) return { errors: [deep] };
    try {
      return { document: parse(source) };
    } catch (err) {
      return {
        errors: [err instanceof GraphQLError ? err : badInput("The document could not be parsed")],
      };
    }
  }

  /**
   * Validation with every rule, once per document object; a valid one is kept under its text (`source`), so the
   * next request with that text gets this document, valid for good. Without introspection, suggestions naming the
   * schema are cut.
   */
  validate(document: DocumentNode, source?: string): GraphQLError[] {
    if (this.valid.has(document)) return [];
    const errors = validate(this.schema, document, this.rules);
    if (errors.length === 0) {
      this.valid.add(document);
      if (source !== undefined) this.documents.put(source, document);
      return [];
    }
    if (this.options.introspection) return [...errors];
    return errors.map((e) => Object.assign(e, { message: e.message.replace(/ ?Did you mean .*\?$/, "") }));
  }

  /** A fixed document (the REST shim's): parsed and validated once; an invalid one is a programming error. */
  prepare(source: string): DocumentNode {
    const parsed = this.parse(source);
    const errors = "errors" in parsed ? parsed.errors : this.validate(parsed.document);
    if (errors.length > 0 || "errors" in parsed)
      throw new Error(`invalid fixed GraphQL document: ${errors.map((e) => e.message).join("; ")}`);
    return parsed.document;
  }

  /**
   * The verdict on one operation of a valid document: null when it may run, else the one error it is refused with.
   * In this order: an operation that cannot be identified, a subscription over HTTP, a client token's fields
   * outside the checkout view, the cost budget.
   */
  operation(op: OperationRequest): GraphQLError | null {
    const operation = getOperationAST(op.document, op.operationName);
    if (operation == null) return badInput("Unable to identify operation");
    const view = op.principal.type === "client" ? "checkout" : "full";
    const key = `${operation.name?.value ?? ""}|${op.transport}|${view}`;
    let verdicts = this.verdicts.get(op.document);
    if (verdicts === undefined) this.verdicts.set(op.document, (verdicts = new Map()));
    let verdict = verdicts.get(key);
    if (verdict === undefined) verdicts.set(key, (verdict = this.verdict(op.document, operation, op.transport, view)));
    // A copy: a door may rewrite the error it answers with (the websocket's formatter does).
    if (verdict !== null) return new GraphQLError(verdict.message, { extensions: { ...verdict.extensions } });
    if (!this.pricedByVariables(op.document)) return null;
    return this.cost(this.schema, op.document, op.variables ?? undefined, op.operationName, this.options.maxCost);
  }

  /** What does not depend on the variables: the door, the checkout view (of this operation alone) and, mostly, the cost. */
  private verdict(
    document: DocumentNode,
    operation: OperationDefinitionNode,
    transport: OperationRequest["transport"],
    view: "checkout" | "full",
  ): GraphQLError | null {
    // Apollo would run a subscription operation over HTTP as a query (its resolvers expect a stream: INTERNAL).
    if (transport === "http" && operation.operation === "subscription")
      return new GraphQLError("Subscriptions are served over graphql-ws (WebSocket) on /graphql, not over HTTP", {
        extensions: { code: "BAD_USER_INPUT", http: { status: 400 } },
      });
    const name = operation.name?.value;
    if (view === "checkout") {
      // The operation being run and the fragments it spreads: a document's other operations are not this request's.
      const alone = separateOperations(document)[name ?? ""] ?? document;
      const outside = outsideCheckoutView(this.schema, alone);
      if (outside.length > 0) return checkoutViewError(outside);
    }
    if (this.pricedByVariables(document)) return null;
    return this.cost(this.schema, document, undefined, name, this.options.maxCost);
  }

  /** Whether a request's variables can change the cost (a `first: $n`); the service's rules only (cost.ts). */
  private pricedByVariables(document: DocumentNode): boolean {
    if (this.options.cost !== undefined) return true;
    let reads = this.readsVariables.get(document);
    if (reads === undefined) this.readsVariables.set(document, (reads = costReadsVariables(document)));
    return reads;
  }
}
