import { digestOf, digestOfJson, hashActor, type EntryInput, type EntryType } from "../entry";

/** One valid entry of every type, for round-trip tests and synthetic logs. */
export function sampleEntries(): Record<EntryType, EntryInput> {
  const time = "2025-03-01T10:00:00.000Z";
  const action = "act_01HZY";
  const actionHash = digestOfJson({ tool: "run_command", args: { command: "ls" } });
  const admin = hashActor("admin", "alice@example.com");
  return {
    "decision/1": {
      type: "decision/1", time, action_id: action, actor: hashActor("token", "tok_1"),
      data: { action_hash: actionHash, operation: "run_command", capability: "shell", host_id: "host-1", channel: "mcp", risk: "medium", outcome: "hold", reasons_digest: digestOf("rm deletes files"), policy_digest: digestOfJson({ network: "none" }), grant_id: null },
    },
    "approval/1": { type: "approval/1", time, action_id: action, actor: admin, data: { action_hash: actionHash, approval_id: "apr_1", outcome: "approved", deadline: "2025-03-01T10:05:00.000Z" } },
    "lease/1": {
      type: "lease/1", time, action_id: action, actor: hashActor("token", "tok_1"),
      data: { lease_id: "lease_1", host_id: "host-1", scope: "host", mode: "exclusive", event: "acquired", session_digest: digestOf("session-1"), expires_at: "2025-03-01T10:10:00.000Z" },
    },
    "dispatch/1": { type: "dispatch/1", time, action_id: action, actor: hashActor("system", "hub"), data: { action_hash: actionHash, job_id: "job_1", host_id: "host-1", job_digest: digestOf("job"), deadline: "2025-03-01T10:01:00.000Z" } },
    "evidence/1": {
      type: "evidence/1", time, action_id: action, actor: hashActor("host", "host-1"),
      data: { action_hash: actionHash, host_id: "host-1", envelope_digest: digestOf("envelope"), state: "observed", tier: "B", exit_code: 0, timed_out: false, artifacts: [{ name: "stdout", sha256: digestOf("out").slice(7), bytes: 3, truncated: false }], redaction_count: 1 },
    },
    "job/1": { type: "job/1", time, action_id: "act_1", actor: hashActor("system", "hub"), data: { event: "unknown", job_id: "job_1", host_id: "host-1", action_hash: actionHash } },
    "cancel/1": {
      type: "cancel/1", time, action_id: "act_1", actor: hashActor("token", "tok_1"),
      data: { stage: "running", by: "agent", action_hash: actionHash, approval_id: null, job_id: "job_1", reason_digest: digestOf("not needed any more") },
    },
    "refusal/1": { type: "refusal/1", time, action_id: null, actor: hashActor("token", "tok_2"), data: { stage: "validate", code: "INVALID_ARGUMENT", action_hash: null, operation: "run_command", host_id: null, reason_digest: digestOf("unknown field") } },
    "token/1": { type: "token/1", time, action_id: null, actor: admin, data: { event: "issued", token_id: "tok_1", scope_digest: digestOfJson({ tools: ["*"] }), read_only: false, expires_at: null } },
    "host/1": { type: "host/1", time, action_id: null, actor: admin, data: { event: "enrolled", host_id: "host-1", key_digest: digestOf("pubkey"), tier: "A", ceiling_digest: null } },
    "admin/1": { type: "admin/1", time, action_id: null, actor: admin, data: { operation: "settings.update", target_digest: null, settings_digest: digestOfJson({ four_eyes: true }) } },
    "grant/1": {
      type: "grant/1", time, action_id: null, actor: admin,
      data: { event: "created", grant_id: "grant_1", operation: "run_command", host_id: "host-1", risk_ceiling: "low", uses_remaining: 5, expires_at: "2025-03-02T00:00:00.000Z", pattern_digest: digestOf("^ls") },
    },
    "session/1": { type: "session/1", time, action_id: null, actor: hashActor("token", "tok_1"), data: { event: "opened", session_digest: digestOf("sess"), channel: "mcp" } },
    "artifact/1": { type: "artifact/1", time, action_id: null, actor: hashActor("token", "tok_1"), data: { sha256: digestOf("apk bytes").slice(7), bytes: 9, source: "upload" } },
    "oauth_grant/1": {
      type: "oauth_grant/1", time, action_id: null, actor: admin,
      data: { event: "granted", client_digest: digestOf("https://client.example/mcp.json"), client_kind: "cimd", token_id: "tok_3", scopes: ["mcp:read"], scope_digest: digestOfJson({ read_only: true }), read_only: true, expires_at: "2025-03-31T10:00:00.000Z" },
    },
    "checkpoint-witness/1": {
      type: "checkpoint-witness/1", time, action_id: null, actor: hashActor("witness", "host-1.example/witness"),
      data: { witness_key_id: "0a1b2c3d", size: 100, root: Buffer.alloc(32, 7).toString("base64"), timestamp: 1740823200, cosignature_digest: digestOf("— w sig") },
    },
  };
}
