#!/usr/bin/env node
// The `leasehold` executable: runs the CLI compiled by `npm run build`
// (dist/leasehold.mjs, from bin/leasehold-main.ts). No TypeScript is compiled
// at run time and nothing is cached outside the checkout (bin/compiled.mjs).
import { importCompiled } from "./compiled.mjs";

process.env.NEXT_TELEMETRY_DISABLED ??= "1";
process.setSourceMapsEnabled(true);
const { run } = await importCompiled("leasehold");
const code = await run(process.argv.slice(2));
process.exitCode = code;
// Subcommands close what they open; a lingering handle must not keep a
// finished command alive.
setTimeout(() => process.exit(code), 50).unref();
