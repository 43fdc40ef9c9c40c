/**
 * One action, everything a reviewer needs in one answer: the prepared action
 * and its risk, the ledger timeline (every entry naming this action id), the
 * scrubbed output as stored (terminal controls neutralised for display), the
 * evidence envelope re-verified here with the same function the hub uses at
 * intake, the approval (who, when, why, whether a passkey assertion is
 * stored), and a ledger receipt for the evidence entry checked with
 * server/ledger/receipt.ts.
 *
 * Verification here is the hub checking its own database again, against the
 * host key it enrolled and the log key it pinned: it catches a row changed
 * after intake, not a hub that lies. Proof that does not trust the hub is the
 * audit explorer's job (a key the auditor pins, checked in the browser).
 */
import { createHash, createPublicKey } from "node:crypto";
import { asc, eq, inArray, sql } from "drizzle-orm";
import { EvidenceEnvelope, hostKeyId, verifyEvidence } from "../../agent-guest/evidence";
import { executeRows, type Database } from "../db";
import { actions, adminUsers, agentTokens, approvals, evidence, hosts, jobs, passkeyCredentials } from "../db/schema";
import { LeaseholdError } from "../errors";
import { decodeEntry } from "../ledger/entry";
import { toBytes } from "../ledger/node-store";
import { pinnedLogIdentity, proveInclusion } from "../ledger/prove";
import { assertionProblem } from "../ledger/verify-approvals";
import type { StoredAssertion } from "../passkeys";
import { verifyReceipt, type Receipt } from "../ledger/receipt";
import { readJobOutput } from "../jobs/intake";
import { neutraliseOneLine, neutraliseTerminalBytes } from "../text/terminal";
import { DECISION_SQL, type ActionDecision } from "./list";

/** Output shown in the page, per stream; the rest is counted, not sent. */
export const MAX_OUTPUT_SHOWN = 256 * 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface TimelineEntry {
  /** Leaf index in the Merkle log; null while the entry waits for integration. */
  leaf_index: number | null;
  entry_id: string;
  type: string;
  time: string | null;
  actor: string | null;
  data: Record<string, unknown> | null;
  /** Set when the stored bytes do not decode as a valid entry (the audit explorer names the index). */
  invalid: string | null;
}

