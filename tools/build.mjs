#!/usr/bin/env node
// Builds what must be built, only when its inputs changed: the native
// sandbox addon, the two executables (dist/, see below) and the Next.js admin
// UI. Used by `npm start`, `npm test` and the vitest set-up.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DIST, EXECUTABLES, STAMP, STAMP_FORMAT, readStamp, sha256, staleReason } from "../bin/compiled.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const WEB_INPUTS = ["app", "server", "common", "next.config.ts", "package-lock.json", "tsconfig.json", "package.json"];
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

/*
 * The executables: one esbuild bundle per executable (bin/<name>-main.ts →
 * dist/<name>.mjs) holding every module of the checkout it imports, with
 * npm packages left as imports Node resolves from node_modules. A bundle
 * rather than one emitted file per source: the executables then need no
 * loader and no resolution of extension-less TypeScript imports at run
 * time, and a module that finds files of the checkout does so through
 * common/paths (the project root), which holds in both layouts.
 *
 * Every checkout file esbuild reads goes through `onLoad` below, so the
 * stamp (dist/build.json) records the hash of exactly the bytes that were
 * compiled; the executables compare it with the sources at start-up.
 */
const BUILD_INPUTS = ["tsconfig.json", "tools/build.mjs"];
const LOADERS = { ".ts": "ts", ".mts": "ts", ".tsx": "tsx", ".js": "js", ".mjs": "js", ".json": "json" };

function recordInput(inputs, abs, bytes, stat) {
  inputs[path.relative(root, abs)] = { sha256: sha256(bytes), size: stat.size, mtimeMs: stat.mtimeMs };
}

function readInput(abs) {
  const fd = fs.openSync(abs, "r");
  try {
    const bytes = fs.readFileSync(fd);
    return { bytes, stat: fs.fstatSync(fd) };
  } finally {
    fs.closeSync(fd);
  }
}

const recordInputs = (inputs) => ({
  name: "leasehold-record-inputs",
  setup(build) {
    build.onLoad({ filter: /\.(m?ts|tsx|m?js|json)$/ }, (args) => {
      if (path.relative(root, args.path).startsWith("..") || args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const { bytes, stat } = readInput(args.path);
      recordInput(inputs, args.path, bytes, stat);
      return { contents: bytes, loader: LOADERS[path.extname(args.path)] };
    });
  },
});

/** Writes next to the target and renames: a reader sees the old file or the new one, never half of one. */
function writeAtomically(file, bytes) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, bytes, { mode: 0o644, flag: "w" });
  fs.chmodSync(tmp, 0o644); // the umask may have taken bits away; never added any
  fs.renameSync(tmp, file);
}

async function esbuildVersion() {
  return (await import("esbuild")).version;
}

export async function buildExecutables({ force = false } = {}) {
  const version = await esbuildVersion();
  if (!force && readStamp()?.esbuild === version && staleReason({ hashAll: true }) === null) return false;
  const esbuild = await import("esbuild");
  console.log("[build] compiling the executables (esbuild) …");
  const started = Date.now();
  const inputs = {};
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(EXECUTABLES.map((name) => [name, path.join(root, "bin", `${name}-main.ts`)])),
    outdir: DIST,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    // Error and class names stay as written (messages and logs show them).
    keepNames: true,
    sourcemap: "linked",
    sourcesContent: false,
    legalComments: "none",
    logLevel: "warning",
    write: false,
    plugins: [recordInputs(inputs)],
  }).finally(() => esbuild.stop()); // its service process would otherwise outlive the build (npm start keeps running)
  for (const rel of BUILD_INPUTS) {
    const abs = path.join(root, rel);
    const { bytes, stat } = readInput(abs);
    recordInput(inputs, abs, bytes, stat);
  }
  fs.mkdirSync(DIST, { recursive: true, mode: 0o755 });
  fs.chmodSync(DIST, 0o755);
  const outputs = {};
  for (const file of result.outputFiles) {
    writeAtomically(file.path, file.contents);
    outputs[path.relative(DIST, file.path)] = sha256(file.contents);
  }
  // The stamp last: until it is renamed into place, the executables see the
  // old stamp, whose inputs no longer match, and refuse rather than guess.
  const stamp = { format: STAMP_FORMAT, esbuild: version, outputs, inputs: Object.fromEntries(Object.entries(inputs).sort()) };
  writeAtomically(STAMP, `${JSON.stringify(stamp, null, 1)}\n`);
  console.log(`[build] executables compiled in ${((Date.now() - started) / 1000).toFixed(1)} s (${Object.keys(inputs).length} inputs → dist/)`);
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
    await buildExecutables(options);
    buildWeb(options);
  });
}

/** Only the executables (the vitest set-up: tests spawn bin/*.mjs), under the same lock. */
export async function ensureExecutables(options = {}) {
  return withBuildLock(() => buildExecutables(options));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildAll({ force: process.argv.includes("--force") });
}
