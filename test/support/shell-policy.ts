import type { CompiledSandboxPolicy } from "../../server/capabilities";
import type { VerifiedJob } from "../../server/trust";

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

/**
 * A verified `shell.run_command` job around `testShellPolicy()` for the
 * runner's unit tests; `overrides` replaces whole fields (arguments, policy,
 * operation, …).
 */
export function testVerifiedJob(overrides: Partial<VerifiedJob> = {}): VerifiedJob {
  return {
    job_id: "j",
    action_id: "a",
    action_hash: `sha256:${"1".repeat(64)}`,
    host_id: "h",
    deadline: new Date(Date.now() + 60_000),
    operation: "run_command",
    capability: { id: "shell", version: "1.0.0" },
    mutating: false,
    writesWorkspace: false,
    arguments: { host: "local", command: "true", env: {}, stdin: "" },
    policy: testShellPolicy(),
    ...overrides,
  };
}
