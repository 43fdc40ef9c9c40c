/** Types for run.mjs (node-builtins-only JavaScript, also runnable by hand). */
export interface VmRun { lines: string[]; console: string; ms: number; kernel: string }
export declare function runVm(options?: { timeoutMs?: number }): Promise<VmRun>;
