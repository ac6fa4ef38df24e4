import { Extensions, FieldResolver, getMetadataStorage, Resolver, Root } from "type-graphql";
import { CHECKOUT_VIEW_EXTENSION } from "../graphql/checkout-view.js";
import type { AreaField } from "../module.js";
import type { AreaViews } from "./area-views.js";
import { TransactionFilterGql, TransactionGql } from "./transactions.types.js";
import { TransactionSnapshotGql } from "./transaction.types.js";

type ClassOf = new () => object;

/** One class per app's list of area fields: the schema of a module list is built once per process (graphql/schema.ts). */
const built = new Map<string, ClassOf[]>();

/**
 * The areas' own fields on the `Transaction` and `TransactionSnapshot` types (AreaDefinition.data; decision 0208):
 * type-graphql field resolvers, made from the areas' declarations, so the core's types declare none of them and a
 * schema has the fields of its own module list's areas. A Transaction's come from the row it was read from (its
 * area's `present`, no query); a snapshot's are keys of the stored event body, as the core placed them. Also names,
 * in the transactions search's description, the areas' fields it matches.
 */
export function areaFieldResolvers(views: AreaViews): ClassOf[] {
  const search = describeSearch(views);
  const key = `${views.kinds.join(",")}:${views.fields.map((f) => f.name).join(",")}:${search}`;
  let classes = built.get(key);
  if (classes === undefined) {
    classes = [
      fieldsOf(TransactionGql, `TransactionAreaFields[${key}]`, views.fields, (root, f) =>
        views.value((root as TransactionGql).record, f),
      ),
      fieldsOf(
        TransactionSnapshotGql,
        `TransactionSnapshotAreaFields[${key}]`,
        views.fields.filter((f) => f.snapshot !== undefined),
        (root, f) => (root as Record<string, unknown>)[f.name] ?? null,
      ),
    ];
    built.set(key, classes);
  }
  return classes;
}

function fieldsOf(
  type: ClassOf,
  name: string,
  fields: readonly AreaField[],
  value: (root: unknown, f: AreaField) => unknown,
): ClassOf {
  const cls = class {};
  Object.defineProperty(cls, "name", { value: name });
  Resolver(() => type)(cls);
  for (const f of fields) {
    const descriptor = { value: (root: unknown) => value(root, f), configurable: true };
    Object.defineProperty(cls.prototype, f.name, descriptor);
    // A snapshot's area key is there only when the transaction has it: nullable, and undescribed, as event keys are.
    const options =
      type === TransactionGql ? { nullable: f.nullable === true, description: f.description } : { nullable: true };
    FieldResolver(f.type as () => StringConstructor, options)(cls.prototype, f.name, descriptor);
    // Shown by the checkout view: a client token may read it (graphql/checkout-view.ts), on a snapshot too.
    if (f.checkout !== undefined) Extensions({ [CHECKOUT_VIEW_EXTENSION]: true })(cls.prototype, f.name, descriptor);
    Root()(cls.prototype, f.name, 0);
  }
  return cls;
}

/**
 * The `search` filter's description, from the app's areas (AreaViews.searchDescription): type-graphql reads a field's
 * description from its metadata when it builds a schema, and the resolver classes of a build are asked for just
 * before it, synchronously (app.ts), as the listed enums are filled (graphql/listed-enums.ts). The description is in
 * the resolver classes' key, so a schema built for other areas is never the one reused.
 */
function describeSearch(views: AreaViews): string {
  const field = getMetadataStorage().fields.find((f) => f.target === TransactionFilterGql && f.name === "search");
  if (field === undefined) throw new Error("TransactionFilter.search is not declared (transactions.types.ts)");
  field.description = views.searchDescription();
  return field.description;
}
