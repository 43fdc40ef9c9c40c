#!/usr/bin/env node
// Builds what must be built, only when its inputs changed: the Next.js admin
// UI and the native sandbox addon. Used by `npm start` and `npm test`.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const WEB_INPUTS = ["app", "server", "next.config.ts", "package-lock.json", "tsconfig.json", "package.json"];
const SKIP = /(^|\/)(node_modules|\.next|test|testdata|bench)(\/|$)|\.test\.tsx?$/;

function hashInputs(inputs) {
  const hash = createHash("sha256");
  const walk = (rel) => {
    const abs = path.join(root, rel);
    if (!fs.existsSync(abs) || SKIP.test(rel)) return;
    const stat = fs.statSync(abs);
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(abs).sort()) walk(path.join(rel, name));
    } else {
      hash.update(rel).update("\0").update(fs.readFileSync(abs)).update("\0");
    }
  };
  for (const input of inputs) walk(input);
  return hash.digest("hex");
}

export function buildWeb({ force = false } = {}) {
  const stamp = path.join(root, ".next", "leasehold-inputs-sha256");
  const digest = hashInputs(WEB_INPUTS);
  const built = fs.existsSync(path.join(root, ".next", "BUILD_ID"));
  if (!force && built && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8").trim() === digest) return false;
  console.log("[build] building the admin UI (next build) …");
  const started = Date.now();
  execFileSync(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  fs.writeFileSync(stamp, `${digest}\n`);
  console.log(`[build] admin UI built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return true;
}

/**
 * Two builds at once (two test runs, a test run and `npm start`) would
 * write the same .next directory; the second waits for the first.
 */
async function withBuildLock(fn) {
  const lockPath = path.join(root, ".cache", "build.lock");
  fs.mkdirSync(path.dirname(lockPath), { recursive: true });
  for (let waited = 0; ; waited += 500) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: "wx" });
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      const holder = Number(fs.readFileSync(lockPath, "utf8"));
      let alive;
      try {
        process.kill(holder, 0);
        alive = true;
      } catch {
        alive = false;
      }
      if (!alive) {
        fs.rmSync(lockPath, { force: true });
        continue;
      }
      if (waited === 0) console.log(`[build] waiting for another build (pid ${holder}) …`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockPath, { force: true });
  }
}

export async function buildAll(options = {}) {
  await withBuildLock(async () => {
    // The sandbox launcher first: it is what every job runs in. Its own script
    // installs the Debian build packages it needs and skips unchanged sources.
    const { buildNative } = await import("../native/build.mjs");
    buildNative();
    buildWeb(options);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildAll({ force: process.argv.includes("--force") });
}
