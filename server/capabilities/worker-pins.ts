/**
 * Pins for capabilities whose worker is a bundle the hub ships
 * (dist/workers/<id>/, built from agent-guest/workers/<id>/main.ts): the
 * hub fills the manifest's `worker_digest` from the bundle in its own
 * checkout, read and digested by the contract's reader (server/trust/bundle.ts),
 * the same code the build and the guest use. Readiness then needs a host reporting exactly those bytes, and every
 * prepared action names the digest, so the signed job tells the guest which
 * bytes it may run.
 *
 * A shipped-bundle capability whose bundle is missing or unreadable fails
 * registry creation (CONFIG_INVALID naming the build): an unpinned bundle
 * capability would look ready with whatever bytes a host has.
 */
import { projectPath } from "../../common/paths";
import { readBundleDir } from "../trust/bundle";
import { LeaseholdError } from "../errors/index";
import type { ManifestSource } from "./builtin";

/** Built-in capabilities whose worker is a shipped bundle (the guest's table: agent-guest/daemon/bundle-run.ts). */
export const SHIPPED_BUNDLE_CAPABILITIES: readonly string[] = ["apk-static"];

export interface PinOptions {
  /** Where the shipped bundles are (default: the checkout's dist/workers). */
  workersDir?: string;
  /** Which capability ids are shipped bundles (default SHIPPED_BUNDLE_CAPABILITIES). */
  capabilities?: readonly string[];
}

/** The digest of the bundle the hub ships for `id`, or CONFIG_INVALID saying how to build it. */
export function shippedBundleDigest(id: string, workersDir: string = projectPath("dist", "workers")): string {
  const dir = `${workersDir}/${id}`;
  let read: ReturnType<typeof readBundleDir>;
  try {
    read = readBundleDir(dir);
  } catch (error) {
    throw new LeaseholdError("CONFIG_INVALID", `capability ${id}: the hub ships no usable worker bundle at ${dir} (${error instanceof Error ? error.message : String(error)})`, {
      tier: "config",
      hint: "run `npm run build` (it builds dist/workers/ from agent-guest/workers/)",
    });
  }
  if (read.manifest.capability !== id) throw new LeaseholdError("CONFIG_INVALID", `capability ${id}: the bundle at ${dir} is a ${read.manifest.capability} worker`, { tier: "config" });
  return read.digest;
}

/**
 * The sources with `worker_digest` filled for shipped-bundle capabilities
 * that do not pin one themselves. Unvalidated JSON in, unvalidated JSON out:
 * the registry validates the result like any manifest.
 */
export function pinShippedBundles(sources: readonly ManifestSource[], options: PinOptions = {}): ManifestSource[] {
  const shipped = new Set(options.capabilities ?? SHIPPED_BUNDLE_CAPABILITIES);
  return sources.map((source) => {
    const m = source.manifest as Record<string, unknown> | null;
    if (m === null || typeof m !== "object" || typeof m["id"] !== "string" || !shipped.has(m["id"]) || m["worker_digest"] !== undefined) return source;
    return { source: source.source, manifest: { ...m, worker_digest: shippedBundleDigest(m["id"], options.workersDir) } };
  });
}
