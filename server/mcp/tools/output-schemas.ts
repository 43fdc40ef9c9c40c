import { ACTIVATIONS } from "../../capabilities";
import { ERROR_CODES } from "../../errors";

/**
 * Output schemas (JSON Schema, the subset draft-07 and 2020-12 read alike)
 * for every tool's `structuredContent`, listed in tools/list. Clients check
 * results against them: the TypeScript SDK's client validates
 * structuredContent whenever it is present — on `isError` results too — so
 * each listed schema is "this tool's result, or the hub's error object"
 * (`withErrorResult`). Objects stay open (no `additionalProperties: false`):
 * a field added later must not turn an older client's calls into failures;
 * what is listed is required and typed.
 *
 * Portable to clients that map tool schemas onto a single-`type` dialect
 * (the Inspector's `--strict` check, schema-lint.ts): every node constrains
 * (no bare `{}` or `true`), no `type` is an array — a value that may be null
 * is `anyOf` one typed branch and `{type: "null"}` — and the error object's
 * fields are an enum of the stable codes and bounded strings.
 */

export type JsonSchema = Record<string, unknown>;

const string = { type: "string" } as const;
const integer = { type: "integer" } as const;
const boolean = { type: "boolean" } as const;
const stringList = { type: "array", items: string } as const;
const anyObject = { type: "object" } as const;

/** A value that is `schema` or null (null carries meaning: not measured, not decided, not yet integrated). */
function nullable(schema: JsonSchema): JsonSchema {
  return { anyOf: [schema, { type: "null" }] };
}
const nullableString = nullable(string);

function object(properties: Record<string, JsonSchema>, required: readonly string[] = Object.keys(properties), extra: JsonSchema = {}): JsonSchema {
  return { type: "object", properties, required: [...required], ...extra };
}

/** Bounds of the error object's text (result.ts `toolError` cuts longer text to them). */
export const ERROR_MESSAGE_MAX = 4096;
export const ERROR_HINT_MAX = 1024;
/** The most characters (or items) a field lifted from `details` may have to be lifted. */
export const LIFTED_MAX = 256;
const ERROR_TIERS = ["hub", "guest", "kernel", "ledger", "database", "config"] as const;
const shortString = (maxLength: number) => ({ type: "string", maxLength }) as const;

/**
 * The error object of result.ts `toolError`: `{code, message, retryable,
 * hint}`, what an agent acts on next lifted to the top (only when it has the
 * type listed here: result.ts checks).
 */
export const ERROR_RESULT_SCHEMA: JsonSchema = object(
  {
    code: { type: "string", enum: Object.keys(ERROR_CODES), description: "A stable error code (docs/design.md#errors)." },
    message: shortString(ERROR_MESSAGE_MAX),
    retryable: boolean,
    hint: shortString(ERROR_HINT_MAX),
    tier: { type: "string", enum: [...ERROR_TIERS] },
    details: anyObject,
    action_id: { type: "string", maxLength: LIFTED_MAX, description: "A held or refused action's id: continue with approval_wait." },
    approval_id: shortString(LIFTED_MAX),
    risk: { type: "string", maxLength: LIFTED_MAX, description: "The held action's risk level." },
    reasons: { type: "array", items: anyObject, maxItems: LIFTED_MAX },
    deadline: shortString(LIFTED_MAX),
    holder: shortString(LIFTED_MAX),
    holder_id: shortString(LIFTED_MAX),
    lease_id: shortString(LIFTED_MAX),
    expires_at: shortString(LIFTED_MAX),
  },
  ["code", "message", "retryable", "hint"],
);

/** The lifted fields' types, for result.ts: a value of another type stays only in `details`. */
export const LIFTED_FIELD_TYPES = { action_id: "string", approval_id: "string", risk: "string", reasons: "array", deadline: "string", holder: "string", holder_id: "string", lease_id: "string", expires_at: "string" } as const;

/** What tools/list shows: the tool's own result, or an error result. */
export function withErrorResult(success: JsonSchema): JsonSchema {
  return { type: "object", anyOf: [success, ERROR_RESULT_SCHEMA] };
}

const RISK = object({ level: string, reasons: { type: "array", items: { type: "object" } } });

const OUTPUT = object({
  stdout: string,
  stderr: string,
  stdout_bytes: integer,
  stderr_bytes: integer,
  stdout_truncated: boolean,
  stderr_truncated: boolean,
});

