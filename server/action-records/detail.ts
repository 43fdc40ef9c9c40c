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
import { asc, eq, inArray, sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { actions, adminUsers, agentTokens, approvals, evidence, hosts, jobs, passkeyCredentials } from "../db/schema";
import { LeaseholdError } from "../errors";
import { assertionProblem } from "../ledger/verify-approvals";
import type { StoredAssertion } from "../passkeys";
import { readJobOutput } from "../jobs/intake";
import { neutraliseOneLine, neutraliseTerminalBytes } from "../text/terminal";
import { DECISION_SQL, type ActionDecision } from "./list";
import { verifyStoredEvidence, type EvidenceView } from "./evidence";
import { receiptFor, timelineOf, type ReceiptView, type TimelineEntry } from "./timeline";

/** Output shown in the page, per stream; the rest is counted, not sent. */
export const MAX_OUTPUT_SHOWN = 256 * 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface OutputStream {
  name: string;
  /** UTF-8 text with terminal control sequences shown as visible escapes. */
  text: string;
  bytes: number;
  shown_bytes: number;
  /** The workload wrote control characters; they are escaped in `text`. */
  controls: boolean;
}

/**
 * The passkey verdict: the stored assertion checked against the registered
 * credential's public key and the action hash. `absent` when the approval
 * carries no assertion; `verified` only when the check passed, so the view
 * never claims a verification it did not make.
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

async function outputOf(db: Database, jobId: string): Promise<OutputStream[]> {
  const stored = await readJobOutput(db, jobId);
  return Object.entries(stored).map(([name, bytes]) => {
    const shown = bytes.subarray(0, MAX_OUTPUT_SHOWN);
    const text = neutraliseTerminalBytes(shown);
    return { name, text: text.text, bytes: bytes.length, shown_bytes: shown.length, controls: text.controls };
  });
}

// eslint-disable-next-line max-lines-per-function -- one record assembled from its rows in one read transaction; each step is a few lines
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
