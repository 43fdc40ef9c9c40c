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
  for (const name of [".", path.basename(STAMP), ...Object.keys(stamp.outputs)]) {
    const file = path.join(DIST, name);
    if (!fs.existsSync(file)) return `dist/${name} is missing`;
    if (writableByOthers(file)) return `dist/${name === "." ? "" : name} is writable by group or others`;
  }
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
