/**
 * Offline check of passkey-signed approvals in a ledger export (issue 13).
 * Pure: WebCrypto and @simplewebauthn/server's isomorphic helpers only, no
 * `node:` imports — `leasehold verify` (verify.ts) and the browser verifier
 * run this same code.
 *
 * What the export carries (EXPORT_FORMAT.md): `passkey` records (credential
 * id, COSE public key) and `assertion` records (approval id, credential id,
 * authenticatorData, clientDataJSON, signature, nonce). Neither is trusted
 * on its own; each is bound to a sealed entry:
 * - a passkey's key counts only if an admin/1 `passkey.register` entry
 *   sealed settings_digest = passkeyKeyDigest(credential id, key), at an
 *   index before the approval (and no `passkey.remove` of it came earlier);
 * - an assertion counts only if an approval/1 entry sealed its digest as
 *   `assertion_digest`.
 * For every approval/1 `approved` entry with an assertion_digest: the
 * assertion is present and matches the digest; its clientDataJSON is a
 * `webauthn.get` whose challenge is SHA-256("leasehold.approval/1\n" +
 * approval_id + "\n" + action_hash + "\n" + nonce) of THAT entry's approval
 * id and action hash; authenticatorData's rpIdHash is SHA-256 of the
 * origin's host and the user-present and user-verified flags are set; the
 * signature over authenticatorData ‖ SHA-256(clientDataJSON) verifies with
 * the registered public key. Approvals of `high`/`critical` actions (risk
 * from the action's decision/1 `hold`) with no assertion are reported as
 * unsigned, and fail verification when `requirePasskeyFrom` says so.
 *
 * Grants: an action that ran without a person because a grant covered it
 * (decision/1 `grant`, naming the grant) was approved in advance by whoever
 * created the grant. Such actions at `high` or above whose grant's grant/1
 * `created` entry seals no `assertion_digest` (the grant was made without a
 * passkey signature over its scope), or whose creation is not in the
 * export, are reported as unsigned too and fail under `requirePasskeyFrom`.
 */
import { verifySignature } from "@simplewebauthn/server/helpers";
import { approvalChallengeBase64Url, assertionDigest, fromBase64Url, passkeyKeyDigest, sha256, type StoredAssertion } from "../passkeys/challenge";

export interface ApprovalFailure {
  /** 1-based line of the export. */
  line: number;
  /** The leaf index of the approval/1 entry at fault. */
  index?: number;
  reason: string;
}

export interface ApprovalCheckReport {
  /** Approvals whose passkey signature verified. */
  signed: number;
  /** Approved high/critical actions that carry no passkey signature (index of their approval/1 entry). */
  unsigned: Array<{ index: number; approvalId: string; risk: string }>;
  /** Passkey records in the export. */
  passkeys: number;
  /** Actions at high/critical that ran under a grant created without a passkey signature (index of their decision/1 entry). */
  unsignedGrants: Array<{ index: number; actionId: string; grantId: string; risk: string; reason: "unsigned" | "unknown" }>;
}

const RISKS = ["read_only", "low", "medium", "high", "critical"];
const utf8 = new TextEncoder();
const SUFFIX = {
  approval: utf8.encode('"type":"approval/1"}'),
  admin: utf8.encode('"type":"admin/1"}'),
  decision: utf8.encode('"type":"decision/1"}'),
  grant: utf8.encode('"type":"grant/1"}'),
};

function endsWith(bytes: Uint8Array, suffix: Uint8Array): boolean {
  if (bytes.length < suffix.length) return false;
  const offset = bytes.length - suffix.length;
  for (let i = 0; i < suffix.length; i += 1) if (bytes[offset + i] !== suffix[i]) return false;
  return true;
}

interface SignedApproval {
  index: number;
  line: number;
  approvalId: string;
  actionHash: string;
  digest: string;
}

type Fail = (failure: ApprovalFailure) => never;

export class ApprovalChecker {
  private readonly riskByAction = new Map<string, string>();
  private readonly signedApprovals: SignedApproval[] = [];
  private readonly unsigned: ApprovalCheckReport["unsigned"] = [];
  /** Grant id → whether its grant/1 `created` entry seals a passkey assertion. */
  private readonly grantSigned = new Map<string, boolean>();
  private readonly unsignedGrants: ApprovalCheckReport["unsignedGrants"] = [];
  private readonly registered = new Map<string, number>();
  private readonly removed = new Map<string, number>();
  private readonly keys = new Map<string, { publicKey: string; line: number }>();
  private readonly assertions = new Map<string, StoredAssertion & { line: number }>();
  private lastLine = 0;

