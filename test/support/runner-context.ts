import { generateKeyPairSync } from "node:crypto";
import { parseCeiling } from "../../agent-guest/ceiling/index";
import type { RunnerContext } from "../../agent-guest/daemon/runner";

/**
 * A runner context for tests: a fresh host key, a tier C host and a roomy
 * ceiling whose workspace is `workspaceRoot` (exec from /bin and /usr/bin,
 * no egress). `overrides` replace fields (a worker store, a fetcher, ...).
 */
export function testRunnerContext(workspaceRoot: string, overrides: Partial<RunnerContext> = {}): RunnerContext {
  return {
    hostId: "h",
    hostKey: generateKeyPairSync("ed25519").privateKey,
    ceiling: parseCeiling({
      version: 1,
      workspace_root: workspaceRoot,
      exec_dirs: ["/bin", "/usr/bin"],
      egress: [],
      max: { memory_bytes: 1 << 30, cpus: 2, pids: 512, timeout_ms: 3600_000, output_bytes: 8 << 20, tmpfs_bytes: 256 << 20, tmpfs_inodes: 65_536 },
    }),
    tier: "C",
    workerDigest: `sha256:${"2".repeat(64)}`,
    ...overrides,
  };
}
