import type { EvidenceMount } from "../trust/host-paths";
import type { ArtifactLimits } from "../artifacts";
import type { CapabilityRegistry, Manifest, OperationDeclaration } from "../capabilities";
import type { DatabaseHandle } from "../db";
import type { JobKey } from "../dispatch/job-key";
import type { ErrorPayload } from "../errors";
import type { ObserveScope } from "../policy/decide";
import type { CustomRiskRule, RiskReason, RiskLevel } from "../policy/risk";

/**
 * Who is asking. Authentication is the channel's job (MCP bearer lookup,
 * admin session cookie); the pipeline receives the authenticated caller and
 * enforces its scope.
 */
export type Caller =
  | {
      kind: "token";
      tokenId: string;
      /** Read-only tokens see and may call only non-mutating operations. */
      readOnly: boolean;
      /** Operation names the token covers; null = every operation. */
      tools: readonly string[] | null;
      /** Host names the token covers; null = every host. */
      hosts: readonly string[] | null;
      /**
       * The token's observe scope (server/policy/decide.ts): `any` runs an
       * observe-capable operation at once under the observe lease, whatever
       * its risk. Absent means `judged`.
       */
      observe?: ObserveScope;
      sessionId: string | null;
      /** Shown to others in HOST_BUSY, e.g. the token's name. No secrets. */
      label?: string;
    }
  | { kind: "admin"; adminId: string; username: string; sessionId: string | null };

export type Channel = "mcp" | "console";

export interface ActionRequest {
  operation: string;
  arguments: unknown;
  channel: Channel;
}

export interface SubmitOptions {
  /** How long a held action waits for a decision before APPROVAL_PENDING. */
  waitMs: number;
  signal?: AbortSignal;
  onProgress?: (progress: ActionProgress) => void;
}

/**
 * What a waiting caller hears before the result. Every report names the
 * action, so the first one a caller hears is enough to continue it with
 * `approval_wait` on any hub process should this one die. While held, how long it has
 * waited for a decision; once queued for its host, `dispatched`; while running, the bytes of output the host's
 * workload has written so far (reported by the guest with its heartbeat,
 * counted before scrubbing and the output caps — a count, never content).
 */
export type ActionProgress =
  | { stage: "approval"; actionId: string; approvalId: string; waitedMs: number; deadline: string }
  | { stage: "dispatched"; actionId: string; host: string }
  | { stage: "running"; actionId: string; host: string; stdout_bytes: number; stderr_bytes: number };

/**
 * Whether `manifest`'s worker can run on `host` now. Readiness is measured,
 * never assumed (docs/design.md#readiness), so the pipeline never defaults to "ready": the
 * hub passes `hostReportReadiness` (host reports stored by guest agents);
 * tests pass their own explicit check.
 */
export interface ReadinessCheck {
  /** `unenforceable`: the host established a tier, but one too weak for the capability's policy (e.g. egress on tier C). */
  /** `host.health`: the host's stored health, when the caller read it with the host row (one read, not two). */
  check(input: { manifest: Manifest; operation: OperationDeclaration; host: { id: string; name: string; health?: unknown } }): Promise<{ ready: true } | { ready: false; reason: string; unenforceable?: boolean }>;
}

export interface PipelineSettings {
  /** Approval deadline (default 5 min). */
  approvalTtlMs: number;
  /** Approver ≠ the requesting credential's owner (default off). */
  fourEyes: boolean;
  /** How long a dispatched job may wait and run before its deadline, beyond the policy timeout (default 10 min). */
  jobGraceMs: number;
  leaseTtlMs: number;
  leaseIdleMs: number;
  /** Idempotency keys kept per caller (default 1000) and for how long (default 24 h). */
  idempotencyMaxKeys: number;
  idempotencyMaxAgeMs: number;
  /** Fallback poll while waiting for a decision (default 2 s; NOTIFY normally wakes sooner). */
  approvalPollMs: number;
  /** Held actions one agent token may have at once (default 20); the next is RATE_LIMITED, sealed. */
  maxHeldPerToken: number;
  /** Artifact bounds for inline `{base64}` arguments stored by the prepare step (server/artifacts). */
  artifacts: ArtifactLimits;
}

/**
 * Waits for a dispatched action to finish on its host and returns the
 * completed outcome (or throws its final error). The hub passes the
 * host-result waiter (completion.ts); without one, `submitAction` returns as
 * soon as the job is queued (status "dispatched").
 */
export interface CompletionWaiter {
  wait(outcome: ActionOutcome, options: Pick<SubmitOptions, "signal" | "onProgress">): Promise<ActionOutcome>;
}

