export { createLinkSimulator, type LinkSimulator, type LinkSimulatorOptions } from "./link-simulator.js";
export type { LinkAction, LinkCurrency } from "./client-store.js";
