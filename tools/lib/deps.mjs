// Installs npm dependencies when node_modules is missing or older than the
// lockfile. Only node builtins: this runs before anything is installed.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const STAMP = "node_modules/.leasehold-lock-sha256";

export function ensureNodeModules(root) {
  const lock = fs.readFileSync(path.join(root, "package-lock.json"));
  const digest = createHash("sha256").update(lock).digest("hex");
  const stampPath = path.join(root, STAMP);
  const current = fs.existsSync(stampPath) ? fs.readFileSync(stampPath, "utf8").trim() : "";
  if (current === digest && fs.existsSync(path.join(root, "node_modules/.package-lock.json"))) return false;
  console.log("[setup] installing npm dependencies (npm ci) …");
  const started = Date.now();
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: root, stdio: "inherit" });
  fs.writeFileSync(stampPath, `${digest}\n`);
  console.log(`[setup] npm dependencies installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return true;
}
