import { M0001Initial } from "./m0001-initial.js";
import { M0002ExactJson } from "./m0002-exact-json.js";
import { M0003Upstreams } from "./m0003-upstreams.js";
import { M0004CrashLeftovers } from "./m0004-crash-leftovers.js";
import { M0005LinkClientUnique } from "./m0005-link-client-unique.js";
import { M0006LinkProtocol } from "./m0006-link-protocol.js";
import { M0007AreasRegistered } from "./m0007-areas-registered.js";
import { M0008DeliveryBodies } from "./m0008-delivery-bodies.js";
import { M0009MerchantReturnUrl } from "./m0009-merchant-return-url.js";
import { M0010DeliveryCreatedIndex } from "./m0010-delivery-created-index.js";
import { M0011UpstreamRef } from "./m0011-upstream-ref.js";

/**
 * The central migrations: the shared tables. An area's own tables and constraints come with its module
 * (`ModuleDefinition.migrations`), run after these in module order. Listed explicitly (not globbed) so the compiled
 * build needs no file discovery. m0001–m0006 predate that and keep the areas' tables of their time: a shipped
 * migration is never moved or edited.
 */
export const MIGRATIONS = [
  { name: "m0001-initial", class: M0001Initial },
  { name: "m0002-exact-json", class: M0002ExactJson },
  { name: "m0003-upstreams", class: M0003Upstreams },
  { name: "m0004-crash-leftovers", class: M0004CrashLeftovers },
  { name: "m0005-link-client-unique", class: M0005LinkClientUnique },
  { name: "m0006-link-protocol", class: M0006LinkProtocol },
  { name: "m0007-areas-registered", class: M0007AreasRegistered },
  { name: "m0008-delivery-bodies", class: M0008DeliveryBodies },
  { name: "m0009-merchant-return-url", class: M0009MerchantReturnUrl },
  { name: "m0010-delivery-created-index", class: M0010DeliveryCreatedIndex },
  { name: "m0011-upstream-ref", class: M0011UpstreamRef },
];
