import type { ContainerType } from "type-graphql";

/** A class, as type-graphql and MikroORM take them (resolvers, entities). */
export type ClassOf<T extends object = object> = new (...args: never[]) => T;

/**
 * type-graphql's container for one app: each resolver class maps to the instance its module built with
 * its own dependencies. The schema is built once per process (it is the same for every app), so the
 * container travels in each request's context. A class no module registered (a dependency-free
 * resolver) is constructed once on first use.
 */
export class ResolverContainer implements ContainerType {
  private readonly instances = new Map<unknown, object>();

  constructor(instances: object[]) {
    for (const i of instances) this.instances.set(i.constructor, i);
  }

  get<T extends object>(cls: ClassOf<T>): T {
    let instance = this.instances.get(cls);
    if (instance === undefined) {
      instance = new (cls as unknown as new () => T)();
      this.instances.set(cls, instance);
    }
    return instance as T;
  }
}
