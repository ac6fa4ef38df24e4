import { Field, ID, getMetadataStorage } from "type-graphql";
import type { ClassOf } from "./container.js";
import type { Listed } from "./listed-enums.js";

type FieldEntry = ReturnType<typeof getMetadataStorage>["fields"][number];

/**
 * Nullable ID fields of an object or input type whose names are not known where the type is declared: what an API
 * key is bound to is a field each area names (`AreaDefinition.key.target.field`), which the modules below app.ts may
 * not name. As a listed enum (listed-enums.ts), they are filled from the module list just before its schema is built
 * (`buildAppSchema`, synchronously): the previous list's fields are taken out of type-graphql's metadata and this
 * list's put in, after the field `after`, so each schema has its own app's fields in the area order.
 */
export class ListedFields implements Listed {
  private added: FieldEntry[] = [];

  constructor(
    private readonly type: ClassOf,
    private readonly after: string,
  ) {}

  get name(): string {
    return `${this.type.name}.${this.after}+`;
  }

  fill(names: readonly string[]): void {
    const storage = getMetadataStorage();
    storage.fields = storage.fields.filter((f) => !this.added.includes(f));
    const before = storage.fields.length;
    for (const name of names) Field(() => ID, { nullable: true })(this.type.prototype, name);
    this.added = storage.fields.splice(before);
    const anchor = storage.fields.findIndex((f) => f.target === this.type && f.name === this.after);
    storage.fields.splice(anchor + 1, 0, ...this.added);
    // type-graphql keeps a type's field list once a schema is built: this type's is made again from the metadata.
    for (const t of [...storage.objectTypes, ...storage.inputTypes]) if (t.target === this.type) t.fields = undefined;
  }
}
