/** Types for build.mjs (node-builtins-only JavaScript so it runs before any install). */
export declare const BPF_BUILD_DIR: string;
export declare const BPF_DEBIAN_PACKAGES: string[];
export declare function bpfPrograms(): string[];
export declare function bpfSourceFiles(): string[];
export declare function buildBpf(options?: { quiet?: boolean }): string;
