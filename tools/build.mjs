#!/usr/bin/env node
// Builds what must be built, only when its inputs changed: the native
// sandbox addon, the two executables (dist/, see below) and the Next.js admin
// UI. Used by `npm start`, `npm test` and the vitest set-up.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DIST, EXECUTABLES, STAMP, STAMP_FORMAT, WORKER_DIST, WORKER_SOURCES, readStamp, sha256, staleReason, workerIds } from "../bin/compiled.mjs";
import { bundleDigest } from "../server/trust/bundle-digest.mjs";
import { applyPostgresDriverGuard } from "./lib/postgres-driver-guard.mjs";

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
const BUILD_INPUTS = ["tsconfig.json", "tools/build.mjs", "bin/compiled.mjs", "server/trust/bundle-digest.mjs", "agent-guest/workers/versions.json"];
/** Where the hub CLI's split chunks go, inside dist/. */
const CHUNKS = "chunks";

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
  let result;
  let workers;
  // The hub's CLI is split at its dynamic imports (a command, the web front
  // end, the database code are each loaded when first used; dist/chunks/),
  // so a short command loads only what it runs. The guest stays one file.
  const built = (name, split) =>
    esbuild.build({
      absWorkingDir: root,
      entryPoints: { [name]: path.join(root, "bin", `${name}-main.ts`) },
      outdir: DIST,
      outExtension: { ".js": ".mjs" },
      ...(split ? { splitting: true, chunkNames: `${CHUNKS}/[name]-[hash]` } : {}),
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
    });
  try {
    const each = await Promise.all(EXECUTABLES.map((name) => built(name, name === "leasehold")));
    result = { outputFiles: each.flatMap((r) => r.outputFiles) };
    workers = await compileWorkers(esbuild, inputs);
  } finally {
    await esbuild.stop(); // its service process would otherwise outlive the build (npm start keeps running)
  }
  for (const rel of BUILD_INPUTS) {
    const abs = path.join(root, rel);
    if (!fs.existsSync(abs)) continue; // a checkout without worker bundles has no versions.json
    const { bytes, stat } = readInput(abs);
    recordInput(inputs, abs, bytes, stat);
  }
  fs.mkdirSync(DIST, { recursive: true, mode: 0o755 });
  fs.chmodSync(DIST, 0o755);
  const outputs = {};
  for (const file of [...result.outputFiles, ...workers.files]) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true, mode: 0o755 });
    fs.chmodSync(path.dirname(file.path), 0o755);
    writeAtomically(file.path, file.contents);
    outputs[path.relative(DIST, file.path)] = sha256(file.contents);
  }
  // Chunks of earlier builds: no executable imports them any more.
  const chunkDir = path.join(DIST, CHUNKS);
  for (const name of fs.existsSync(chunkDir) ? fs.readdirSync(chunkDir) : []) {
    if (!(path.join(CHUNKS, name) in outputs)) fs.rmSync(path.join(chunkDir, name), { force: true });
  }
  // The stamp last: until it is renamed into place, the executables see the
  // old stamp, whose inputs no longer match, and refuse rather than guess.
  const stamp = { format: STAMP_FORMAT, esbuild: version, outputs, workers: Object.keys(workers.digests), worker_digests: workers.digests, inputs: Object.fromEntries(Object.entries(inputs).sort()) };
  writeAtomically(STAMP, `${JSON.stringify(stamp, null, 1)}\n`);
  console.log(`[build] executables compiled in ${((Date.now() - started) / 1000).toFixed(1)} s (${Object.keys(inputs).length} inputs → dist/)`);
  for (const [id, digest] of Object.entries(workers.digests)) console.log(`[build] worker bundle ${id}: ${digest}`);
  return true;
}

/*
 * Worker bundles: agent-guest/workers/<id>/main.ts → dist/workers/<id>/
 * {worker.mjs, bundle.json}. One self-contained ESM file per worker (node
 * builtins only, nothing external: the guest pipes it into `node -` inside a
 * sandbox that has no node_modules), for the node that runs the build (the
 * guest runs the same one). Deterministic — no source map, no timestamps,
 * paths relative to the checkout — so the same sources give the same
 * digest anywhere. The digest (bundleDigest, the function guest and hub
 * use) is recorded in the stamp and printed.
 */
const BUNDLE_SCHEMA = "leasehold.worker-bundle/1";

function workerVersions() {
  const file = path.join(WORKER_SOURCES, "versions.json");
  if (!fs.existsSync(file)) return {};
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

async function compileWorkers(esbuild, inputs) {
  const ids = workerIds();
  const versions = workerVersions();
  const files = [];
  const digests = {};
  for (const id of ids) {
    const entry = path.join(WORKER_SOURCES, id, "main.ts");
    if (!fs.existsSync(entry)) throw new Error(`worker ${id}: agent-guest/workers/${id}/main.ts is missing (every directory of agent-guest/workers/ is a worker bundle)`);
    const version = versions[id];
    if (typeof version !== "string" || version === "") throw new Error(`worker ${id}: no version in agent-guest/workers/versions.json`);
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: [entry],
      bundle: true,
      platform: "node",
      format: "esm",
      target: `node${process.versions.node}`,
      legalComments: "none",
      logLevel: "warning",
      write: false,
      outfile: path.join(WORKER_DIST, id, "worker.mjs"),
      plugins: [recordInputs(inputs)],
    });
    const [code] = result.outputFiles;
    if (result.outputFiles.length !== 1 || code === undefined) throw new Error(`worker ${id}: esbuild wrote ${result.outputFiles.length} files, expected one`);
    const manifest = Buffer.from(`${JSON.stringify({ schema: BUNDLE_SCHEMA, capability: id, version, runtime: "node", entry: "worker.mjs" })}\n`);
    const dir = path.join(WORKER_DIST, id);
    files.push({ path: path.join(dir, "worker.mjs"), contents: code.contents }, { path: path.join(dir, "bundle.json"), contents: manifest });
    digests[id] = bundleDigest([
      { path: "bundle.json", bytes: manifest },
      { path: "worker.mjs", bytes: code.contents },
    ]);
  }
  // A worker removed since the last build leaves no stale bundle behind.
  if (fs.existsSync(WORKER_DIST)) {
    for (const name of fs.readdirSync(WORKER_DIST)) if (!ids.includes(name)) fs.rmSync(path.join(WORKER_DIST, name), { recursive: true, force: true });
  }
  return { files, digests };
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
    // The database driver's closed-socket guard: the hub refuses to open PostgreSQL without it.
    applyPostgresDriverGuard(root);
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
  return withBuildLock(() => {
    applyPostgresDriverGuard(root);
    return buildExecutables(options);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildAll({ force: process.argv.includes("--force") });
}