const COMPLETION = object({
  state: string,
  exit: nullable(
    object(
      { code: nullable(integer), signal: nullableString, timed_out: boolean, cancelled: { type: "boolean", description: "true: stopped by a cancel (docs/design.md#cancel); absent otherwise." }, oom_killed: boolean },
      ["code", "signal", "timed_out"],
    ),
  ),
  output: OUTPUT,
  structured: nullable(anyObject),
});

const EVIDENCE = object(
  {
    digest: string,
    key_id: string,
    state: string,
    tier: nullableString,
    worker_digest: nullableString,
    inputs: { type: "array", items: object({ name: string, sha256: string, bytes: integer }) },
    bpf_object_sha256: string,
    denials: { type: "array" },
    denials_dropped: integer,
    resolved_names: { type: "array", items: object({ name: string, addresses: stringList }) },
    mounts: { type: "array", items: object({ label: string, path: string, mode: { type: "string", enum: ["ro", "rw"] }, tree_before: string, tree_after: string, snapshot_id: string }, ["label", "path", "mode"]) },
    redactions: object({ count: integer, kinds: stringList }),
    limitations: stringList,
    signed: object(
      {
        envelope: { type: "object", description: "The evidence envelope (leasehold.evidence/1) exactly as the host signed it." },
        signature: object({
          alg: { type: "string", const: "Ed25519" },
          key_id: { type: "string", description: "sha256: of the host's raw 32-byte public key (host_key)." },
          sig: { type: "string", description: "base64 Ed25519 signature over the RFC 8785 (JCS) bytes of envelope." },
        }),
      },
      ["envelope", "signature"],
      { description: "The host-signed envelope, verifiable with the host's key alone (docs/verify.md)." },
    ),
  },
  ["digest", "key_id", "state", "tier", "worker_digest", "redactions", "limitations"],
);

const RECEIPT = nullable(object({ leaf_index: integer, tree_size: integer, inclusion_proof: stringList, checkpoint: string }));

/** actions.ts `shapeOutcome`: every capability operation and approval_wait. */
export const ACTION_OUTCOME_SCHEMA: JsonSchema = object(
  {
    action_id: string,
    status: { type: "string", enum: ["dispatched", "completed", "cancelled"] },
    operation: string,
    host: string,
    decision: string,
    risk: RISK,
    sandbox: object(
      {
        lease: { type: "string", enum: ["observe", "exclusive"] },
        reason: {
          type: "string",
          enum: ["read_only", "observe_scope", "write"],
          description: "observe_scope: ran under the observe lease because the token's observe scope is any, NOT because it was judged read-only; read_only: judged read-only; write: exclusive lease, workspace writes kept.",
        },
      },
      ["lease", "reason"],
    ),
    approval_id: nullableString,
    grant_id: nullableString,
    lease_id: string,
    job: object({ id: string, deadline: string }),
    action_hash: string,
    replayed: boolean,
    hint: string,
    result: COMPLETION,
    evidence: EVIDENCE,
    ledger_entry_id: string,
    receipt: RECEIPT,
  },
  ["action_id", "status", "operation", "host", "decision", "risk", "approval_id", "grant_id", "lease_id", "job", "action_hash", "replayed", "hint"],
);

/** actions.ts `actionCancelTool`: what a cancel did. */
export const ACTION_CANCEL_SCHEMA: JsonSchema = object(
  {
    action_id: string,
    state: { type: "string", enum: ["cancelled", "stopping"], description: "cancelled: done (a running action's lease was killed and its signed result stored); stopping: the guest was told and its result is still on the way." },
    stage: { type: "string", enum: ["held", "queued", "running"], description: "Where the action was: held or queued ones never ran; a running one was stopped." },
    approval_id: nullableString,
    job_id: nullableString,
    result: COMPLETION,
    evidence: EVIDENCE,
    ledger_entry_id: string,
    hint: string,
  },
  ["action_id", "state", "stage", "approval_id", "job_id", "hint"],
);

export const APPROVAL_STATUS_SCHEMA: JsonSchema = object({
  action_id: string,
  operation: string,
  host: nullableString,
  state: string,
  risk: RISK,
  decision: nullableString,
  created_at: string,
  approval: nullable(object({ approval_id: string, state: string, deadline: string, decided_at: nullableString, reason: nullableString })),
  error: nullable(object({ code: string, message: string })),
  hint: string,
});

const PAGING = { offset: integer, limit: integer, total: integer, has_more: boolean };

