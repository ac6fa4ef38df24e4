import { M0001Initial } from "./m0001-initial.js";
import { M0002ExactJson } from "./m0002-exact-json.js";

/** Listed explicitly (not globbed) so the compiled build needs no file discovery. */
export const MIGRATIONS = [
  { name: "m0001-initial", class: M0001Initial },
  { name: "m0002-exact-json", class: M0002ExactJson },
];
