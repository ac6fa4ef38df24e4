import {
  getNamedType,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  Kind,
  parse,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import type { ErrorCode } from "../errors.js";
import { HTTP_STATUS } from "../graphql/errors.js";
import { IGNORED_FIELDS_HEADER } from "./body-fields.js";
import type { RestRoute } from "./route-table.js";
import type { KeyKindSpec } from "../auth/key-kinds.js";

/**
 * The OpenAPI 3.1 document of the REST shim, built from what the shim itself runs: the route table (path, key
 * kind, GraphQL document, shape) and the schema's input and output types. A field added to a route's document
 * or an input class appears here with no second edit, so the contract cannot drift from the code.
 */
export type JsonSchema = Record<string, unknown>;

/** What the document says of an area (module.ts AreaDefinition): its key kind and its tag. */
export interface OpenApiArea {
  key: KeyKindSpec;
  openApiTag: { name: string; description: string };
  docsExample?: DocsExample;
}

/**
 * An area's examples on /docs (module.ts AreaDefinition.docsExample). Its paths' examples hold `{{name}}`
 * placeholders; demo mode's /docs fills them with live values (rest/demo-examples.ts): `transactionId` and what
 * `answer` picks from one generate, issued on `path` with `body()` and the demo tenant's key in demo.json's
 * `keys[demoKey]`, and a new value of `fresh`'s on each of its generate paths.
 */
export interface DocsExample {
  path: string;
  body(): unknown;
  demoKey: string;
  /** Placeholder → where its value is in the generate's answer (a dotted path: `data.md5`). */
  answer?: Record<string, string>;
  /** Placeholders a generate takes new every time (an order id unique per merchant), and how the page names one. */
  fresh?: Record<string, { make(): string; what: string }>;
  /** How to pay one on the demo's simulator, for the document's description (`POST /sim/network/pay {md5}`). */
  payHint?: string;
}

/** "{{a}}, {{b}} and {{c}}" */
const listed = (names: string[]): string => {
  const p = names.map((n) => `{{${n}}}`);
  return p.length < 2 ? p.join("") : `${p.slice(0, -1).join(", ")} and ${p[p.length - 1]}`;
};

/** The description's words on the examples: where the payer's actions are, and what replaces the placeholders. */
function examplesHelp(areas: readonly OpenApiArea[]): string {
  const ex = areas.flatMap((a) => (a.docsExample === undefined ? [] : [a.docsExample]));
  const payHint = ex.find((e) => e.payHint !== undefined)?.payHint;
  const fresh = ex.flatMap((e) => Object.entries(e.fresh ?? {}));
  const answered = [...new Set(ex.flatMap((e) => Object.keys(e.answer ?? {})))].filter(
    (n) => !fresh.some(([f]) => f === n),
  );
  const renew = fresh.map(([n, f]) => `, and {{${n}}} with ${f.what}`).join("");
  return (
    `under /sim${payHint === undefined ? "" : ` (e.g. ${payHint})`}. Elsewhere, replace ` +
    `${listed([...answered, "transactionId"])} in the examples with values from a generate answer${renew}.`
  );
}

/** One security scheme per kind of key, so /docs asks for each key once and sends each path its own. */
function securitySchemes(areas: readonly OpenApiArea[]): Record<string, JsonSchema> {
  return Object.fromEntries(
    areas.map(({ key }) => [
      key.scheme.name,
      { type: "apiKey", in: "header", name: "x-api-key", description: key.scheme.description },
    ]),
  );
}

/** Answers every path can give: bad input, bad key, body too large, rate limit, outage, bug. */
const COMMON_ERRORS: ErrorCode[] = [
  "BAD_USER_INPUT",
  "UNAUTHENTICATED",
  "RATE_LIMITED",
  "SERVICE_UNAVAILABLE",
  "INTERNAL",
];

function scalar(t: GraphQLScalarType): JsonSchema {
  switch (t.name) {
    case "String":
    case "ID":
      return { type: "string" };
    case "Int":
      return { type: "integer" };
    case "Float":
      return { type: "number" };
    case "Boolean":
      return { type: "boolean" };
    case "JSONObject":
      // Any members (meta as sent, a decoded QR's fields): said, so generated clients may read them.
      return { type: "object", additionalProperties: true };
    case "DateTimeISO":
      return { type: "string", format: "date-time" };
    default:
      return {};
  }
}

function nullable(s: JsonSchema): JsonSchema {
  if (typeof s.type === "string") return { ...s, type: [s.type, "null"] };
  return { anyOf: [s, { type: "null" }] };
}

/**
 * Bounds on a field's schema. maxLength, pattern and minimum hold only for a value of their type, so a nullable
 * field ({type: [t, "null"]}) still takes null; an enum must list null itself.
 */
function withBounds(s: JsonSchema, bounds: JsonSchema): JsonSchema {
  if (Object.keys(bounds).length === 0) return s;
  const takesNull = Array.isArray(s.type) && s.type.includes("null");
  const allowed = Array.isArray(bounds.enum) && takesNull ? { enum: [...(bounds.enum as unknown[]), null] } : {};
  // A narrower type (an integer where GraphQL says Float) keeps the field's null.
  const type = typeof bounds.type === "string" && takesNull ? { type: [bounds.type, "null"] } : {};
  return { ...s, ...bounds, ...allowed, ...type };
}

/** The JSON Schema keywords a field or an input class carries (validation/rules.ts Bounds). */
const boundsOf = (x: { extensions?: Readonly<Record<string, unknown>> | null }): JsonSchema =>
  (x.extensions as { jsonSchema?: JsonSchema } | undefined)?.jsonSchema ?? {};

function withDescription(s: JsonSchema, description: string | null | undefined): JsonSchema {
  return description ? { ...s, description } : s;
}

/** An input type as the body's JSON: non-null fields required; unknown fields are ignored by the shim, so allowed. */
export function inputSchema(t: GraphQLInputType): JsonSchema {
  const inner = t instanceof GraphQLNonNull ? t.ofType : t;
  if (inner instanceof GraphQLList) return { type: "array", items: inputSchema(inner.ofType) };
  if (inner instanceof GraphQLEnumType) return { type: "string", enum: inner.getValues().map((v) => v.value) };
  if (inner instanceof GraphQLScalarType) return scalar(inner);
  const obj = inner as GraphQLInputObjectType;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const f of Object.values(obj.getFields())) {
    // Bounds (validation/rules.ts) the field's rule checks: length, pattern, range, the allowed values.
    properties[f.name] = withDescription(withBounds(inputSchema(f.type), boundsOf(f)), f.description);
    if (f.type instanceof GraphQLNonNull) required.push(f.name);
  }
  // And the class's: rules that relate its fields (a KHR amount is whole).
  return withDescription(
    { type: "object", properties, ...(required.length ? { required } : {}), ...boundsOf(obj) },
    obj.description,
  );
}

