/** Types for run.mjs (node-builtins-only JavaScript, also runnable by hand). */
export interface VmRun { lines: string[]; console: string; ms: number; kernel: string; append: string }
export interface VmFile { guest: string; host: string }
export declare const STATIC_CFLAGS: string[];
export declare const BPF_GUARD_SOURCES: string[];
export declare function bpfGuardArgs(): string[];
export declare function kernelLsmList(configPath: string): string[];
export declare function lsmCommandLines(configPath: string): { default: string[]; withBpf: string; withoutBpf: string };
export declare function dynamicDeps(binary: string): VmFile[];
export declare function gcc(args: string[]): void;
export declare function bootVm(options: { files: VmFile[]; body: string; append?: string[]; disk?: string; timeoutMs?: number }): Promise<VmRun>;
export declare function runVm(options?: { timeoutMs?: number }): Promise<VmRun>;
