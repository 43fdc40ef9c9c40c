// The compiled executables in dist/ and the stamp that says what they were
// built from. `tools/build.mjs` writes both; `bin/leasehold.mjs` and
// `bin/leasehold-guest.mjs` check them and import only the compiled code.
//
// Why compiled: a TypeScript loader at run time (tsx) kept its compile cache
// in a shared temporary directory that the first local user to create it
// owned — and root ran whatever that cache held. The executables now run
// JavaScript that `npm run build` wrote inside the checkout, and refuse when
// it is missing, older than the sources, or writable by anyone but its owner.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DIST = path.join(ROOT, "dist");
export const STAMP = path.join(DIST, "build.json");
export const STAMP_FORMAT = 1;
export const EXECUTABLES = ["leasehold", "leasehold-guest"];

/*
 * Capability worker bundles (agent-guest/workers/README.md): every directory
 * of agent-guest/workers/ is one worker, compiled from its main.ts into
 * dist/workers/<id>/worker.mjs + bundle.json. Listed by discovery so none is
 * skipped: a directory without main.ts, or without a version in
 * agent-guest/workers/versions.json, fails the build.
 */
export const WORKER_SOURCES = path.join(ROOT, "agent-guest", "workers");
export const WORKER_DIST = path.join(DIST, "workers");

/** The worker ids of this checkout: the directories of agent-guest/workers/ (dot-directories aside), sorted. */
export function workerIds() {
  let entries;
  try {
    entries = fs.readdirSync(WORKER_SOURCES, { withFileTypes: true });
  } catch (error) {
    if (error.code === "ENOENT") return [];
    throw error;
  }
  return entries.filter((e) => e.isDirectory() && !e.name.startsWith(".")).map((e) => e.name).sort();
}

export function sha256(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

export function readStamp() {
  try {
    const stamp = JSON.parse(fs.readFileSync(STAMP, "utf8"));
    return stamp?.format === STAMP_FORMAT && stamp.inputs && stamp.outputs ? stamp : null;
  } catch {
    return null;
  }
}

/** Group- or world-writable: someone other than the owner could swap the code root runs. */
function writableByOthers(file) {
  return (fs.statSync(file).mode & 0o022) !== 0;
}

/**
 * Why the compiled executables cannot be used as they are, or null when they
 * can. `hashAll` hashes every input (the build's check); without it an input
 * whose size and mtime match the stamp is taken as unchanged (the start-up
 * check, a few hundred stat calls), and any other is hashed.
 */
export function staleReason({ hashAll = false } = {}) {
  const stamp = readStamp();
  if (stamp === null) return "the compiled executables are missing (dist/ has no build stamp)";
  const outputDirs = new Set(Object.keys(stamp.outputs).map((name) => path.dirname(name)).filter((dir) => dir !== "."));
  for (const name of [".", ...[...outputDirs].sort(), path.basename(STAMP), ...Object.keys(stamp.outputs)]) {
    const file = path.join(DIST, name);
    if (!fs.existsSync(file)) return `dist/${name} is missing`;
    if (writableByOthers(file)) return `dist/${name === "." ? "" : name} is writable by group or others`;
  }
  // A worker directory added or removed is a change even before any of its files is an input.
  const workers = workerIds().join(", ");
  if ((stamp.workers ?? []).join(", ") !== workers) return `the worker bundles changed since the last build (now: ${workers || "none"})`;
  for (const [rel, recorded] of Object.entries(stamp.inputs)) {
    let stat;
    try {
      stat = fs.statSync(path.join(ROOT, rel));
    } catch {
      return `${rel} is gone since the last build`;
    }
    if (!hashAll && stat.size === recorded.size && stat.mtimeMs === recorded.mtimeMs) continue;
    if (sha256(fs.readFileSync(path.join(ROOT, rel))) !== recorded.sha256) return `${rel} changed since the last build`;
  }
  return null;
}

/**
 * The compiled module of one executable, or a one-line refusal on stderr
 * and exit status 1 when it is missing or stale.
 */
export async function importCompiled(name) {
  const reason = staleReason();
  if (reason !== null) {
    process.stderr.write(`${name}: ${reason}; run \`npm run build\` in ${ROOT}\n`);
    process.exit(1);
  }
  return import(pathToFileURL(path.join(DIST, `${name}.mjs`)).href);
}
