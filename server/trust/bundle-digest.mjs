// The worker-bundle digest, in plain JavaScript with node builtins only so
// that tools/build.mjs (which runs before anything is compiled), the guest
// and the hub all call this one function (agent-guest/workers/README.md).
import { createHash } from "node:crypto";

export const BUNDLE_DIGEST_PREFIX = "sha256:";

/**
 * Why a bundle-relative file name is not acceptable, or null. Names are
 * POSIX paths below the bundle's root: no absolute path, no empty, "." or
 * ".." component, no NUL or line break (the canonical listing is
 * line-based, so a newline in a name could forge a second entry).
 */
export function bundlePathProblem(name) {
  if (typeof name !== "string" || name.length === 0 || name.length > 255) return "a file name must be 1 to 255 characters";
  if (/[\0\n\r\\]/.test(name)) return "a file name must not contain NUL, a line break or a backslash";
  if (name.startsWith("/")) return "a file name must be relative";
  for (const part of name.split("/")) {
    if (part === "" || part === "." || part === "..") return `a file name must not have an empty, "." or ".." component (${JSON.stringify(name)})`;
  }
  return null;
}

/**
 * `sha256:` + SHA-256 over the canonical listing of the bundle: one line
 * `<sha256 hex of the content> <relative path>\n` per file, sorted by the
 * path's UTF-8 bytes. The listing, not a concatenation of contents, is
 * hashed so that moving bytes from one file to another changes the digest.
 */
export function bundleDigest(files) {
  const seen = new Set();
  const lines = [];
  for (const file of files) {
    const problem = bundlePathProblem(file.path);
    if (problem !== null) throw new TypeError(`worker bundle: ${problem}`);
    if (seen.has(file.path)) throw new TypeError(`worker bundle: ${JSON.stringify(file.path)} listed twice`);
    seen.add(file.path);
    lines.push({ key: Buffer.from(file.path, "utf8"), line: `${createHash("sha256").update(file.bytes).digest("hex")} ${file.path}\n` });
  }
  lines.sort((a, b) => Buffer.compare(a.key, b.key));
  const listing = createHash("sha256");
  for (const { line } of lines) listing.update(line, "utf8");
  return `${BUNDLE_DIGEST_PREFIX}${listing.digest("hex")}`;
}
