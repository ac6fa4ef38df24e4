import type { ModuleDefinition, Module } from "../module.js";
import { MODULES } from "../app.js";
import type { KeyKinds } from "../auth/key-kinds.js";
import { WebhookInbox } from "../simulators/inbox.js";
import {
  DEMO_PARTS,
  demoSettings,
  type DemoPart,
  type DemoPartDeps,
  type DemoSettings,
  type DemoSimulators,
} from "./parts.js";

export interface DemoModuleDeps extends Omit<DemoPartDeps, "settings"> {
  /** The areas of this app: a demo part is mounted for each that has one. */
  kinds: Pick<KeyKinds, "kinds">;
}

export interface DemoModule extends Module, DemoSimulators {
  /** The demo's built-in webhook receiver (`/sim/inbox`). */
  inbox: WebhookInbox;
}

/**
 * Demo mode (SIMULATORS, on by default outside production): the simulated upstreams of the app's areas and the
 * built-in webhook inbox, mounted on the service's port. main.ts adds this module to the list only in demo mode;
 * tests add it through their support (test/support/app.ts). The demo tenant is seeded by ./seed.ts.
 */
export function createDemoModule(deps: DemoModuleDeps, settings: DemoSettings): DemoModule {
  const sims: DemoSimulators = {};
  const parts: [string, DemoPart][] = deps.kinds.kinds().flatMap((kind) => {
    const part = DEMO_PARTS[kind];
    return part === undefined ? [] : [[kind, part({ ...deps, settings }, sims)]];
  });
  const inbox = new WebhookInbox();
  return {
    ...sims,
    inbox,
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
}

export const demoModule: ModuleDefinition<DemoModuleDeps, DemoModule, DemoSettings> = {
  name: "demo",
  settings: demoSettings,
  create: createDemoModule,
};

/** The service's modules with demo mode's: first, so its simulators listen before the areas' monitors start. */
export const DEMO_MODULES = [demoModule, ...MODULES] as const;

export { seedDemo, type DemoFile } from "./seed.js";
