// Lets `@modelcontextprotocol/conformance` (written for Node 22: it imports
// `globSync` from "fs") run on Node 20: its "fs" import resolves to a shim
// that re-exports node:fs plus a small globSync (the suite only uses it to
// collect `**/checks.json` result files). Loaded with `node --import`.
import { register } from "node:module";

register("./node20-hooks.mjs", import.meta.url);