  /**
   * @param requirePasskeyFrom approvals at or above this risk without a passkey signature fail
   *   verification (default: they are only reported).
   */
  constructor(private readonly requirePasskeyFrom?: "high" | "critical") {}

  /**
   * Called for every entry (its hash already checked). Cheap for most: JCS
   * sorts keys, so `type` is the last member and a suffix test picks out the
   * three entry types this check reads.
   */
  entry(index: number, bytes: Uint8Array, line: number): void {
    this.lastLine = line;
    const kind = endsWith(bytes, SUFFIX.approval)
      ? "approval"
      : endsWith(bytes, SUFFIX.admin)
        ? "admin"
        : endsWith(bytes, SUFFIX.decision)
          ? "decision"
          : endsWith(bytes, SUFFIX.grant)
            ? "grant"
            : undefined;
    if (kind === undefined) return;
    let entry: { action_id?: unknown; data?: Record<string, unknown> };
    try {
      entry = JSON.parse(new TextDecoder().decode(bytes)) as typeof entry;
    } catch {
      return; // not JSON: the schema check (--check-entries) names it; nothing here to bind.
    }
    const data = entry.data ?? {};
    const actionId = typeof entry.action_id === "string" ? entry.action_id : null;
    if (kind === "grant") {
      if (data.event === "created" && typeof data.grant_id === "string" && !this.grantSigned.has(data.grant_id)) this.grantSigned.set(data.grant_id, typeof data.assertion_digest === "string");
    } else if (kind === "decision") {
      if (data.outcome === "hold" && actionId !== null && typeof data.risk === "string") this.riskByAction.set(actionId, data.risk);
      if (data.outcome === "grant" && typeof data.grant_id === "string" && typeof data.risk === "string" && RISKS.indexOf(data.risk) >= RISKS.indexOf("high")) {
        // Unknown risks are not guessed at; a grant whose creation the export does not hold is not trusted to be signed.
        const signed = this.grantSigned.get(data.grant_id);
        if (signed !== true) this.unsignedGrants.push({ index, actionId: actionId ?? "(none)", grantId: data.grant_id, risk: data.risk, reason: signed === undefined ? "unknown" : "unsigned" });
      }
    } else if (kind === "admin") {
      if (typeof data.settings_digest !== "string") return;
      if (data.operation === "passkey.register" && !this.registered.has(data.settings_digest)) this.registered.set(data.settings_digest, index);
      if (data.operation === "passkey.remove" && !this.removed.has(data.settings_digest)) this.removed.set(data.settings_digest, index);
    } else if (data.outcome === "approved" && typeof data.approval_id === "string" && typeof data.action_hash === "string") {
      if (typeof data.assertion_digest === "string") {
        this.signedApprovals.push({ index, line, approvalId: data.approval_id, actionHash: data.action_hash, digest: data.assertion_digest });
      } else {
        // The risk comes from the action's decision/1 `hold` (an earlier entry); unknown risks are not guessed at.
        const risk = actionId === null ? undefined : this.riskByAction.get(actionId);
        if (risk !== undefined && RISKS.indexOf(risk) >= RISKS.indexOf("high")) this.unsigned.push({ index, approvalId: data.approval_id, risk });
      }
    }
  }

  /** A `passkey` record: {kind, credential_id, public_key}. */
  passkey(record: Record<string, unknown>, line: number, fail: Fail): void {
    const { credential_id: id, public_key: key } = record;
    if (typeof id !== "string" || typeof key !== "string" || fromBase64Url(id) === undefined || fromBase64Url(key) === undefined) {
      fail({ line, reason: "passkey credential_id and public_key must be base64url strings" });
    }
    if (this.keys.has(id as string)) fail({ line, reason: `passkey ${String(id)} appears twice` });
    this.keys.set(id as string, { publicKey: key as string, line });
  }