export interface PipelineDeps {
  handle: DatabaseHandle;
  completion?: CompletionWaiter;
  registry: CapabilityRegistry;
  readiness: ReadinessCheck;
  jobKey: JobKey;
  settings?: Partial<PipelineSettings>;
  customRiskRules?: readonly CustomRiskRule[];
  /**
   * Told about each newly held action after its transaction committed (the
   * approval webhook, server/approvals/webhook.ts, and Web Push,
   * server/push/notifier.ts). Fire and forget: their
   * failures are their own and never touch the action.
   */
  onHeld?: (notice: { approvalId: string; actionId: string; host: string; operation: string; risk: string; deadline: Date }) => void;
}

/** `observe_scope`: allowed at once under the observe lease by the caller's observe scope, NOT judged read-only. */
export type DecisionOutcome = "auto_allow" | "observe_scope" | "grant" | "approved";

/** What a caller gets back for a dispatched action. Identical on every channel. */
/** What the host did, as the hub verified and sealed it. */
export interface ActionCompletion {
  /** `cancelled`: stopped while it ran (docs/design.md#cancel); exit and output say what ran until then. */
  state: "completed" | "failed" | "cancelled";
  /** `oom_killed` is absent when the host could not read the OOM counter (the evidence's `limitations` say so). */
  exit: { code: number | null; signal: string | null; timed_out: boolean; cancelled?: true; oom_killed?: boolean } | null;
  /** Scrubbed on the host before it left; decoded as UTF-8, at most 1 MiB each here. */
  output: { stdout: string; stderr: string; stdout_bytes: number; stderr_bytes: number; stdout_truncated: boolean; stderr_truncated: boolean };
  /** A workspace operation's result (fs_*); for a launched workload, `{sandbox: {lease, workspace, throwaway_writes, host_facts_shown, note}}` — where its writes went and what of the host it saw. */
  structured: Record<string, unknown> | null;
  evidence: {
    digest: string;
    key_id: string;
    state: string;
    tier: string | null;
    /** The worker's content digest as the host verified it before the run (envelope producer.worker_digest). */
    worker_digest: string | null;
    /** The input artifacts the worker read (a bundle worker's `input`), as the signed envelope lists them. */
    inputs?: { name: string; sha256: string; bytes: number }[];
    /** The BPF object of the host's tier (hex SHA-256); absent when the host has none (tier C) or it was not measured. */
    bpf_object_sha256?: string;
    /** Every denial the lease's BPF programs reported (the signed envelope's list); absent when no program watched the lease. */
    denials?: unknown[];
    denials_dropped?: number;
    /** Egress names the guest resolved for the lease, with the addresses the sandbox got. */
    resolved_names?: { name: string; addresses: string[] }[];
    /** Host paths bound into the lease (the signed envelope's list): for a rw label, tree digests before and after and the snapshot taken first. */
    mounts?: readonly EvidenceMount[];
    redactions: { count: number; kinds: string[] };
    limitations: string[];
    /** The signed envelope's content (verify with the host key and `signature`). */
    envelope: unknown;
    /** The host's signature over JCS(envelope), as the guest sent it (docs/verify.md); null when it cannot be found. */
    signature: { alg: "Ed25519"; key_id: string; sig: string } | null;
  };
  /** The evidence/1 ledger entry id. */
  ledger_entry_id: string;
  /** Inclusion of the evidence/1 entry; null if it was not integrated within the bounded wait. */
  receipt: { leaf_index: number; tree_size: number; inclusion_proof: string[]; checkpoint: string } | null;
}

export interface ActionOutcome {
  /** "dispatched": queued for the host (no completion waiter); "completed": ran and sealed; "cancelled": stopped while it ran, what ran sealed. */
  status: "dispatched" | "completed" | "cancelled";
  action_id: string;
  action_hash: string;
  operation: string;
  host: string;
  risk: { level: RiskLevel; reasons: RiskReason[] };
  decision: DecisionOutcome;
  /**
   * The lease the job ran under and why: `observe` because the action was
   * judged read-only (`read_only`) or because the caller's observe scope
   * allowed it there without judging it (`observe_scope`); `exclusive`
   * (`write`) with the workspace writable. Absent on outcomes stored before
   * it was recorded.
   */
  sandbox?: { lease: "observe" | "exclusive"; reason: "read_only" | "observe_scope" | "write" };
  grant_id: string | null;
  approval_id: string | null;
  lease_id: string;
  job: { id: string; deadline: string };
  /** True when this is the stored outcome of an earlier call with the same idempotency key. */
  replayed: boolean;
  /** Present when status is "completed" or "cancelled". */
  result?: ActionCompletion;
}

/** What `actions.result` holds. */
export interface StoredResult {
  decision: "auto_allow" | "observe_scope" | "grant" | "hold";
  grant_id: string | null;
  approval_id: string | null;
  outcome?: ActionOutcome;
  error?: ErrorPayload;
}
