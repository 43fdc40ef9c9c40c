import { hmac } from "@oslojs/crypto/hmac";
import { SHA256 } from "@oslojs/crypto/sha2";
import { toHex } from "../trust/portable/crypto";
import { z } from "zod";
import { LeaseholdError } from "../errors";
import { canonicalBytes, canonicalDigest, parseCanonical, sha256Digest } from "../canonical";

/**
 * Ledger entries: the JCS bytes of `{type, time, action_id, actor, data}`.
 *
 * The list of entry types is closed and versioned (`decision/1`, ...): a new
 * shape is a new version string, never an edit of an old one, because
 * entries already in the log must still decode with today's code. Every
 * object is strict, so a field that is not declared — `arguments`, `stdout`,
 * `token` — is rejected rather than carried along: arguments, output and
 * secrets reach the ledger only as `sha256:` digests, and people only as
 * hashed actor identifiers.
 */

export const MAX_ENTRY_BYTES = 8192;

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, "must be sha256:<64 lowercase hex>");
const rawSha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex");
/** Opaque identifiers (uuids, job ids, host ids). No spaces, so no room for free text. */
const id = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, "must be an identifier ([A-Za-z0-9._:-], ≤128)");
const operation = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "must be an operation name");
const capability = z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, "must be a capability id");
const errorCode = z.string().regex(/^[A-Z][A-Z0-9_]{0,63}$/, "must be an error code");
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const base64Hash = z.string().regex(/^[A-Za-z0-9+/]{43}=$/, "must be a base64 32-byte hash");
const keyIdHex = z.string().regex(/^[0-9a-f]{8}$/, "must be 8 lowercase hex");

/** RFC 3339 UTC with milliseconds, exactly as Date#toISOString writes it: one spelling per instant. */
const timestamp = z.string().refine((value) => {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value)) return false;
  const parsed = new Date(value);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString() === value;
}, "must be a UTC timestamp like 2025-01-31T12:00:00.000Z");

const risk = z.enum(["read_only", "low", "medium", "high", "critical"]);
const channel = z.enum(["mcp", "console"]);
const tier = z.enum(["A", "B", "C"]);

export const ACTOR_KINDS = ["token", "admin", "host", "witness", "system"] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

