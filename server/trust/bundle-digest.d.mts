/** Types for bundle-digest.mjs (node-builtins-only JavaScript so tools/build.mjs can run it uncompiled). */
export declare const BUNDLE_DIGEST_PREFIX: "sha256:";
export declare function bundlePathProblem(name: unknown): string | null;
export declare function bundleDigest(files: ReadonlyArray<{ path: string; bytes: Uint8Array }>): string;