/**
 * The JSON a selection produces. `dropNulls`: the object's null fields are left out (the `compact` shape, and the
 * outbox's snapshot), so a nullable field is optional instead of possibly null.
 */
export function outputSchema(
  t: GraphQLOutputType,
  selection: SelectionSetNode | undefined,
  dropNulls = false,
): JsonSchema {
  const nonNull = t instanceof GraphQLNonNull;
  const inner = nonNull ? (t as GraphQLNonNull<GraphQLOutputType>).ofType : t;
  let s: JsonSchema;
  if (inner instanceof GraphQLList) s = { type: "array", items: outputSchema(inner.ofType, selection) };
  else if (inner instanceof GraphQLEnumType) s = { type: "string", enum: inner.getValues().map((v) => v.value) };
  else if (inner instanceof GraphQLScalarType) s = scalar(inner);
  else {
    const obj = inner as GraphQLObjectType;
    const fields = obj.getFields();
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    const selected =
      selection?.selections.flatMap((sel) => (sel.kind === Kind.FIELD ? [sel] : [])) ??
      Object.values(fields).map((f) => ({ name: { value: f.name }, selectionSet: undefined }));
    for (const sel of selected) {
      const f = fields[sel.name.value];
      if (f === undefined) continue;
      const isNonNull = f.type instanceof GraphQLNonNull;
      const fieldSchema = outputSchema(
        dropNulls && !isNonNull ? new GraphQLNonNull(f.type) : f.type,
        sel.selectionSet ?? undefined,
      );
      properties[f.name] = withDescription(fieldSchema, f.description);
      if (isNonNull || !dropNulls) required.push(f.name);
    }
    // Closed: a member the document does not name is a drift the contract test reports.
    s = withDescription({ type: "object", properties, required, additionalProperties: false }, obj.description);
  }
  return nonNull ? s : nullable(s);
}

