import type { ContainerType } from "type-graphql";

/** A class, as type-graphql and MikroORM take them (resolvers, entities). */
export type ClassOf<T extends object = object> = new (...args: never[]) => T;

/**
 * type-graphql's container for one app: each resolver class maps to the instance its module built with
 * its own dependencies. The schema is built once per process (it is the same for every app), so the
 * container travels in each request's context. Nothing is constructed here: a resolver class of the schema that
 * no module created is refused when the app is built (the constructor), not made up on first use.
 */
export class ResolverContainer implements ContainerType {
  private readonly instances = new Map<unknown, object>();

  /** `declared`: the resolver classes the schema is built from; `instances`: what the modules' `create` returned. */
  constructor(declared: readonly ClassOf[], instances: readonly object[]) {
    for (const i of instances) this.instances.set(i.constructor, i);
    const missing = declared.filter((cls) => !this.instances.has(cls)).map((cls) => cls.name);
    if (missing.length > 0)
      throw new Error(
        `No module created the resolver ${missing.length === 1 ? "class" : "classes"} ${missing.join(", ")}: ` +
          "a module that lists a resolver class returns its instance from create() (src/module.ts)",
      );
  }

  get<T extends object>(cls: ClassOf<T>): T {
    const instance = this.instances.get(cls);
    if (instance === undefined) throw new Error(`No module created the resolver class ${cls.name}`);
    return instance as T;
  }
}
