#!/usr/bin/env node
// The `leasehold-guest` executable: the per-host guest agent (agent-guest/),
// loaded through tsx like `leasehold`.
import { register } from "tsx/esm/api";

register();
const { guestMain } = await import("../agent-guest/cli.ts");
const code = await guestMain(process.argv.slice(2));
process.exitCode = code;
setTimeout(() => process.exit(code), 50).unref();
