// Small test files run as one: each part (*.part.ts) keeps its own describe blocks and starts its own service, but the
// service's modules are loaded once for them all instead of once a file (about 2 CPU-seconds a file; docs/testing.md).
import "./idempotency-leftovers.part.js";
import "./meta-exact.part.js";
import "./money.part.js";
import "./monitor-cadence.part.js";
import "./transactions-query.part.js";
import "./recheck-bounds.part.js";
