export {
  createLinkSimulator,
  LINK_FAULT_MODES,
  type LinkFaultMode,
  type LinkSimulator,
  type LinkSimulatorOptions,
} from "./link-simulator.js";
export type { LinkAction, LinkCurrency } from "./client-store.js";
