/**
 * Leasehold's sandbox launcher, typed. Only `agent-guest/` may import this
 * (the Next app must never load the addon). Fail closed: a policy this host
 * cannot enforce is refused with UNENFORCEABLE and the reason — never run
 * weaker. Values under `enforcement` are read back from the kernel.
 *
 * The public surface, from the modules that own each part: `policy.ts` (the
 * policy schema), `probe.ts` (what the kernel offers, what is enforceable),
 * `bpf.ts` (the BPF tier), `launch.ts` + `result.ts` (one launch and its
 * result), `sweep.ts` (stale leases); `addon.ts` loads the compiled addon.
 */
export { HELPER_PATH, errnoName } from "./addon";
export { canonicalHostAddress, SANDBOX_DEFAULT_ENV, SandboxPolicy, type SandboxPolicyInput } from "./policy";
export { checkEnforceable, probeKernel, type KernelProbe } from "./probe";
export {
  addBpfLease, bpfAbiSizes, bpfProgramStats, bpfStatus, compileExecAllowList, MAX_EXEC_ALLOW_FILES, needsBpf,
  type BpfDenial, type BpfLeaseHandle, type BpfStatus,
} from "./bpf";
export { probeIdmappedMount, renameExchangeAt, type ExchangeResult, type IdmapProbe } from "./host-paths";
export { launch, leaseOpenFileLimit, NOFILE_FLOOR, type LaunchOptions } from "./launch";
export type { LaunchResult, LeaseNetwork } from "./result";
export { leaseCgroupPrefix, startupSweepResult, sweepStaleLeases, type SweepResult } from "./sweep";
