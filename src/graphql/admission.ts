import {
  getOperationAST,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule,
} from "graphql";
import type { Principal } from "../auth/principal.js";
import { documentNesting, MAX_DOCUMENT_NESTING, tooDeepMessage } from "./nesting.js";
import { limitsRule } from "./limits.js";
import { costError, operationCost } from "./cost.js";
import { checkoutViewError, outsideCheckoutView } from "./checkout-view.js";

// GraphQL admission: what a document and an operation must pass before they run, the same for both doors of
// /graphql (HTTP in http-edge.ts, websockets in ws-edge.ts) and the REST shim's fixed documents. One place for
// the rules: nesting before any parse, validation (graphql-js's rules and the depth and field limits), the
// operation's verdict (no subscription over HTTP, a client token's checkout view, the cost budget).
// docs/decisions/0221-one-graphql-admission.md.

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
  /** Every rule a document is validated with. */
  readonly rules: readonly ValidationRule[] = [...specifiedRules, this.limitsRule];
  private readonly valid = new WeakSet<DocumentNode>();
  private readonly outsideView = new WeakMap<DocumentNode, string[]>();
  private readonly cost: CostJudge;

  constructor(
    readonly schema: GraphQLSchema,
    private readonly options: AdmissionOptions,
  ) {
    this.cost = options.cost ?? serviceCost;
  }

  /** A document nested too deeply is refused from its text, before any parser sees it (graphql/nesting.ts). */
  tooDeep(source: string): GraphQLError | null {
    const nesting = documentNesting(source);
    return nesting > MAX_DOCUMENT_NESTING ? badInput(tooDeepMessage(nesting)) : null;
  }

  /** Text → document: the nesting check, then the parse (`parseWith`: a parser that shares documents by text). */
  parse(source: string, parseWith: (source: string) => DocumentNode = parse): Parsed {
    const deep = this.tooDeep(source);
    if (deep !== null) return { errors: [deep] };
    try {
      return { document: parseWith(source) };
    } catch (err) {
      return {
        errors: [err instanceof GraphQLError ? err : badInput("The document could not be parsed")],
      };
    }
  }

  /**
   * Validation with every rule, once per document object (a parser that shares documents by text makes a document
   * that validated once valid for good). Without introspection, suggestions naming the schema are cut.
   */
  validate(document: DocumentNode): GraphQLError[] {
    if (this.valid.has(document)) return [];
    const errors = validate(this.schema, document, this.rules);
    if (errors.length === 0) {
      this.valid.add(document);
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
    // Apollo would run a subscription operation over HTTP as a query (its resolvers expect a stream: INTERNAL).
    if (op.transport === "http" && operation.operation === "subscription")
      return new GraphQLError("Subscriptions are served over graphql-ws (WebSocket) on /graphql, not over HTTP", {
        extensions: { code: "BAD_USER_INPUT", http: { status: 400 } },
      });
    if (op.principal.type === "client") {
      const outside = this.outsideCheckoutView(op.document);
      if (outside.length > 0) return checkoutViewError(outside);
    }
    return this.cost(this.schema, op.document, op.variables ?? undefined, op.operationName, this.options.maxCost);
  }

  private outsideCheckoutView(document: DocumentNode): string[] {
    let outside = this.outsideView.get(document);
    if (outside === undefined) this.outsideView.set(document, (outside = outsideCheckoutView(this.schema, document)));
    return outside;
  }
}
