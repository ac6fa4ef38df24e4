// Small test files run as one: each part (*.part.ts) keeps its own describe blocks and starts its own service, but the
// service's modules are loaded once for them all instead of once a file (about 2 CPU-seconds a file; docs/testing.md).
import "./bad-input.part.js";
import "./legacy-fields.part.js";
import "./rest-words.part.js";
import "./shim.part.js";
import "./request-hygiene.part.js";
