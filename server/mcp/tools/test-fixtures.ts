import type { ActionOutcome } from "../../actions";

/**
 * Results shaped like the hub's own, with real-sized ids, digests and
 * receipts (a completed run_command `echo hello` as the local guest returns
 * it), for the text and output-schema tests.
 */

export const ACTION_ID = "6f1c2b9e-3d4a-4f5b-8c7d-9e0f1a2b3c4d";

const sha = (c: string) => `sha256:${c.repeat(64)}`;

export const DISPATCHED: ActionOutcome = {
  status: "dispatched",
  action_id: ACTION_ID,
  action_hash: sha("1"),
  operation: "run_command",
  host: "local",
  risk: { level: "low", reasons: [] },
  decision: "auto_allow",
  grant_id: null,
  approval_id: null,
  lease_id: "20000000-0000-4000-8000-000000000002",
  job: { id: "30000000-0000-4000-8000-000000000003", deadline: "2026-12-01T01:00:00.000Z" },
  replayed: false,
};

export function completed(stdout: string, overrides: Partial<NonNullable<ActionOutcome["result"]>> = {}): ActionOutcome {
  const bytes = Buffer.byteLength(stdout);
  return {
    ...DISPATCHED,
    status: "completed",
    result: {
      state: "completed",
      exit: { code: 0, signal: null, timed_out: false, oom_killed: false },
      output: { stdout, stderr: "", stdout_bytes: bytes, stderr_bytes: 0, stdout_truncated: false, stderr_truncated: false },
      structured: {
        sandbox: {
          lease: "observe",
          workspace: "read-only",
          throwaway_writes: { tmp_bytes: 0, tmp_files: 0 },
          host_facts_shown: ["kernel release and version (uname)", "os-release (/etc/os-release)"],
          terminal_controls: false,
          note: "observe lease: /work (the workspace) was mounted read-only, so nothing the command did there persisted; it wrote nothing to /tmp. The root file system is read-only, HOME is /tmp, and there is no network (Unix sockets only).",
        },
      },
      evidence: {
        digest: sha("2"),
        key_id: "k".repeat(43),
        state: "completed",
        tier: "A",
        worker_digest: sha("3"),
        bpf_object_sha256: "4".repeat(64),
        denials: [],
        denials_dropped: 0,
        redactions: { count: 0, kinds: [] },
        limitations: ["the OOM counter was read from the lease's cgroup"],
        envelope: { big: true },
        signature: { alg: "Ed25519", key_id: "k".repeat(43), sig: Buffer.alloc(64, 1).toString("base64") },
      },
      ledger_entry_id: "1234",
      receipt: {
        leaf_index: 1233,
        tree_size: 1240,
        inclusion_proof: Array.from({ length: 11 }, (_, i) => Buffer.alloc(32, i).toString("base64")),
        checkpoint: `leasehold.example/ledger\n1240\n${Buffer.alloc(32, 9).toString("base64")}\n\n— leasehold.example/ledger ${Buffer.alloc(68, 7).toString("base64")}\n`,
      },
      ...overrides,
    },
  };
}
