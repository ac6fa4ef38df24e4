#!/usr/bin/env node
// The entry point. The Node version is checked before anything else loads (node-version.ts). Then Node's compile
// cache is turned on before the service's modules load, so that a start after the first reuses the compiled code of
// its own and its dependencies' modules (docs/decisions/0267-node-compile-cache.md). The cache lives where
// NODE_COMPILE_CACHE says, or in the system's temporary directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
import "./node-version.js";
// The module object, not its named export: an older Node (no enableCompileCache) must get as far as the version
// check above, and a named import it lacks would fail before any code ran.
import nodeModule from "node:module";

nodeModule.enableCompileCache();
const { run } = await import("./commands.js");
run(process.argv.slice(2));