/** The data schema of each entry type. Keys are the closed list of type strings. */
export const ENTRY_DATA = {
  "decision/1": z.strictObject({
    action_hash: digest,
    operation,
    capability,
    host_id: id.nullable(),
    channel,
    risk,
    // `observe_scope`: allowed at once because the caller's observe scope is
    // `any` — it ran under the observe lease and was NOT judged read-only
    // (`risk` is its verdict, unchanged).
    outcome: z.enum(["auto_allow", "observe_scope", "grant", "hold", "refuse"]),
    reasons_digest: digest,
    policy_digest: digest,
    grant_id: id.nullable(),
    // The lease mode the action runs under once allowed. Optional: entries
    // sealed before it was recorded have none.
    lease: z.enum(["exclusive", "observe"]).optional(),
    // sha256 of the agent's one-line reason (server/actions/agent-reason.ts), which the prepared
    // action — and so action_hash — carries. Optional: a call without a reason has none.
    agent_reason_digest: digest.optional(),
  }),
  "approval/1": z.strictObject({
    action_hash: digest,
    approval_id: id,
    outcome: z.enum(["approved", "denied", "expired"]),
    deadline: timestamp,
    // The digest of the passkey assertion that signed this approval
    // (server/passkeys/challenge.ts assertionDigest). Optional: entries sealed
    // before passkeys, and approvals below the passkey threshold, have none.
    assertion_digest: digest.optional(),
  }),
  "lease/1": z.strictObject({
    lease_id: id,
    host_id: id,
    // `label`: the exclusive lease on one host path label (server/leases), named in `label`.
    scope: z.enum(["host", "workspace", "label"]),
    mode: z.enum(["exclusive", "observe"]),
    label: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/).optional(),
    event: z.enum(["acquired", "renewed", "released", "lapsed", "revoked"]),
    session_digest: digest.nullable(),
    expires_at: timestamp.nullable(),
  }),
  "dispatch/1": z.strictObject({
    action_hash: digest,
    job_id: id,
    host_id: id,
    job_digest: digest,
    deadline: timestamp,
  }),
  "evidence/1": z.strictObject({
    action_hash: digest,
    host_id: id,
    envelope_digest: digest,
    state: z.enum(["observed", "derived", "hypothesized"]),
    tier,
    exit_code: z.number().int().min(-1).max(255).nullable(),
    timed_out: z.boolean(),
    artifacts: z
      .array(z.strictObject({ name: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/), sha256: rawSha256Hex, bytes: count, truncated: z.boolean() }))
      .max(16),
    redaction_count: count,
  }),
  /**
   * A dispatched job that ended without evidence: `unknown` — its guest
   * stopped answering after it claimed the job (it may or may not have run;
   * never retried); `host_unavailable` — no guest claimed it in time.
   */
  "job/1": z.strictObject({
    // `cancelled`: never claimed, ended by the hub (its token was revoked).
    event: z.enum(["unknown", "host_unavailable", "cancelled"]),
    job_id: id,
    host_id: id,
    action_hash: digest,
  }),
  /**
   * An action cancelled (docs/design.md#cancel): `held` — withdrawn before it
   * ran (its approval taken from the queue, or allowed and not yet queued);
   * `queued` — its job dropped before a guest took it; `running` — the guest
   * was told to stop it (what ran comes in its evidence/1). `by` says which
   * path asked; the actor who; the reason only as a digest.
   */
  "cancel/1": z.strictObject({
    stage: z.enum(["held", "queued", "running"]),
    by: z.enum(["agent", "admin", "token_revoked", "session_closed"]),
    action_hash: digest,
    approval_id: id.nullable(),
    job_id: id.nullable(),
    reason_digest: digest,
  }),
  "refusal/1": z.strictObject({
    stage: z.enum(["authenticate", "resolve", "validate", "prepare", "assess", "decide", "lease", "dispatch", "execute", "scrub", "seal"]),
    code: errorCode,
    action_hash: digest.nullable(),
    operation: operation.nullable(),
    host_id: id.nullable(),
    reason_digest: digest,
  }),
  "token/1": z.strictObject({
    event: z.enum(["issued", "revoked", "expired"]),
    token_id: id,
    scope_digest: digest,
    read_only: z.boolean(),
    // Present only on a token issued with the observe scope `any` (sandbox-first).
    observe: z.literal("any").optional(),
    expires_at: timestamp.nullable(),
  }),
  "host/1": z.strictObject({
    event: z.enum(["enrolled", "revoked", "key_rotated", "tier_changed", "ceiling_changed"]),
    host_id: id,
    key_digest: digest.nullable(),
    tier: tier.nullable(),
    ceiling_digest: digest.nullable(),
  }),
  "admin/1": z.strictObject({
    operation: z.string().regex(/^[a-z][a-z0-9_.]{0,63}$/, "must be an admin operation name"),
    target_digest: digest.nullable(),
    settings_digest: digest.nullable(),
  }),
  "grant/1": z.strictObject({
    event: z.enum(["created", "consumed", "revoked", "expired", "exhausted"]),
    grant_id: id,
    operation,
    host_id: id.nullable(),
    // docs/design.md#decision: critical actions are never grantable.
    risk_ceiling: z.enum(["read_only", "low", "medium", "high"]),
    uses_remaining: count,
    expires_at: timestamp,
    pattern_digest: digest.nullable(),
    // A grant at or above the passkey threshold is created with a passkey
    // assertion over its whole scope: `scope_digest` is sha256 of the JCS of
    // that scope (the challenge's subject), `assertion_digest` the digest of
    // the assertion (server/passkeys/challenge.ts). Optional: `consumed` and
    // `revoked` events, grants below the threshold and entries sealed before
    // this check have neither.
    scope_digest: digest.optional(),
    assertion_digest: digest.optional(),
  }),
  "session/1": z.strictObject({
    event: z.enum(["opened", "closed", "expired", "reclaimed"]),
    session_digest: digest,
    channel,
  }),
  /**
   * An artifact upload completed and verified (server/artifacts): its whole
   * SHA-256 and size, never its bytes or a name. `source`: `upload` through
   * artifact_upload chunks, `inline` from an action's `{base64}` argument.
   */
  "artifact/1": z.strictObject({
    sha256: rawSha256Hex,
    bytes: count,
    source: z.enum(["upload", "inline"]),
  }),
  /**
   * An admin's decision on an OAuth client's authorization request
   * (server/oauth): which client (digest of its id), what was granted after
   * any narrowing (the grant's token id, scope digest as in token/1,
   * read-only, expiry). `denied` has no token. The grant's end is a token/1
   * `revoked` entry, as for an `lh_` token.
   */
  "oauth_grant/1": z.strictObject({
    event: z.enum(["granted", "denied"]),
    client_digest: digest,
    client_kind: z.enum(["cimd", "dynamic", "registered"]),
    token_id: id.nullable(),
    scopes: z.array(z.enum(["mcp:read", "mcp:write", "mcp:observe-any"])).max(3),
    scope_digest: digest.nullable(),
    read_only: z.boolean(),
    expires_at: timestamp.nullable(),
  }),
  // Written by older hubs only; cosignatures are stored beside their checkpoints, not appended.
  // Kept so logs that already hold such entries decode forever.
  "checkpoint-witness/1": z.strictObject({
    witness_key_id: keyIdHex,
    size: count,
    root: base64Hash,
    timestamp: count,
    cosignature_digest: digest,
  }),
} as const;

export type EntryType = keyof typeof ENTRY_DATA;
export const ENTRY_TYPES = Object.keys(ENTRY_DATA) as EntryType[];

const actor = digest;