export interface OutputStream {
  name: string;
  /** UTF-8 text with terminal control sequences shown as visible escapes. */
  text: string;
  bytes: number;
  shown_bytes: number;
  /** The workload wrote control characters; they are escaped in `text`. */
  controls: boolean;
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface EvidenceView {
  envelope: unknown;
  digest: string;
  signature: string;
  key_id: string | null;
  /** Every check passed. */
  verified: boolean;
  checks: Check[];
  /** The kernel side of the lease as the envelope reports it (null when the envelope has no BPF section or does not parse). */
  network: NetworkEvidenceView | null;
}

/** Tier, BPF object, denials and resolved names of one lease, one line per denial for display. */
export interface NetworkEvidenceView {
  tier: "A" | "B" | "C";
  attached: boolean;
  object_sha256: string | null;
  /** One readable line per denial, e.g. "connect tcp 10.0.0.9:22 refused (pid 42, python3)". */
  denials: string[];
  denials_dropped: number | null;
  resolved_names: { name: string; addresses: string[] }[];
}

function denialLine(d: NonNullable<NonNullable<NonNullable<EvidenceEnvelope["enforcement"]>["bpf"]>["denials"]>[number]): string {
  const where =
    d.kind === "connect" || d.kind === "sendmsg"
      ? `${d.protocol ?? ""} ${d.address === undefined ? "?" : d.address.includes(":") ? `[${d.address}]` : d.address}:${d.port ?? "?"}`.trim()
      : d.kind === "socket"
        ? `family ${d.family ?? "?"}${d.protocol === undefined ? "" : ` ${d.protocol}`}`
        : `dev ${d.dev ?? "?"} ino ${d.ino ?? "?"}`;
  return `${d.kind} ${where} refused (pid ${d.pid}, ${d.comm})`;
}

/** What the envelope says about the lease's kernel enforcement, for the page (the envelope itself stays the record). */
export function networkEvidence(envelope: unknown): NetworkEvidenceView | null {
  const parsed = EvidenceEnvelope.safeParse(envelope);
  if (!parsed.success) return null;
  const bpf = parsed.data.enforcement?.bpf;
  if (bpf === undefined) return null;
  return {
    tier: bpf.tier,
    attached: bpf.attached,
    object_sha256: bpf.object_sha256 ?? null,
    denials: (bpf.denials ?? []).map(denialLine),
    denials_dropped: bpf.denials_dropped ?? null,
    resolved_names: (parsed.data.resolved_names ?? []).map((n) => ({ name: n.name, addresses: [...n.addresses] })),
  };
}

/**
 * The passkey verdict slot. The passkeys helper (issue 13) fills this with a
 * check of the stored assertion against the registered credential's public
 * key and the action hash; until then it says "not_checked" and never claims
 * a verification.
 */
export type PasskeyVerdict = { status: "absent" } | { status: "verified" | "failed"; credential_id: string | null; detail: string };

export interface ApprovalView {
  id: string;
  state: string;
  risk: string;
  created_at: string;
  deadline: string;
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
  first_approved_by: string | null;
  first_approved_at: string | null;
  /** Whether a passkey assertion is stored with the decision (`approvals.assertion`). */
  assertion_stored: boolean;
  passkey: PasskeyVerdict;
}

export interface ReceiptView {
  receipt: Receipt;
  tree_size: number;
  verified: boolean;
  detail: string;
  /** Which entry the receipt proves (the evidence entry when there is one). */
  entry_type: string;
}

export interface ActionDetail {
  id: string;
  created_at: string;
  updated_at: string;
  operation: string;
  capability: string;
  channel: string;
  host: string | null;
  requester: { kind: "token" | "admin" | "unknown"; name: string | null };
  action_hash: string;
  arguments: Record<string, unknown>;
  /** The compiled policy's network ("none", or the egress rules — addresses and names — the job carried); null when not recorded. */
  network: { mode: "none" } | { mode: "egress"; egress: string[] } | null;
  risk: { level: string; reasons: unknown };
  state: string;
  decision: ActionDecision;
  error: { code: string; message: string } | null;
  job: { id: string; state: string; created_at: string; claimed_at: string | null; completed_at: string | null; output_pruned: string | null } | null;
  exit: { code: number | null; signal: string | null; timed_out: boolean } | null;
  timeline: TimelineEntry[];
  output: OutputStream[];
  evidence: EvidenceView | null;
  approval: ApprovalView | null;
  receipt: ReceiptView | null;
}

/**
 * Whether the approval's stored passkey assertion verifies: the same
 * cryptographic check `leasehold verify` makes offline (server/ledger
 * verify-approvals.ts `assertionProblem`: challenge derived from this approval
 * and action hash, relying party, user verification, signature), here
 * against the credential's public key as the hub stores it. The ledger
 * bindings (sealed digest, registration entry) are the audit explorer's and
 * the CLI's to check without trusting the hub.
 */
export async function passkeyVerdictFor(db: Database, approval: { id: string; actionHash: string; assertion: Record<string, string> | null }): Promise<PasskeyVerdict> {
  const assertion = approval.assertion;
  if (assertion === null) return { status: "absent" };
  const credentialId = typeof assertion["credential_id"] === "string" ? assertion["credential_id"] : null;
  if (credentialId === null) return { status: "failed", credential_id: null, detail: "the stored assertion names no credential" };
  const [credential] = await db.select({ publicKey: passkeyCredentials.publicKey }).from(passkeyCredentials).where(eq(passkeyCredentials.credentialId, credentialId));
  if (credential === undefined) return { status: "failed", credential_id: credentialId, detail: "no registered passkey has this credential id" };
  const stored: StoredAssertion = {
    credential_id: credentialId,
    authenticator_data: assertion["authenticator_data"] ?? "",
    client_data_json: assertion["client_data_json"] ?? "",
    signature: assertion["signature"] ?? "",
    nonce: assertion["nonce"] ?? "",
  };
  const problem = await assertionProblem({ approvalId: approval.id, actionHash: approval.actionHash, assertion: stored, publicKey: credential.publicKey });
  return problem === null
    ? { status: "verified", credential_id: credentialId, detail: "signed by a registered passkey over the challenge derived from this approval id and action hash" }
    : { status: "failed", credential_id: credentialId, detail: problem };
}

const iso = (d: Date | string | null | undefined): string | null => (d === null || d === undefined ? null : new Date(d).toISOString());

/** Every ledger entry naming `actionId`, in append order. The body is JCS JSON, so its action_id is read in SQL. */
export async function timelineOf(db: Database, actionId: string): Promise<Array<TimelineEntry & { body: Uint8Array }>> {
  const rows = await executeRows<{ id: string | number; leaf_index: string | number | null; body: unknown }>(
    db,
    sql`select id, leaf_index, body from ledger_entries where convert_from(body, 'UTF8')::jsonb->>'action_id' = ${actionId} order by id`,
  );
  return rows.map((row) => {
    const body = toBytes(row.body);
    const decoded = decodeEntry(body);
    const base = { leaf_index: row.leaf_index === null ? null : Number(row.leaf_index), entry_id: String(row.id), body };
    if (!decoded.ok) return { ...base, type: "invalid", time: null, actor: null, data: null, invalid: decoded.reason };
    const e = decoded.entry;
    return { ...base, type: e.type, time: e.time, actor: e.actor, data: e.data as Record<string, unknown>, invalid: null };
  });
}

async function outputOf(db: Database, jobId: string): Promise<OutputStream[]> {
  const stored = await readJobOutput(db, jobId);
  return Object.entries(stored).map(([name, bytes]) => {
    const shown = bytes.subarray(0, MAX_OUTPUT_SHOWN);
    const text = neutraliseTerminalBytes(shown);
    return { name, text: text.text, bytes: bytes.length, shown_bytes: shown.length, controls: text.controls };
  });
}

/** Re-runs the intake checks on the stored envelope: signature (same `verifyEvidence`), digest, binding, artifacts, seal. */
async function verifyStoredEvidence(
  db: Database,
  row: typeof evidence.$inferSelect,
  action: { id: string; actionHash: string },
  keyIdFromResult: string | null,
  sealed: TimelineEntry | undefined,
): Promise<EvidenceView> {
  const checks: Check[] = [];
  const [host] = await db.select().from(hosts).where(eq(hosts.id, row.hostId));
  let digest: string | null = null;
  let keyId = keyIdFromResult;
  if (host === undefined) {
    checks.push({ name: "signature", ok: false, detail: "the host that signed it is not in the database" });
  } else {
    const key = createPublicKey(host.publicKey);
    keyId ??= hostKeyId(key);
    const verified = verifyEvidence({ envelope: row.envelope, signature: { alg: "Ed25519", key_id: keyId, sig: row.signature } }, key);
    if (verified.ok) {
      digest = verified.digest;
      checks.push({ name: "signature", ok: true, detail: `Ed25519 signature over the JCS bytes of the envelope verifies with host ${host.name}'s key enrolled ${host.enrolledAt.toISOString()} (${keyId}); schema leasehold.evidence/1 checked` });
    } else {
      checks.push({ name: "signature", ok: false, detail: `${verified.reason} (host ${host.name}, key ${keyId})` });
    }
  }
  checks.push(
    digest === null
      ? { name: "digest", ok: false, detail: "not computed: the signature did not verify" }
      : { name: "digest", ok: digest === row.envelopeSha256, detail: digest === row.envelopeSha256 ? `envelope digest ${digest} is the one stored at intake` : `envelope digest ${digest} differs from the stored ${row.envelopeSha256}` },
  );
  const env = row.envelope as { action_id?: unknown; action_hash?: unknown; host_id?: unknown; artifacts?: Array<{ name: string; sha256: string; bytes: number }> };
  const bound = env.action_id === action.id && env.action_hash === action.actionHash && env.host_id === row.hostId;
  checks.push({ name: "binding", ok: bound, detail: bound ? "names this action id, its action_hash and the host that ran it" : "names another action, action_hash or host" });
  if (row.jobId !== null) {
    const [job] = await db.select({ result: jobs.result }).from(jobs).where(eq(jobs.id, row.jobId));
    const pruned = (job?.result as { output_pruned_by?: string } | null)?.output_pruned_by;
    if (pruned !== undefined) {
      checks.push({ name: "artifacts", ok: true, detail: `output pruned (${pruned}); the envelope keeps its sha256 and size` });
    } else {
      const stored = await readJobOutput(db, row.jobId);
      const streams = (env.artifacts ?? []).filter((a) => a.name === "stdout" || a.name === "stderr");
      const bad = streams.filter((a) => {
        const bytes = stored[a.name] ?? Buffer.alloc(0);
        return bytes.length !== a.bytes || createHash("sha256").update(bytes).digest("hex") !== a.sha256;
      });
      const uncovered = Object.entries(stored).filter(([name, bytes]) => bytes.length > 0 && !streams.some((a) => a.name === name)).map(([name]) => name);
      const ok = bad.length === 0 && uncovered.length === 0;
      checks.push({
        name: "artifacts",
        ok,
        detail: ok
          ? `stored output matches the envelope's sha256 and byte count (${streams.map((a) => `${a.name} ${a.bytes} B`).join(", ") || "no output"})`
          : `stored output differs from the envelope: ${[...bad.map((a) => a.name), ...uncovered.map((n) => `${n} (not covered)`)].join(", ")}`,
      });
    }
  }
  const sealedDigest = sealed?.data?.["envelope_digest"];
  checks.push(
    sealed === undefined
      ? { name: "sealed", ok: false, detail: "no evidence/1 ledger entry names this action" }
      : { name: "sealed", ok: sealedDigest === row.envelopeSha256, detail: sealedDigest === row.envelopeSha256 ? `the evidence/1 entry (${sealed.leaf_index === null ? "awaiting integration" : `leaf ${sealed.leaf_index}`}) seals this digest` : "the evidence/1 entry seals another digest" },
  );
  return { envelope: row.envelope, digest: row.envelopeSha256, signature: row.signature, key_id: keyId, verified: checks.every((c) => c.ok), checks, network: networkEvidence(row.envelope) };
}

async function receiptFor(db: Database, entry: (TimelineEntry & { body: Uint8Array }) | undefined): Promise<ReceiptView | null> {
  if (entry === undefined || entry.leaf_index === null) return null;
  const identity = await pinnedLogIdentity(db);
  if (identity === null) return null;
  let proof;
  try {
    proof = await proveInclusion(db, entry.leaf_index);
  } catch (error) {
    if (error instanceof LeaseholdError && error.code === "NOT_FOUND") return null; // integrated, checkpoint not signed yet
    throw error;
  }
  const receipt: Receipt = { leaf_index: proof.leaf_index, inclusion_proof: proof.proof, checkpoint: proof.checkpoint };
  const verified = verifyReceipt(entry.body, receipt, identity.verifier);
  return {
    receipt,
    tree_size: proof.tree_size,
    verified: verified.ok,
    detail: verified.ok
      ? `${entry.type} entry is leaf ${proof.leaf_index} of the tree of size ${proof.tree_size}: checkpoint signature verified with the log key this hub pinned (${identity.origin}), inclusion proof (${proof.proof.length} hashes) leads to its root`
      : verified.reason,
    entry_type: entry.type,
  };
}

export async function actionDetail(db: Database, actionId: string): Promise<ActionDetail> {
  if (!UUID.test(actionId)) throw new LeaseholdError("NOT_FOUND", "no such action", { tier: "hub" });
  const [row] = await executeRows<{ decision: ActionDecision }>(db, sql`select ${DECISION_SQL} as decision from actions a left join approvals ap on ap.action_id = a.id where a.id = ${actionId}`);
  const [action] = await db.select().from(actions).where(eq(actions.id, actionId));
  if (action === undefined || row === undefined) throw new LeaseholdError("NOT_FOUND", "no such action", { tier: "hub" });
  const [host] = action.hostId === null ? [] : await db.select({ name: hosts.name }).from(hosts).where(eq(hosts.id, action.hostId));
  const [token] = action.tokenId === null ? [] : await db.select({ name: agentTokens.name }).from(agentTokens).where(eq(agentTokens.id, action.tokenId));
  const [admin] = action.adminId === null ? [] : await db.select({ name: adminUsers.username }).from(adminUsers).where(eq(adminUsers.id, action.adminId));
  const [job] = await db.select().from(jobs).where(eq(jobs.actionId, actionId));
  const [evidenceRow] = await db.select().from(evidence).where(eq(evidence.actionId, actionId)).orderBy(asc(evidence.createdAt)).limit(1);
  const [approvalRow] = await db.select().from(approvals).where(eq(approvals.actionId, actionId));

  const timeline = await timelineOf(db, actionId);
  const sealedEvidence = timeline.find((e) => e.type === "evidence/1");
  const result = (action.result ?? {}) as { completion?: { key_id?: string; error?: { code: string; message: string } | null }; error?: { code: string; message: string } };
  const prepared = action.prepared as { arguments?: Record<string, unknown>; policy?: { network?: unknown } };
  const policyNetwork = prepared.policy?.network as { mode?: unknown; egress?: unknown } | undefined;
  const network: ActionDetail["network"] =
    policyNetwork?.mode === "none"
      ? { mode: "none" }
      : policyNetwork?.mode === "egress" && Array.isArray(policyNetwork.egress) && policyNetwork.egress.every((r) => typeof r === "string")
        ? { mode: "egress", egress: policyNetwork.egress as string[] }
        : null;

  const names = async (ids: Array<string | null>) => {
    const wanted = ids.filter((id): id is string => id !== null);
    if (wanted.length === 0) return new Map<string, string>();
    const rows = await db.select({ id: adminUsers.id, username: adminUsers.username }).from(adminUsers).where(inArray(adminUsers.id, wanted));
    return new Map(rows.map((r) => [r.id, r.username]));
  };
  const deciders = await names([approvalRow?.decidedBy ?? null, approvalRow?.firstApprovedBy ?? null]);
  const envelope = evidenceRow?.envelope as { exit?: { code: number | null; signal: string | null; timed_out: boolean } } | undefined;

  return {
    id: action.id,
    created_at: action.createdAt.toISOString(),
    updated_at: action.updatedAt.toISOString(),
    operation: action.operation,
    capability: action.capabilityId,
    channel: action.channel,
    // Names shown as visible escapes (server/text): a bidi override in a token name must not reorder the heading.
    host: host === undefined ? null : neutraliseOneLine(host.name).text,
    requester:
      action.tokenId !== null
        ? { kind: "token", name: token?.name === undefined ? null : neutraliseOneLine(token.name).text }
        : action.adminId !== null
          ? { kind: "admin", name: admin?.name === undefined ? null : neutraliseOneLine(admin.name).text }
          : { kind: "unknown", name: null },
    action_hash: action.actionHash,
    arguments: prepared.arguments ?? {},
    network,
    risk: { level: action.riskLevel, reasons: action.riskReasons },
    state: action.state,
    decision: row.decision,
    error: result.completion?.error ?? result.error ?? null,
    job:
      job === undefined
        ? null
        : {
            id: job.id,
            state: job.state,
            created_at: job.createdAt.toISOString(),
            claimed_at: iso(job.claimedAt),
            completed_at: iso(job.completedAt),
            output_pruned: (job.result as { output_pruned_by?: string } | null)?.output_pruned_by ?? null,
          },
    exit: envelope?.exit ?? null,
    timeline: timeline.map(({ body: _body, ...entry }) => entry),
    output: job === undefined ? [] : await outputOf(db, job.id),
    evidence: evidenceRow === undefined ? null : await verifyStoredEvidence(db, evidenceRow, action, result.completion?.key_id ?? null, sealedEvidence),
    approval:
      approvalRow === undefined
        ? null
        : {
            id: approvalRow.id,
            state: approvalRow.state,
            risk: approvalRow.riskLevel,
            created_at: approvalRow.createdAt.toISOString(),
            deadline: approvalRow.deadline.toISOString(),
            decided_at: iso(approvalRow.decidedAt),
            decided_by: approvalRow.decidedBy === null ? null : (deciders.get(approvalRow.decidedBy) ?? approvalRow.decidedBy),
            reason: approvalRow.reason,
            first_approved_by: approvalRow.firstApprovedBy === null ? null : (deciders.get(approvalRow.firstApprovedBy) ?? approvalRow.firstApprovedBy),
            first_approved_at: iso(approvalRow.firstApprovedAt),
            assertion_stored: approvalRow.assertion !== null,
            passkey: await passkeyVerdictFor(db, approvalRow),
          },
    receipt: await receiptFor(db, sealedEvidence ?? [...timeline].reverse().find((e) => e.leaf_index !== null)),
  };
}