export const HEALTH_SCHEMA: JsonSchema = object({
  status: { type: "string", enum: ["ok", "degraded"] },
  version: string,
  uptime_s: { type: "number" },
  started_at: string,
  database: object({ kind: { type: "string", enum: ["pglite", "postgres"] }, migrations: object({ applied: integer, known: integer }), durability: { type: "object" } }),
  ledger: object({
    origin: string,
    key: string,
    head: nullable(object({ size: integer, root: string, checkpoint_age_s: { type: "number" } })),
    integrator: object({ state: string, detail: nullableString }),
    appends: object({ accepted: integer, failed: integer, slow: integer }),
  }),
  hosts: object({ enrolled: integer, online: integer, witness_failures: { type: "array", items: object({ host: string, reason: string }) } }),
});

export const CAPABILITIES_SCHEMA: JsonSchema = object({
  capabilities: {
    type: "array",
    items: object(
      {
        id: string,
        version: string,
        activation: { type: "string", enum: [...ACTIVATIONS] },
        active: boolean,
        status: string,
        operations: { type: "array", items: object({ name: string, mutating: boolean, description: string }) },
        worker_digest: nullableString,
        readiness: nullable(object({ capability: string, state: string, hosts: { type: "array" } }, ["state"])),
      },
      ["id", "version", "active", "status", "operations", "worker_digest", "readiness"],
    ),
  },
  ...PAGING,
});

export const HOSTS_SCHEMA: JsonSchema = object({
  hosts: {
    type: "array",
    items: object({
      name: string,
      online: boolean,
      tier: nullableString,
      last_report_at: nullableString,
      capabilities: { type: "array", items: object({ id: string, state: string, reasons: stringList, worker_digest: nullableString }) },
      // Null when the host's ceiling lists no host paths (any mount is then refused).
      host_paths: nullable({
        type: "array",
        items: object(
          {
            label: string,
            path: string,
            mode: { type: "string", enum: ["ro", "rw"] },
            owner: nullable(object({ uid: integer, gid: integer })),
            max_bytes: nullable(integer),
            max_inodes: nullable(integer),
          },
          ["label", "path", "mode"],
        ),
      }),
      snapshots: { type: "array", items: object({ id: string, label: string, created_at: string, bytes: integer, files: integer, tree_digest: string }) },
    }),
  },
  ...PAGING,
});

export const CHECKPOINT_SCHEMA: JsonSchema = object({
  origin: string,
  verifier_key: string,
  tree_size: integer,
  root_hash: string,
  created_at: string,
  checkpoint: string,
  cosignatures: { type: "array", items: { type: "object" } },
});

export const HOST_KEY_SCHEMA: JsonSchema = object({
  host: string,
  host_id: string,
  removed: boolean,
  key_id: string,
  public_key_pem: string,
  key_digest: string,
  ledger: nullable(object({ entry_id: string, leaf_index: nullable(integer), event: { type: "string", enum: ["enrolled", "key_rotated"] }, entry: string })),
});

export const PROOF_SCHEMA: JsonSchema = object({ leaf_index: integer, tree_size: integer, leaf_hash: string, proof: stringList, checkpoint: string });

const LEASE_PROPERTIES = {
  lease_id: string,
  host: nullableString,
  mode: { type: "string", enum: ["exclusive", "observe"] },
  // The host path label of a label lease (mode exclusive); null for a host lease.
  label: nullableString,
  holder_id: string,
  holder: string,
  mine: boolean,
  created_at: string,
  expires_at: string,
  idle_expires_at: string,
};
const LEASE_REQUIRED = ["lease_id", "host", "mode", "holder_id", "mine", "created_at", "expires_at", "idle_expires_at"];

export const LEASE_ACQUIRE_SCHEMA: JsonSchema = object({ ...LEASE_PROPERTIES, acquired: boolean }, [...LEASE_REQUIRED, "acquired"]);
export const LEASE_RELEASE_SCHEMA: JsonSchema = object({ lease_id: string, released: { type: "boolean", const: true }, released_at: nullableString });
export const LEASE_STATUS_SCHEMA: JsonSchema = object({ leases: { type: "array", items: object(LEASE_PROPERTIES, LEASE_REQUIRED) } });

export const ARTIFACT_SCHEMA: JsonSchema = object({ sha256: string, bytes: integer, received: integer, next_offset: integer, complete: boolean, expires_at: nullableString });
