/** Types for build.mjs (kept node-builtins-only JavaScript so it runs before any install). */
export declare const NATIVE_DEBIAN_PACKAGES: string[];
export declare function buildNative(options?: { quiet?: boolean }): string;
