import type { DemoPart, DemoPartDeps, ModuleDefinition, Module } from "../module.js";
import { MODULES, type ModuleList } from "../app.js";
import { WebhookInbox } from "../simulators/inbox.js";
import { loadDemos, type LoadedDemo } from "./areas.js";

export type DemoModuleDeps = DemoPartDeps;

export interface DemoModule extends Module {
  /** The demo's built-in webhook receiver (`/sim/inbox`). */
  inbox: WebhookInbox;
  /** Each area's simulator (its demo part's `simulator`), by the area's kind: tests drive them. */
  simulators: Record<string, unknown>;
}

/** What the demo module's `settings` read: each area's own settings, for its demo part, in the parts' order. */
export type DemoSettings = unknown[];

/**
 * Demo mode (SIMULATORS, on by default outside production): the simulated upstreams of the app's areas and the
 * built-in webhook inbox, mounted on the service's port. An area's demo part is its own (`demo` of its module
 * definition, its `demo.ts`); this module only mounts, starts and stops them. commands.ts adds it to the list only in
 * demo mode; tests add it through their support (test/support/app.ts). The demo tenant is seeded by ./seed.ts.
 */
export function demoModuleOf(loaded: LoadedDemo[]): ModuleDefinition<DemoModuleDeps, DemoModule, DemoSettings> {
  const withParts = loaded.filter((l) => l.demo.part !== undefined);
  return {
    name: "demo",
    // An area's part is given what the area's own settings read (the token its client sends, …), read the same way.
    settings: (env, config) => withParts.map((l) => l.def.settings?.(env, config)),
    create(deps, settings) {
      const parts: [string, DemoPart][] = withParts.map((l, i) => [
        l.def.area?.key.kind ?? l.def.name,
        (l.demo.part as NonNullable<typeof l.demo.part>)(deps, settings[i]),
      ]);
      const inbox = new WebhookInbox();
      return {
        inbox,
        simulators: Object.fromEntries(parts.map(([kind, p]) => [kind, p.simulator])),
        simulatorControls: Object.fromEntries(parts.map(([kind, p]) => [kind, p.controls])),
        mount(app) {
          for (const [, p] of parts) p.mount(app);
          app.use(inbox.router());
        },
        async start() {
          for (const [, p] of parts) await p.start?.();
        },
        async stop() {
          for (const [, p] of parts) await p.stop?.();
        },
      };
    },
  };
}

/** A module list with demo mode's module first, so the simulators listen before the areas' monitors start. */
export async function withDemo(modules: ModuleList): Promise<ModuleList> {
  return [demoModuleOf(await loadDemos(modules)) as ModuleList[number], ...modules];
}

/** The service's modules with demo mode's. */
export const DEMO_MODULES = await withDemo(MODULES);
/** The demo module of DEMO_MODULES (tests read its simulators and inbox: `app.module(demoModule)`). */
export const demoModule = DEMO_MODULES[0] as ModuleDefinition<DemoModuleDeps, DemoModule, DemoSettings>;

export { seedDemo, type DemoFile } from "./seed.js";
