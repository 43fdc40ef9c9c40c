/**
 * Offline check of passkey-signed approvals and grants in a ledger export.
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
 *
 * A grant/1 `created` entry that seals `assertion_digest` (and the
 * `scope_digest` the passkey signed) is checked like an approval: the
 * export's `grant_assertion` record for that grant id matches the digest;
 * its challenge is SHA-256("leasehold.grant/1\n" + scope_digest + "\n" +
 * nonce) of THAT entry's scope digest; the key is registered before the
 * entry and not removed; the signature verifies. The verifier cannot see the
 * scope itself (the log holds its digest only), so what it proves is that a
 * registered passkey signed exactly the scope the hub sealed.
 */
import { verifySignature } from "@simplewebauthn/server/helpers";
import { approvalChallengeBase64Url, assertionDigest, fromBase64Url, grantChallengeBase64Url, passkeyKeyDigest, sha256, type StoredAssertion } from "../passkeys/challenge";

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
  /** grant/1 `created` entries whose passkey signature over the sealed scope digest verified. */
  signedGrants: number;
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

/**
 * One entry that seals an `assertion_digest`: an approval/1 `approved` or a
 * grant/1 `created`. Both are checked by the same steps (`checkSigned`); only
 * where the assertion is looked up and which challenge it must carry differ.
 */
interface SignedEntry {
  index: number;
  line: number;
  /** How failures name it: "approval <id>" or "grant <id>". */
  label: string;
  /** The entry type that sealed the digest, for messages. */
  sealedIn: "approval/1" | "grant/1 created";
  digest: string;
  /** The assertion record exported for this approval or grant. */
  assertion(): (StoredAssertion & { line: number }) | undefined;
  /** Why the assertion's clientDataJSON is not over this entry's challenge, or null. */
  challenge(assertion: StoredAssertion): Promise<string | null>;
  /** When the record does not match the digest: the record that does, under another id, if any. */
  elsewhere?(): Promise<string | undefined>;
}

const ASSERTION_FIELDS = ["credential_id", "authenticator_data", "client_data_json", "signature", "nonce"] as const;

type Fail = (failure: ApprovalFailure) => never;