function operationOf(document: string): OperationDefinitionNode {
  const op = parse(document).definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (op === undefined) throw new Error("route document has no operation");
  return op as OperationDefinitionNode;
}

function requestSchema(schema: GraphQLSchema, route: RestRoute, op: OperationDefinitionNode): JsonSchema {
  const vars = op.variableDefinitions ?? [];
  const typeOf = (name: string) => {
    const v = vars.find((d) => d.variable.name.value === name);
    if (v === undefined) throw new Error(`${route.path}: no variable $${name}`);
    return typeFromAST(schema, v.type as never) as GraphQLInputType;
  };
  if (route.bodyVariable !== undefined)
    return inputSchema(new GraphQLNonNull(getNamedType(typeOf(route.bodyVariable))));
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const v of vars) {
    const name = v.variable.name.value;
    const t = typeOf(name);
    // A scalar argument's bounds come from the check its service applies (RouteDoc.argBounds).
    properties[name] = withBounds(inputSchema(t), route.doc.argBounds?.[name] ?? {});
    if (t instanceof GraphQLNonNull) required.push(name);
  }
  return { type: "object", properties, ...(required.length ? { required } : {}), ...(route.doc.bodyBounds ?? {}) };
}

function responseSchema(schema: GraphQLSchema, route: RestRoute, op: OperationDefinitionNode): JsonSchema {
  const root = op.operation === "mutation" ? schema.getMutationType() : schema.getQueryType();
  const field = op.selectionSet.selections.find(
    (s) => s.kind === Kind.FIELD && (s.alias ?? s.name).value === route.shape.field,
  );
  if (root == null || field === undefined || field.kind !== Kind.FIELD) throw new Error(`${route.path}: no root field`);
  const def = root.getFields()[field.name.value];
  // A missing result is answered as an error (404), never as a 200 with null: the 200 body is the non-null type.
  const t = def.type instanceof GraphQLNonNull ? def.type : new GraphQLNonNull(def.type);
  return outputSchema(t, field.selectionSet, route.shape.compact);
}

export const ERROR_BODY: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message", "details"],
      properties: {
        code: { type: "string", description: "One of the codes of this status" },
        message: { type: "string" },
        details: {
          type: "array",
          items: {
            type: "object",
            required: ["field", "message"],
            properties: { field: { type: "string" }, message: { type: "string" } },
          },
        },
      },
    },
  },
};

function errorResponses(route: RestRoute): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...COMMON_ERRORS, ...route.doc.errors]) {
    const status = HTTP_STATUS[code];
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  // Answered before any route runs (rest/shim.ts, rest/client-error.ts): body over 64 KiB, the request not received
  // in time, headers too large.
  for (const status of [413, 408, 431]) byStatus.set(status, ["BAD_USER_INPUT"]);
  const out: Record<string, JsonSchema> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const body = structuredClone(ERROR_BODY) as { properties: { error: { properties: { code: JsonSchema } } } };
    body.properties.error.properties.code = { type: "string", enum: codes };
    out[String(status)] = {
      description: codes.join(", "),
      content: {
        "application/json": {
          schema: body,
          example: { error: { code: codes[0], message: "…", details: [] } },
        },
      },
    };
  }
  return out;
}

function operation(schema: GraphQLSchema, route: RestRoute, key: KeyKindSpec): JsonSchema {
  if (route.document === null) throw new Error(`${route.path}: not implemented`);
  const op = operationOf(route.document);
  const parameters: JsonSchema[] = [
    {
      name: "x-auth-type",
      in: "header",
      required: true,
      description: "The kind of the key; it must match the path's area, or the answer is 401",
      schema: { type: "string", const: key.authType },
      example: key.authType,
    },
  ];
  if (op.operation === "mutation")
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        "A retry with the same key and body within 24 h returns the first answer and creates nothing; " +
        "the same key with another body is 409",
      schema: { type: "string", maxLength: 255 },
    });
  return {
    operationId: route.path.replace(/^\//, "").replace(/[/-](\w)/g, (_m, c: string) => c.toUpperCase()),
    summary: route.doc.summary,
    ...(route.doc.description ? { description: route.doc.description } : {}),
    tags: [route.path.split("/")[1]],
    security: [{ [key.scheme.name]: [] }],
    parameters,
    requestBody: {
      required: true,
      content: { "application/json": { schema: requestSchema(schema, route, op), example: route.doc.example } },
    },
    responses: {
      "200": {
        description: "OK",
        headers: {
          [IGNORED_FIELDS_HEADER]: {
            description: "Body fields the contract does not know, ignored (legacy compatibility), by path",
            schema: { type: "string" },
          },
        },
        content: { "application/json": { schema: responseSchema(schema, route, op) } },
      },
      ...errorResponses(route),
    },
  };
}

