#!/usr/bin/env node
// The `leasehold` executable: loads the TypeScript CLI through tsx and hands
// it the Next.js front end, so server/ itself never imports Next.js.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

process.env.NEXT_TELEMETRY_DISABLED ??= "1";
register();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { main } = await import("../server/cli/main.ts");
const { terminalContext } = await import("../server/cli/terminal.ts");
const loadWeb = async () => (await import("./next-web.ts")).createNextFrontEnd(root);
const code = await main(process.argv.slice(2), terminalContext(process.env, process.cwd(), loadWeb));
process.exitCode = code;
// Subcommands close what they open; a lingering handle must not keep a
// finished command alive.
setTimeout(() => process.exit(code), 50).unref();
