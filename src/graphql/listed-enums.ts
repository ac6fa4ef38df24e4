import { registerEnumType } from "type-graphql";

/**
 * A GraphQL enum whose values are not known where it is declared: the `Area` and `KeyKind` enums list the areas of
 * the module list an app is built from (app.ts), which the modules below app.ts may not name. type-graphql registers
 * enums at import, as global metadata, and reads an enum's values when a schema is generated: a listed enum is
 * registered empty and filled from the module list just before its schema is built (synchronously, in
 * `buildAppSchema`), so each schema has its own app's values whatever other app the process built before.
 */
export class ListedEnum implements Listed {
  /** The object type-graphql reads; its keys are the values of the schema being built. */
  readonly values: Record<string, string> = {};

  constructor(readonly name: string) {
    registerEnumType(this.values, { name });
  }

  fill(values: readonly string[]): void {
    for (const k of Object.keys(this.values)) delete this.values[k];
    for (const v of values) this.values[v] = v;
  }
}

/**
 * What a module list fills just before its schema is built: a listed enum's values, or listed fields' names
 * (graphql/listed-fields.ts).
 */
export interface Listed {
  readonly name: string;
  fill(values: readonly string[]): void;
}

/** The values of one listed enum or set of fields in one schema (and an enum's description). */
export interface ListedValues {
  listed: Listed;
  values: readonly string[];
  description?: string;
}
