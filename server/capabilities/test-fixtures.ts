// Test-only helpers for server/capabilities tests. Not exported from index.ts.
import type { HostReport, WorkerReport } from "./readiness";

/** A minimal valid manifest; tests clone and break it. */
export function validManifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "demo",
    capability_api: 1,
    worker_abi: 1,
    version: "1.2.3",
    trust_boundary: "host-exec",
    activation: "optional",
    operations: [
      {
        name: "demo_run",
        mutating: true,
        description: "Run the demo.",
        input_schema: {
          type: "object",
          additionalProperties: false,
          required: ["host"],
          properties: {
            host: { type: "string", minLength: 1, maxLength: 63, pattern: "^[a-z0-9][a-z0-9._-]{0,62}$" },
            timeout_s: { type: "integer", minimum: 1, maximum: 86400 },
          },
        },
      },
    ],
    sandbox: {
      network: "none",
      read_only_root: true,
      memory: "512m",
      cpus: "1",
      pids_limit: 128,
      tmpfs_tmp: "64m",
      timeout_s: 60,
      exec_allow: ["/usr/bin", "/bin"],
    },
    ...overrides,
  };
}

export const GOOD_DIGEST = `sha256:${"ab".repeat(32)}`;

export function worker(capability: string, overrides: Partial<WorkerReport> = {}): WorkerReport {
  return { capability, capability_api: 1, worker_abi: 1, version: "1.0.0", digest: GOOD_DIGEST, self_test: "pass", ...overrides };
}

export const ALL_FEATURES = [
  "user_namespaces",
  "mount_namespaces",
  "pid_namespaces",
  "network_namespaces",
  "seccomp",
  "no_new_privs",
  "landlock",
  "cgroup_memory",
  "cgroup_pids",
  "cgroup_cpu",
];

export function hostReport(host: string, workers: WorkerReport[], overrides: Partial<HostReport> = {}): HostReport {
  return {
    host,
    online: true,
    reported_at: "2026-12-01T10:00:00.000Z",
    tier: "B",
    kernel_features: ALL_FEATURES,
    workers,
    ...overrides,
  };
}