export class ApprovalChecker {
  private readonly riskByAction = new Map<string, string>();
  private readonly signedEntries: SignedEntry[] = [];
  private signedApprovalCount = 0;
  private signedGrantCount = 0;
  private readonly unsigned: ApprovalCheckReport["unsigned"] = [];
  /** Grant id → whether its grant/1 `created` entry seals a passkey assertion. */
  private readonly grantSigned = new Map<string, boolean>();
  private readonly unsignedGrants: ApprovalCheckReport["unsignedGrants"] = [];
  private readonly registered = new Map<string, number>();
  private readonly removed = new Map<string, number>();
  private readonly keys = new Map<string, { publicKey: string; line: number }>();
  private readonly assertions = new Map<string, StoredAssertion & { line: number }>();
  /** Grant id → the `grant_assertion` record exported for it. */
  private readonly grantAssertions = new Map<string, StoredAssertion & { line: number }>();
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
      if (data.event !== "created" || typeof data.grant_id !== "string") return;
      const signed = typeof data.assertion_digest === "string";
      if (!this.grantSigned.has(data.grant_id)) this.grantSigned.set(data.grant_id, signed);
      if (signed) this.signedGrant(index, line, data.grant_id, data.assertion_digest as string, typeof data.scope_digest === "string" ? data.scope_digest : null);
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
        const approvalId = data.approval_id;
        const actionHash = data.action_hash;
        this.signedApprovalCount += 1;
        this.signedEntries.push({
          index,
          line,
          label: `approval ${approvalId}`,
          sealedIn: "approval/1",
          digest: data.assertion_digest,
          assertion: () => this.assertions.get(approvalId),
          challenge: (assertion) => challengeProblem({ approvalId, actionHash, assertion }),
        });
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
    this.storeAssertion(this.assertions, "approval_id", "approval", record, line, fail);
  }

  /** A `grant_assertion` record: {kind, grant_id, credential_id, authenticator_data, client_data_json, signature, nonce}. */
  grantAssertion(record: Record<string, unknown>, line: number, fail: Fail): void {
    this.storeAssertion(this.grantAssertions, "grant_id", "grant", record, line, fail);
  }

  private storeAssertion(
    into: Map<string, StoredAssertion & { line: number }>,
    idField: "approval_id" | "grant_id",
    what: "approval" | "grant",
    record: Record<string, unknown>,
    line: number,
    fail: Fail,
  ): void {
    const kind = String(record.kind);
    if (typeof record[idField] !== "string") fail({ line, reason: `${kind} ${idField} must be a string` });
    for (const f of ASSERTION_FIELDS) {
      const value = record[f];
      if (typeof value !== "string" || fromBase64Url(value) === undefined) fail({ line, reason: `${kind} ${f} must be base64url` });
    }
    const id = record[idField] as string;
    if (into.has(id)) fail({ line, reason: `two assertions for ${what} ${id}` });
    into.set(id, {
      credential_id: record.credential_id as string,
      authenticator_data: record.authenticator_data as string,
      client_data_json: record.client_data_json as string,
      signature: record.signature as string,
      nonce: record.nonce as string,
      line,
    });
  }

  /** A grant/1 `created` entry sealing `assertion_digest`: checked in `finish` like a signed approval. */
  private signedGrant(index: number, line: number, grantId: string, digest: string, scopeDigest: string | null): void {
    this.signedGrantCount += 1;
    this.signedEntries.push({
      index,
      line,
      label: `grant ${grantId}`,
      sealedIn: "grant/1 created",
      digest,
      assertion: () => this.grantAssertions.get(grantId),
      challenge: async (assertion) =>
        scopeDigest === null
          ? "its grant/1 created entry seals an assertion_digest but no scope_digest, so nothing says what the passkey signed"
          : grantChallengeProblem({ scopeDigest, assertion }),
      elsewhere: async () => {
        for (const [other, candidate] of this.grantAssertions) if (other !== grantId && (await assertionDigest(candidate)) === digest) return `grant ${other}`;
        return undefined;
      },
    });
  }

  /** Checks every signed approval and grant, in log order; the first failure, or null. Call after the whole file verified. */
  async finish(): Promise<ApprovalFailure | null> {
    for (const signed of this.signedEntries) {
      const failure = await this.checkSigned(signed);
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

  /** How many passkey, assertion and grant_assertion records were read (the end line counts them). */
  recordCounts(): { passkeys: number; assertions: number; grantAssertions: number } {
    return { passkeys: this.keys.size, assertions: this.assertions.size, grantAssertions: this.grantAssertions.size };
  }

  report(): ApprovalCheckReport {
    return { signed: this.signedApprovalCount, signedGrants: this.signedGrantCount, unsigned: [...this.unsigned], passkeys: this.keys.size, unsignedGrants: [...this.unsignedGrants] };
  }

  private async checkSigned(a: SignedEntry): Promise<ApprovalFailure | null> {
    const at = (reason: string, line = a.line): ApprovalFailure => ({ line, index: a.index, reason: `entry ${a.index}: ${a.label}: ${reason}` });
    const stored = a.assertion();
    if (stored === undefined) return at(`its ${a.sealedIn} entry seals a passkey assertion, but the export carries no assertion for it`);
    if ((await assertionDigest(stored)) !== a.digest) {
      const other = await a.elsewhere?.();
      const moved = other === undefined ? "" : ` — the assertion it sealed is exported under ${other} (swapped)`;
      return at(`the assertion does not match the assertion_digest sealed in its ${a.sealedIn} entry (changed after sealing)${moved}`, stored.line);
    }
    const challenge = await a.challenge(stored);
    if (challenge !== null) return at(challenge, stored.line);
    const key = this.keys.get(stored.credential_id);
    if (key === undefined) return at(`signed by passkey ${stored.credential_id}, whose public key the export does not carry — no registered authenticator signed it`, stored.line);
    const keyDigest = await passkeyKeyDigest(stored.credential_id, key.publicKey);
    const registeredAt = this.registered.get(keyDigest);
    if (registeredAt === undefined) return at(`signed by passkey ${stored.credential_id}, but no sealed passkey.register entry registered that key — no registered authenticator signed it`, key.line);
    if (registeredAt > a.index) return at(`signed by passkey ${stored.credential_id}, registered only later (entry ${registeredAt})`, key.line);
    const removedAt = this.removed.get(keyDigest);
    if (removedAt !== undefined && removedAt < a.index) return at(`signed by passkey ${stored.credential_id} after it was removed (entry ${removedAt})`, stored.line);

    const problem = await signatureProblem(stored, key.publicKey);
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

/** Whether the assertion is a `webauthn.get` over `expected` (base64url); `otherwise` when it is over another challenge, or null. */
function challengeMismatch(assertion: StoredAssertion, expected: string, otherwise: string): string | null {
  const clientData = clientDataOf(assertion);
  if (typeof clientData === "string") return clientData;
  if (clientData.json.type !== "webauthn.get") return `clientDataJSON type is ${String(clientData.json.type)}, not webauthn.get`;
  return clientData.json.challenge === expected ? null : otherwise;
}

/** Whether the assertion is a `webauthn.get` over the challenge derived from this approval id, action hash and its nonce; why not, or null. */
export async function challengeProblem(input: { approvalId: string; actionHash: string; assertion: StoredAssertion }): Promise<string | null> {
  const expected = await approvalChallengeBase64Url(input.approvalId, input.actionHash, input.assertion.nonce);
  return challengeMismatch(
    input.assertion,
    expected,
    `the passkey signed a challenge that is not derived from this approval and its action_hash ${input.actionHash} — it was made for another approval or action`,
  );
}

/** Whether the assertion is a `webauthn.get` over the grant challenge derived from this sealed scope digest and its nonce; why not, or null. */
export async function grantChallengeProblem(input: { scopeDigest: string; assertion: StoredAssertion }): Promise<string | null> {
  const expected = await grantChallengeBase64Url(input.scopeDigest, input.assertion.nonce);
  return challengeMismatch(
    input.assertion,
    expected,
    `the passkey signed a challenge that is not derived from the scope_digest ${input.scopeDigest} sealed for this grant — it was made for another scope`,
  );
}

/**
 * The cryptographic half of checking one approval's passkey assertion: the
 * challenge (above), then `signatureProblem`. Returns why not, or null. The
 * export verifier adds the ledger bindings (sealed digest, registered and
 * not removed); the hub's action page uses this alone against the stored
 * credential.
 */
export async function assertionProblem(input: { approvalId: string; actionHash: string; assertion: StoredAssertion; publicKey: string }): Promise<string | null> {
  return (await challengeProblem(input)) ?? signatureProblem(input.assertion, input.publicKey);
}

/**
 * What every passkey assertion must satisfy whatever it signed: the
 * authenticator data is for the relying party of the clientDataJSON's
 * origin, with user presence and verification, and the signature over
 * authenticatorData ‖ SHA-256(clientDataJSON) verifies with `publicKey`
 * (COSE, base64url). Returns why not, or null. The challenge is the
 * caller's to check first.
 */
async function signatureProblem(stored: StoredAssertion, publicKey: string): Promise<string | null> {
  const clientData = clientDataOf(stored);
  if (typeof clientData === "string") return clientData;
  let host: string;
  try {
    host = new URL(String(clientData.json.origin)).hostname;
  } catch {
    return "clientDataJSON carries no origin";
  }
  const authData = fromBase64Url(stored.authenticator_data);
  if (authData === undefined) return "authenticatorData is not base64url";
  if (authData.length < 37) return "authenticatorData is too short";
  const rpIdHash = await sha256(utf8.encode(host));
  if (!rpIdHash.every((b, i) => authData[i] === b)) return `authenticatorData is for another relying party than ${host}`;
  const flags = authData[32]!;
  if ((flags & 0x01) === 0 || (flags & 0x04) === 0) return "the authenticator did not report user presence and verification";
  const signature = fromBase64Url(stored.signature);
  const key = fromBase64Url(publicKey);
  if (signature === undefined || key === undefined) return "the signature or the public key is not base64url";
  const clientHash = await sha256(clientData.bytes);
  const data = new Uint8Array(authData.length + clientHash.length);
  data.set(authData);
  data.set(clientHash, authData.length);
  let ok: boolean;
  try {
    ok = await verifySignature({
      signature: signature as Uint8Array<ArrayBuffer>,
      data: data as Uint8Array<ArrayBuffer>,
      credentialPublicKey: key as Uint8Array<ArrayBuffer>,
    });
  } catch (error) {
    return `the registered public key cannot check the signature: ${(error as Error).message}`;
  }
  if (!ok) return `the passkey signature does not verify with the registered public key of ${stored.credential_id}`;
  return null;
}
