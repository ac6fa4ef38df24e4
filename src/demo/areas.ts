import type { AreaDemo, ModuleDefinition, Module } from "../module.js";

/** A module of the app's list with its demo part and seed loaded (its `demo()`). */
export interface LoadedDemo {
  def: ModuleDefinition<never, Module, unknown>;
  demo: AreaDemo;
}

/**
 * The demo of each module of a list that registers one (`demo: () => import("./demo.js")`), in list order: the
 * areas' simulators and seeds come from their own folders, read from the module list, so this folder names no area.
 */
export async function loadDemos(modules: readonly ModuleDefinition<never, Module, unknown>[]): Promise<LoadedDemo[]> {
  const loaded = await Promise.all(
    modules.map(async (def) => (def.demo === undefined ? null : { def, demo: await def.demo() })),
  );
  return loaded.filter((l): l is LoadedDemo => l !== null);
}
