/** Types for bpf-lsm.mjs. */
import type { VmRun } from "./run.mjs";
export declare function runBpfLsmVms(options?: { concurrent?: boolean; timeoutMs?: number }): Promise<{
  withBpf: VmRun; withoutBpf: VmRun; lsm: { default: string[]; withBpf: string; withoutBpf: string }; buildMs: number; totalMs: number;
}>;
