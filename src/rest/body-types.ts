import {
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isRequiredInputField,
  typeFromAST,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLLeafType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import type { FieldError } from "../errors.js";

/** One field of a REST body: its GraphQL input type, and whether the body must carry it. */
export interface BodyField {
  name: string;
  type: GraphQLInputType;
  required: boolean;
  /** What a value of the wrong type hears, where the field's rule says it better (validation/rules.ts TypeMessage). */
  typeMessage?: string;
}

/** The field's own words for a value of the wrong type, if its rule gave some. */
const typeMessageOf = (f: { extensions?: Readonly<Record<string, unknown>> | null }): string | undefined => {
  const m = f.extensions?.typeMessage;
  return typeof m === "string" ? m : undefined;
};

/**
 * The fields of a route's body with what GraphQL would demand of them: the fields of `bodyVariable`'s input
 * object, or the operation's variables themselves (required when non-null without a default).
 */
export function bodyShape(schema: GraphQLSchema, document: DocumentNode, bodyVariable?: string): BodyField[] {
  const op = document.definitions.find((d): d is OperationDefinitionNode => d.kind === "OperationDefinition");
  const vars = (op?.variableDefinitions ?? []).map((def) => {
    const type = typeFromAST(schema, def.type) as GraphQLInputType;
    return { name: def.variable.name.value, type, required: isNonNullType(type) && def.defaultValue === undefined };
  });
  if (bodyVariable === undefined) return vars;
  const t = vars.find((v) => v.name === bodyVariable)?.type;
  const inner = t !== undefined && isNonNullType(t) ? t.ofType : t;
  if (inner === undefined || !isInputObjectType(inner)) throw new Error(`$${bodyVariable} is not an input object`);
  return Object.values(inner.getFields()).map((f) => ({
    name: f.name,
    type: f.type,
    required: isRequiredInputField(f),
    typeMessage: typeMessageOf(f),
  }));
}

/** What a value of a built-in or our own scalar must be, said of the JSON body (never a GraphQL type name). */
const SCALAR_WORDS: Record<string, string> = {
  Float: "must be a number",
  Int: "must be a whole number",
  String: "must be a string",
  ID: "must be a string",
  Boolean: "must be true or false",
  JSONObject: "must be a JSON object",
};

function leafProblem(value: unknown, type: GraphQLLeafType): string | null {
  try {
    if (type.parseValue(value) !== undefined) return null;
  } catch {
    // refused: said below in the body's words
  }
  if (isEnumType(type))
    return `must be one of ${type
      .getValues()
      .map((v) => v.name)
      .join(", ")}`;
  if (type.name === "Int" && Number.isInteger(value)) return "must be a whole number from -2147483648 to 2147483647";
  return SCALAR_WORDS[type.name] ?? "is not valid";
}

/**
 * The body's values checked against the types of the route's operation before it runs, so a REST caller reads
 * "amount must be a number" where GraphQL would say `Variable "$input" got invalid value …; Float cannot
 * represent …`. Mirrors GraphQL's own input coercion (parseValue of each scalar, one value for a list of one),
 * so nothing this lets through is refused by GraphQL for its type. Paths are dotted like the rules' (`qrData.items.0.name`).
 */
export function bodyTypeProblems(body: Record<string, unknown>, fields: BodyField[]): FieldError[] {
  const out: FieldError[] = [];
  for (const f of fields) checkField(body[f.name], f, f.name, out);
  return out;
}

function checkField(value: unknown, f: Omit<BodyField, "name">, path: string, out: FieldError[]): void {
  if (value === undefined) {
    if (f.required) out.push({ field: path, message: "is required" });
    return;
  }
  checkValue(value, f.type, path, out, f.typeMessage);
}

function checkValue(
  value: unknown,
  type: GraphQLInputType,
  path: string,
  out: FieldError[],
  typeMessage?: string,
): void {
  if (value === null) {
    if (isNonNullType(type)) out.push({ field: path, message: `${expectation(type.ofType)}, not null` });
    return;
  }
  const t = isNonNullType(type) ? type.ofType : type;
  if (isListType(t)) {
    if (Array.isArray(value)) return value.forEach((v, i) => checkValue(v, t.ofType, `${path}.${i}`, out));
    // GraphQL takes a lone value as a list of one; anything that is not a valid item is named as a list.
    const inner: FieldError[] = [];
    checkValue(value, t.ofType, path, inner);
    if (inner.length > 0) out.push({ field: path, message: `must be an array` });
    return;
  }
  if (isInputObjectType(t)) {
    if (typeof value !== "object" || Array.isArray(value))
      return void out.push({ field: path, message: "must be an object" });
    for (const f of Object.values(t.getFields()))
      checkField(
        (value as Record<string, unknown>)[f.name],
        { type: f.type, required: isRequiredInputField(f), typeMessage: typeMessageOf(f) },
        `${path}.${f.name}`,
        out,
      );
    return;
  }
  const problem = leafProblem(value, t);
  if (problem !== null) out.push({ field: path, message: typeMessage ?? problem });
}

/** "must be …" for a type, whatever the value (used for a null where a value is needed). */
function expectation(type: GraphQLInputType): string {
  if (isNonNullType(type)) return expectation(type.ofType);
  if (isListType(type)) return "must be an array";
  if (isInputObjectType(type)) return "must be an object";
  if (isEnumType(type))
    return `must be one of ${type
      .getValues()
      .map((v) => v.name)
      .join(", ")}`;
  return SCALAR_WORDS[type.name] ?? "must be given";
}
