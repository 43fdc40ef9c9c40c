#!/usr/bin/env node
// The `leasehold-guest` executable: the per-host guest agent (agent-guest/),
// compiled by `npm run build` into dist/leasehold-guest.mjs like `leasehold`.
import { importCompiled } from "./compiled.mjs";

process.setSourceMapsEnabled(true);
const { run } = await importCompiled("leasehold-guest");
const code = await run(process.argv.slice(2));
process.exitCode = code;
setTimeout(() => process.exit(code), 50).unref();
