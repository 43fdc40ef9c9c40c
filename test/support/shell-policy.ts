import type { CompiledSandboxPolicy } from "../../server/capabilities";

/**
 * A compiled `shell.run_command` sandbox policy small enough for tests that
 * sign or run a job without going through the pipeline (raw jobs, the
 * runner's unit tests).
 */
export function testShellPolicy(network: CompiledSandboxPolicy["network"] = { mode: "none" }): CompiledSandboxPolicy {
  return {
    schema: "leasehold.sandbox-policy/1",
    capability: "shell",
    capability_version: "1.0.0",
    operation: "run_command",
    network,
    read_only_root: true,
    memory_bytes: 256 << 20,
    tmpfs_tmp_bytes: 16 << 20,
    cpu_millis: 1000,
    pids_limit: 64,
    timeout_s: 30,
    exec_allow: ["/bin", "/usr/bin"],
    requires: { min_tier: "C", kernel_features: [] },
  } as unknown as CompiledSandboxPolicy;
}