function entrySchema<T extends EntryType>(type: T) {
  return z.strictObject({
    type: z.literal(type),
    time: timestamp,
    action_id: id.nullable(),
    actor,
    data: ENTRY_DATA[type] as (typeof ENTRY_DATA)[T],
  });
}

export const entrySchemaUnion = z.discriminatedUnion("type", [
  entrySchema("decision/1"),
  entrySchema("approval/1"),
  entrySchema("lease/1"),
  entrySchema("dispatch/1"),
  entrySchema("evidence/1"),
  entrySchema("job/1"),
  entrySchema("cancel/1"),
  entrySchema("refusal/1"),
  entrySchema("token/1"),
  entrySchema("host/1"),
  entrySchema("admin/1"),
  entrySchema("grant/1"),
  entrySchema("session/1"),
  entrySchema("checkpoint-witness/1"),
  entrySchema("artifact/1"),
  entrySchema("oauth_grant/1"),
]);

export type LedgerEntry = z.output<typeof entrySchemaUnion>;
export type EntryData<T extends EntryType> = z.output<(typeof ENTRY_DATA)[T]>;

/** What a caller hands to encodeEntry; `time` may be a Date for convenience. */
export type EntryInput = { [T in EntryType]: { type: T; time: string | Date; action_id: string | null; actor: string; data: EntryData<T> } }[EntryType];

export type DecodeResult = { ok: true; entry: LedgerEntry } | { ok: false; reason: string };

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(entry)"}: ${issue.message}`)
    .join("; ");
}

/** Validates and canonicalises an entry. Tagged-result form of encodeEntry. */
export function tryEncodeEntry(input: EntryInput): { ok: true; bytes: Uint8Array; entry: LedgerEntry } | { ok: false; reason: string } {
  const candidate = input.time instanceof Date ? { ...input, time: toTimestamp(input.time) } : input;
  const parsed = entrySchemaUnion.safeParse(candidate);
  if (!parsed.success) return { ok: false, reason: describeIssues(parsed.error) };
  const bytes = canonicalBytes(parsed.data);
  if (bytes.length > MAX_ENTRY_BYTES) return { ok: false, reason: `entry is ${bytes.length} bytes, over the ${MAX_ENTRY_BYTES}-byte limit` };
  return { ok: true, bytes, entry: parsed.data };
}

/**
 * The bytes to append. Throws INVALID_ARGUMENT for an entry that does not
 * match its schema: recording the wrong shape is a bug in the caller, and the
 * action it describes must not run (docs/design.md#pipeline: if an append fails, the action
 * does not run).
 */
export function encodeEntry(input: EntryInput): Uint8Array {
  const result = tryEncodeEntry(input);
  if (!result.ok) throw new LeaseholdError("INVALID_ARGUMENT", `ledger entry rejected: ${result.reason}`, { tier: "ledger" });
  return result.bytes;
}

/** Decodes stored bytes, accepting only canonical JCS of a valid entry. */
export function decodeEntry(bytes: Uint8Array): DecodeResult {
  if (bytes.length > MAX_ENTRY_BYTES) return { ok: false, reason: `entry is ${bytes.length} bytes, over the ${MAX_ENTRY_BYTES}-byte limit` };
  const parsed = parseCanonical(bytes);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const entry = entrySchemaUnion.safeParse(parsed.value);
  if (!entry.success) return { ok: false, reason: describeIssues(entry.error) };
  return { ok: true, entry: entry.data };
}

export function toTimestamp(date: Date): string {
  return date.toISOString();
}

/**
 * A pseudonymous actor identifier: `sha256:` of a domain-separated
 * `kind`/`id` pair. Without `pepper` anyone who can guess an id (an email
 * address, a host name) can confirm it; with a hub-held pepper it is an
 * HMAC and only the hub can link entries to people.
 */
export function hashActor(kind: ActorKind, actorId: string, pepper?: Uint8Array): `sha256:${string}` {
  if (!ACTOR_KINDS.includes(kind)) throw new LeaseholdError("INVALID_ARGUMENT", `unknown actor kind ${String(kind)}`, { tier: "ledger" });
  if (actorId.length === 0) throw new LeaseholdError("INVALID_ARGUMENT", "actor id must not be empty", { tier: "ledger" });
  const message = `leasehold.actor/1\n${kind}\n${actorId}`;
  // Portable HMAC (no node:crypto): entry decoding also runs in the browser verifier.
  if (pepper === undefined) return sha256Digest(message);
  return `sha256:${toHex(hmac(SHA256, pepper, new TextEncoder().encode(message)))}`;
}

/** `sha256:<hex>` of raw bytes or text — for arguments, output, reasons, secrets. */
export function digestOf(data: Uint8Array | string): `sha256:${string}` {
  return sha256Digest(data);
}

/** `sha256:<hex>` of the JCS bytes of a JSON value — for structured data such as policies and scopes. */
export function digestOfJson(value: unknown): `sha256:${string}` {
  return canonicalDigest(value);
}