  /** An `assertion` record: {kind, approval_id, credential_id, authenticator_data, client_data_json, signature, nonce}. */
  assertion(record: Record<string, unknown>, line: number, fail: Fail): void {
    const fields = ["credential_id", "authenticator_data", "client_data_json", "signature", "nonce"] as const;
    if (typeof record.approval_id !== "string") fail({ line, reason: "assertion approval_id must be a string" });
    for (const f of fields) {
      const value = record[f];
      if (typeof value !== "string" || fromBase64Url(value) === undefined) fail({ line, reason: `assertion ${f} must be base64url` });
    }
    const approvalId = record.approval_id as string;
    if (this.assertions.has(approvalId)) fail({ line, reason: `two assertions for approval ${approvalId}` });
    this.assertions.set(approvalId, {
      credential_id: record.credential_id as string,
      authenticator_data: record.authenticator_data as string,
      client_data_json: record.client_data_json as string,
      signature: record.signature as string,
      nonce: record.nonce as string,
      line,
    });
  }

  /** Checks every signed approval; the first failure, or null. Call after the whole file verified. */
  async finish(): Promise<ApprovalFailure | null> {
    for (const approval of this.signedApprovals) {
      const failure = await this.check(approval);
      if (failure !== null) return failure;
    }
    if (this.requirePasskeyFrom !== undefined) {
      const floor = RISKS.indexOf(this.requirePasskeyFrom);
      const approval = this.unsigned.find((u) => RISKS.indexOf(u.risk) >= floor);
      const grant = this.unsignedGrants.find((u) => RISKS.indexOf(u.risk) >= floor);
      // The earlier of the two in the log is named first.
      if (approval !== undefined && (grant === undefined || approval.index < grant.index)) {
        return { line: this.lastLine, index: approval.index, reason: unsignedApprovalLine(approval) };
      }
      if (grant !== undefined) return { line: this.lastLine, index: grant.index, reason: unsignedGrantLine(grant) };
    }
    return null;
  }

  /** How many passkey and assertion records were read (the end line counts them). */
  recordCounts(): { passkeys: number; assertions: number } {
    return { passkeys: this.keys.size, assertions: this.assertions.size };
  }

  report(): ApprovalCheckReport {
    return { signed: this.signedApprovals.length, unsigned: [...this.unsigned], passkeys: this.keys.size, unsignedGrants: [...this.unsignedGrants] };
  }

  private async check(a: SignedApproval): Promise<ApprovalFailure | null> {
    const at = (reason: string, line = a.line): ApprovalFailure => ({ line, index: a.index, reason: `entry ${a.index}: approval ${a.approvalId}: ${reason}` });
    const stored = this.assertions.get(a.approvalId);
    if (stored === undefined) return at("its approval/1 entry seals a passkey assertion, but the export carries no assertion for it");
    if ((await assertionDigest(stored)) !== a.digest) return at("the assertion does not match the assertion_digest sealed in its approval/1 entry (changed after sealing)", stored.line);
    const challenge = await challengeProblem({ approvalId: a.approvalId, actionHash: a.actionHash, assertion: stored });
    if (challenge !== null) return at(challenge, stored.line);
    const key = this.keys.get(stored.credential_id);
    if (key === undefined) return at(`signed by passkey ${stored.credential_id}, whose public key the export does not carry — no registered authenticator signed it`, stored.line);
    const keyDigest = await passkeyKeyDigest(stored.credential_id, key.publicKey);
    const registeredAt = this.registered.get(keyDigest);
    if (registeredAt === undefined) return at(`signed by passkey ${stored.credential_id}, but no sealed passkey.register entry registered that key — no registered authenticator signed it`, key.line);
    if (registeredAt > a.index) return at(`signed by passkey ${stored.credential_id}, registered only later (entry ${registeredAt})`, key.line);
    const removedAt = this.removed.get(keyDigest);
    if (removedAt !== undefined && removedAt < a.index) return at(`signed by passkey ${stored.credential_id} after it was removed (entry ${removedAt})`, stored.line);

    const problem = await assertionProblem({ approvalId: a.approvalId, actionHash: a.actionHash, assertion: stored, publicKey: key.publicKey });
    return problem === null ? null : at(problem, stored.line);
  }
}

/** How `leasehold verify` names an approved high/critical action nobody signed. */
export function unsignedApprovalLine(u: ApprovalCheckReport["unsigned"][number]): string {
  return `entry ${u.index}: approval ${u.approvalId} of a ${u.risk}-risk action was not signed by any registered passkey`;
}

