/**
 * The manifests the product ships, as JSON files in `builtin/`. They are
 * imported statically (not read from disk at run time) so bundlers keep them
 * and a missing file fails the build rather than the first request. The
 * registry validates them exactly like any other manifest.
 */
import apkStatic from "./builtin/apk-static.json" with { type: "json" };
import code from "./builtin/code.json" with { type: "json" };
import egressShell from "./builtin/egress-shell.json" with { type: "json" };
import host from "./builtin/host.json" with { type: "json" };
import shell from "./builtin/shell.json" with { type: "json" };
import workspace from "./builtin/workspace.json" with { type: "json" };

export interface ManifestSource {
  /** Where the manifest came from, named in every error: a file path, "builtin:<file>", "runtime:<name>". */
  source: string;
  /** Unvalidated manifest JSON. */
  manifest: unknown;
}

export const BUILTIN_MANIFESTS: readonly ManifestSource[] = [
  { source: "builtin:shell.json", manifest: shell },
  { source: "builtin:code.json", manifest: code },
  { source: "builtin:workspace.json", manifest: workspace },
  { source: "builtin:host.json", manifest: host },
  { source: "builtin:egress-shell.json", manifest: egressShell },
  { source: "builtin:apk-static.json", manifest: apkStatic },
];