export interface WebhookEventDoc {
  type: string;
  description: string;
}

/** The body of a delivery: the outbox event, with the snapshot's null fields left out. */
function webhookBody(schema: GraphQLSchema, type: string): JsonSchema {
  const snapshot = schema.getType("TransactionSnapshot") as GraphQLObjectType;
  return {
    type: "object",
    required: ["id", "type", "createdAt", "data"],
    properties: {
      id: { type: "string", description: "The event id (also x-event-id); de-duplicate on it" },
      type: { type: "string", const: type },
      createdAt: { type: "string", format: "date-time" },
      data: {
        type: "object",
        required: ["transaction", "meta"],
        properties: {
          transaction: outputSchema(new GraphQLNonNull(snapshot), undefined, true),
          meta: { type: "object", description: "The generate request's meta, exactly as sent" },
        },
      },
    },
  };
}

function webhooks(schema: GraphQLSchema, events: readonly WebhookEventDoc[]): Record<string, JsonSchema> {
  const header = (name: string, description: string, pattern?: string) => ({
    name,
    in: "header",
    required: true,
    description,
    schema: { type: "string", ...(pattern ? { pattern } : {}) },
  });
  const out: Record<string, JsonSchema> = {};
  for (const e of events)
    out[e.type] = {
      post: {
        operationId: `on${e.type.replace(/(?:^|[._-])(\w)/g, (_m, c: string) => c.toUpperCase())}`,
        summary: e.description,
        // Sent by this service to the merchant's endpoint: the signature headers are its proof, not an API key.
        security: [],
        description: `${e.description}. Verify with verifyWebhook(rawBody, headers, secrets) before trusting it.`,
        parameters: [
          header("x-timestamp", "Unix seconds when this attempt was signed", "^[0-9]+$"),
          header(
            "x-signature",
            'v1= + hex HMAC-SHA256 of x-timestamp + "." + raw body under the endpoint secret; ' +
              "two space-separated values during a secret rotation",
            "^v1=[0-9a-f]{64}( v1=[0-9a-f]{64})*$",
          ),
          header("x-event-id", "The body's id"),
          header("x-event-type", "The body's type"),
        ],
        requestBody: { required: true, content: { "application/json": { schema: webhookBody(schema, e.type) } } },
        responses: {
          "2XX": { description: "Received: not sent again" },
          default: { description: "Retried with exponential backoff for up to 24 h" },
        },
      },
    };
  return out;
}

export function openApiDocument(
  schema: GraphQLSchema,
  routes: readonly RestRoute[],
  events: readonly WebhookEventDoc[],
  version: string,
  areas: readonly OpenApiArea[],
): JsonSchema {
  const keyOf = (kind: string): KeyKindSpec => {
    const area = areas.find((a) => a.key.kind === kind);
    if (area === undefined) throw new Error(`no area declares the key kind "${kind}"`);
    return area.key;
  };
  const paths: Record<string, JsonSchema> = {};
  for (const route of routes)
    if (route.document !== null) paths[route.path] = { post: operation(schema, route, keyOf(route.kind)) };
  return {
    openapi: "3.1.0",
    info: {
      title: "Payment QR Service — REST",
      version,
      description:
        "The eight legacy REST endpoints. Every endpoint is POST with a JSON body and the x-api-key / x-auth-type " +
        "headers. Errors answer `{ error: { code, message, details } }`. In demo mode (`npm start`) the keys are " +
        "in DATA_DIR/demo.json (the reference page at /docs is authorised with them already, and its examples " +
        "are live values of the demo tenant: Try it out → Execute works as shown) and the payer's actions are " +
        examplesHelp(areas),
    },
    servers: [{ url: "/", description: "this service" }],
    tags: areas.map((a) => a.openApiTag),
    paths,
    webhooks: webhooks(schema, events),
    components: {
      securitySchemes: securitySchemes(areas),
    },
  };
}