/** How `leasehold verify` names a high/critical action that ran under a grant no passkey signed. */
export function unsignedGrantLine(u: ApprovalCheckReport["unsignedGrants"][number]): string {
  const why = u.reason === "unsigned" ? "which was created without a passkey signature over its scope" : "whose creation is not in this export, so no passkey signature over its scope is known";
  return `entry ${u.index}: action ${u.actionId} (${u.risk} risk) ran under grant ${u.grantId}, ${why}`;
}

/**
 * The cryptographic half of checking one approval's passkey assertion: the
 * clientDataJSON is a `webauthn.get` over the challenge derived from this
 * approval id and action hash (with the stored nonce), the authenticator
 * data is for the origin's relying party with user presence and
 * verification, and the signature verifies with `publicKey` (COSE,
 * base64url). Returns why not, or null. The export verifier adds the ledger
 * bindings (sealed digest, registered and not removed); the hub's action page
 * uses this alone against the stored credential.
 */
/** The clientDataJSON of `assertion`, or why it cannot be read. */
function clientDataOf(assertion: StoredAssertion): { bytes: Uint8Array; json: { type?: unknown; challenge?: unknown; origin?: unknown } } | string {
  const bytes = fromBase64Url(assertion.client_data_json);
  if (bytes === undefined) return "clientDataJSON is not base64url";
  try {
    return { bytes, json: JSON.parse(new TextDecoder().decode(bytes)) as { type?: unknown; challenge?: unknown; origin?: unknown } };
  } catch {
    return "clientDataJSON is not JSON";
  }
}

/** Whether the assertion is a `webauthn.get` over the challenge derived from this approval id, action hash and its nonce; why not, or null. */
export async function challengeProblem(input: { approvalId: string; actionHash: string; assertion: StoredAssertion }): Promise<string | null> {
  const clientData = clientDataOf(input.assertion);
  if (typeof clientData === "string") return clientData;
  if (clientData.json.type !== "webauthn.get") return `clientDataJSON type is ${String(clientData.json.type)}, not webauthn.get`;
  const expected = await approvalChallengeBase64Url(input.approvalId, input.actionHash, input.assertion.nonce);
  if (clientData.json.challenge !== expected) {
    return `the passkey signed a challenge that is not derived from this approval and its action_hash ${input.actionHash} — it was made for another approval or action`;
  }
  return null;
}

/**
 * The cryptographic half of checking one approval's passkey assertion: the
 * challenge (above), the authenticator data is for the origin's relying
 * party with user presence and verification, and the signature verifies
 * with `publicKey` (COSE, base64url). Returns why not, or null. The export
 * verifier adds the ledger bindings (sealed digest, registered and not
 * removed); the hub's action page uses this alone against the stored credential.
 */
export async function assertionProblem(input: { approvalId: string; actionHash: string; assertion: StoredAssertion; publicKey: string }): Promise<string | null> {
  const stored = input.assertion;
  const challenge = await challengeProblem(input);
  if (challenge !== null) return challenge;
  const clientData = clientDataOf(stored);
  if (typeof clientData === "string") return clientData;
  let host: string;
  try {
    host = new URL(String(clientData.json.origin)).hostname;
  } catch {
    return "clientDataJSON carries no origin";
  }
  const authData = fromBase64Url(stored.authenticator_data)!;
  if (authData.length < 37) return "authenticatorData is too short";
  const rpIdHash = await sha256(utf8.encode(host));
  if (!rpIdHash.every((b, i) => authData[i] === b)) return `authenticatorData is for another relying party than ${host}`;
  const flags = authData[32]!;
  if ((flags & 0x01) === 0 || (flags & 0x04) === 0) return "the authenticator did not report user presence and verification";
  const clientHash = await sha256(clientData.bytes);
  const data = new Uint8Array(authData.length + clientHash.length);
  data.set(authData);
  data.set(clientHash, authData.length);
  let ok: boolean;
  try {
    ok = await verifySignature({
      signature: fromBase64Url(stored.signature)! as Uint8Array<ArrayBuffer>,
      data: data as Uint8Array<ArrayBuffer>,
      credentialPublicKey: fromBase64Url(input.publicKey)! as Uint8Array<ArrayBuffer>,
    });
  } catch (error) {
    return `the registered public key cannot check the signature: ${(error as Error).message}`;
  }
  if (!ok) return `the passkey signature does not verify with the registered public key of ${stored.credential_id}`;
  return null;
}
