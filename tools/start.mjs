#!/usr/bin/env node
// `npm start`: from a fresh clone, install what is missing, build what is
// stale, then run `leasehold start` with the caller's environment.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureNodeModules } from "./lib/deps.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

try {
  ensureNodeModules(root);
  const { buildAll } = await import("./build.mjs");
  await buildAll();
} catch (error) {
  console.error(`leasehold: setup failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  process.exit(1);
}

const child = spawn(process.execPath, [path.join(root, "bin/leasehold.mjs"), "start", ...process.argv.slice(2)], {
  cwd: process.cwd(),
  stdio: "inherit",
  env: process.env,
});
// The hub handles SIGINT/SIGTERM itself (clean database close); pass them on.
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + 1 : 1)));
