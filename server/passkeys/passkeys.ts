/**
 * Passkeys (WebAuthn, @simplewebauthn/server): register, list, remove, sign
 * in, and the approval ceremony whose challenge is bound to one approval and
 * its action_hash (./challenge.ts).
 *
 * - Every challenge is a row in webauthn_challenges: single use (deleted when
 *   a response names it), 2 minutes, bound to its purpose, its admin and,
 *   for approvals, to the approval id, the action hash and the nonce.
 * - Registrations and removals are sealed as admin/1 `passkey.register` /
 *   `passkey.remove` with settings_digest = passkeyKeyDigest(credential id,
 *   COSE public key) in the same transaction. A removed credential keeps its
 *   row and key (removed_at): old approvals it signed stay verifiable, it
 *   signs nothing new.
 * - User verification is required in every ceremony.
 */
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { and, asc, eq, isNull, lt } from "drizzle-orm";
import type { AdminRole } from "../admins/roles";
import { createAdminSession } from "../admins/sessions";
import type { Database } from "../db";
import { adminUsers, approvals, passkeyCredentials, webauthnChallenges } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { hashActor } from "../ledger/entry";
import { approvalChallenge, freshNonce, fromBase64Url, grantChallenge, passkeyKeyDigest, toBase64Url, type StoredAssertion } from "./challenge";
import { ceremonyFor, relyingParty, type PasskeySettings } from "./relying-party";

export const CHALLENGE_TTL_MS = 2 * 60_000;
export const PASSKEY_NAME_MAX = 64;
const RP_NAME = "Leasehold";

/** What a challenge may be answered for; `add-passkey` is the existing passkey's consent to a new one, `grant` a grant's scope. */
type Purpose = "register" | "add-passkey" | "sign-in" | "approve" | "grant";
type ChallengeRow = typeof webauthnChallenges.$inferSelect;
type CredentialRow = typeof passkeyCredentials.$inferSelect;

export interface PasskeyListing {
  id: string;
  credentialId: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

function refused(message: string, hint?: string): LeaseholdError {
  return new LeaseholdError("FORBIDDEN", message, { tier: "hub", ...(hint === undefined ? {} : { hint }) });
}

async function storeChallenge(db: Database, row: { challenge: string; purpose: Purpose; userId: string | null; approvalId?: string; actionHash?: string; nonce?: string }): Promise<void> {
  const now = new Date();
  await db.delete(webauthnChallenges).where(lt(webauthnChallenges.expiresAt, now));
  await db.insert(webauthnChallenges).values({ ...row, createdAt: now, expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS) });
}

/** The challenge a response's clientDataJSON names. */
function challengeOf(clientDataJSON: string): string {
  const bytes = fromBase64Url(clientDataJSON);
  if (bytes === undefined) throw new LeaseholdError("INVALID_ARGUMENT", "clientDataJSON is not base64url", { tier: "hub" });
  try {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { challenge?: unknown };
    if (typeof parsed.challenge === "string" && parsed.challenge.length > 0 && parsed.challenge.length < 200) return parsed.challenge;
  } catch {
    // fall through
  }
  throw new LeaseholdError("INVALID_ARGUMENT", "clientDataJSON carries no challenge", { tier: "hub" });
}

/** Takes (deletes) the outstanding challenge named by a response: single use, whatever happens next. */
async function takeChallenge(db: Database, challenge: string, purpose: Purpose): Promise<ChallengeRow> {
  const [row] = await db.delete(webauthnChallenges).where(eq(webauthnChallenges.challenge, challenge)).returning();
  if (row === undefined) throw refused("this passkey challenge is unknown or was already used; start again");
  if (row.purpose !== purpose) throw refused(`this passkey challenge was issued for ${row.purpose}, not ${purpose}`);
  if (row.expiresAt.getTime() <= Date.now()) throw refused("this passkey challenge expired (2 minutes); start again");
  return row;
}

function listing(row: CredentialRow): PasskeyListing {
  return { id: row.id, credentialId: row.credentialId, name: row.name, createdAt: row.createdAt.toISOString(), lastUsedAt: row.lastUsedAt?.toISOString() ?? null };
}

async function sealPasskey(
  db: Database,
  adminId: string,
  operation: "passkey.register" | "passkey.remove",
  credential: { credentialId: string; publicKey: string },
  actor: `sha256:${string}` = hashActor("admin", adminId),
): Promise<void> {
  await appendEntry(db, {
    type: "admin/1",
    time: new Date(),
    action_id: null,
    actor,
    data: { operation, target_digest: hashActor("admin", adminId), settings_digest: await passkeyKeyDigest(credential.credentialId, credential.publicKey) },
  });
}

function userHandleOf(adminId: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(adminId) as Uint8Array<ArrayBuffer>;
}

/** Whether passkeys can work on this hub, and where (for the account page). */
export function passkeyAvailability(settings: PasskeySettings): { available: boolean; reason: string | null; origins: string[] } {
  const rp = relyingParty(settings);
  return rp.available ? { available: true, reason: null, origins: rp.origins } : { available: false, reason: rp.reason, origins: [] };
}

export async function listPasskeys(db: Database, adminId: string): Promise<PasskeyListing[]> {
  const rows = await db
    .select()
    .from(passkeyCredentials)
    .where(and(eq(passkeyCredentials.userId, adminId), isNull(passkeyCredentials.removedAt)))
    .orderBy(asc(passkeyCredentials.createdAt));
  return rows.map(listing);
}

/**
 * A registration ceremony. `confirmWith` is set when the admin already has a
 * passkey: an authentication challenge for those credentials, bound to this
 * registration's challenge, that `registerPasskey` requires an assertion
 * over. A stolen session (even with the password) then cannot plant a
 * passkey beside an existing one; the first passkey needs only the
 * session's recent password re-authentication (checked by the router).
 */
export interface RegistrationCeremony {
  options: PublicKeyCredentialCreationOptionsJSON;
  confirmWith: PublicKeyCredentialRequestOptionsJSON | null;
}

export async function registrationOptions(
  db: Database,
  admin: { id: string; username: string },
  settings: PasskeySettings,
  origin: string | null,
): Promise<RegistrationCeremony> {
  const { rpId } = ceremonyFor(settings, origin);
  const existing = await listPasskeys(db, admin.id);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rpId,
    userName: admin.username,
    userID: userHandleOf(admin.id),
    attestationType: "none",
    excludeCredentials: existing.map((c) => ({ id: c.credentialId })),
    // Discoverable, so "sign in with a passkey" needs no user name; verified, so a stolen unlocked key is not enough.
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
    timeout: CHALLENGE_TTL_MS,
  });
  await storeChallenge(db, { challenge: options.challenge, purpose: "register", userId: admin.id });
  if (existing.length === 0) return { options, confirmWith: null };
  const confirmWith = await generateAuthenticationOptions({
    rpID: rpId,
    userVerification: "required",
    allowCredentials: existing.map((c) => ({ id: c.credentialId })),
    timeout: CHALLENGE_TTL_MS,
  });
  // actionHash carries the registration challenge this consent belongs to: it confirms this ceremony only.
  await storeChallenge(db, { challenge: confirmWith.challenge, purpose: "add-passkey", userId: admin.id, actionHash: options.challenge });
  return { options, confirmWith };
}

export async function registerPasskey(
  db: Database,
  admin: { id: string },
  input: { name: string; response: RegistrationResponseJSON; confirmation?: AuthenticationResponseJSON | null },
  settings: PasskeySettings,
  origin: string | null,
): Promise<PasskeyListing> {
  const ceremony = ceremonyFor(settings, origin);
  const name = input.name.trim();
  if (name.length === 0 || name.length > PASSKEY_NAME_MAX) throw new LeaseholdError("INVALID_ARGUMENT", `name the passkey (1–${PASSKEY_NAME_MAX} characters)`, { tier: "hub" });
  const challenge = await takeChallenge(db, challengeOf(input.response.response.clientDataJSON), "register");
  if (challenge.userId !== admin.id) throw refused("this passkey challenge was issued to another account");
  await confirmAddition(db, admin.id, challenge.challenge, input.confirmation ?? null, settings);
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: input.response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: ceremony.rp.origins,
      expectedRPID: ceremony.rp.rpIds,
      requireUserVerification: true,
    });
  } catch (error) {
    throw refused(`the passkey registration did not verify: ${(error as Error).message}`);
  }
  if (!verified.verified) throw refused("the passkey registration did not verify");
  const credential = verified.registrationInfo.credential;
  const publicKey = toBase64Url(credential.publicKey);
  const row = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [taken] = await t.select({ id: passkeyCredentials.id }).from(passkeyCredentials).where(eq(passkeyCredentials.credentialId, credential.id));
    if (taken !== undefined) throw new LeaseholdError("INVALID_ARGUMENT", "this passkey is already registered", { tier: "hub" });
    const [inserted] = await t
      .insert(passkeyCredentials)
      .values({ userId: admin.id, credentialId: credential.id, publicKey, signCount: credential.counter, transports: credential.transports ?? [], name })
      .returning();
    if (inserted === undefined) throw new LeaseholdError("INTERNAL", "passkey insert returned no row", { tier: "database" });
    await sealPasskey(t, admin.id, "passkey.register", { credentialId: credential.id, publicKey });
    return inserted;
  });
  return listing(row);
}

/**
 * An admin who already has a passkey adds another only with an assertion of
 * an existing one over the `add-passkey` challenge issued with this
 * registration (single use, bound to the registration challenge).
 */
async function confirmAddition(db: Database, adminId: string, registrationChallenge: string, confirmation: AuthenticationResponseJSON | null, settings: PasskeySettings): Promise<void> {
  const existing = await listPasskeys(db, adminId);
  if (existing.length === 0) return;
  if (confirmation === null) {
    throw refused("you already have a passkey: confirm the new one with an existing passkey in the same ceremony", "sign with an existing passkey when asked");
  }
  const consent = await takeChallenge(db, challengeOf(confirmation.response.clientDataJSON), "add-passkey");
  if (consent.userId !== adminId) throw refused("this passkey challenge was issued to another account");
  if (consent.actionHash !== registrationChallenge) throw refused("this confirmation was made for another passkey registration; start again");
  await verifyAssertion(db, confirmation, consent.challenge, settings, adminId);
}

/** Marks a passkey removed (kept, with its key, so approvals it signed stay verifiable). Sealed. */
export async function removePasskey(db: Database, admin: { id: string }, id: string): Promise<void> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw new LeaseholdError("NOT_FOUND", "no such passkey", { tier: "hub" });
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [row] = await t
      .update(passkeyCredentials)
      .set({ removedAt: new Date() })
      .where(and(eq(passkeyCredentials.id, id), eq(passkeyCredentials.userId, admin.id), isNull(passkeyCredentials.removedAt)))
      .returning();
    if (row === undefined) throw new LeaseholdError("NOT_FOUND", "no such passkey on your account", { tier: "hub" });
    await sealPasskey(t, admin.id, "passkey.remove", row);
  });
}

/**
 * Account recovery (an owner resets another admin's password): every passkey
 * of `adminId` is marked removed inside the caller's transaction, each sealed
 * as admin/1 `passkey.remove` by `actor` (a hashActor digest: the owner, or the CLI). Whoever held the account's
 * session or authenticator before the reset must not keep a way back in; the
 * rows and keys stay, so what they signed stays verifiable. Returns how many.
 */
export async function removeAllPasskeys(tx: Database, adminId: string, actor: `sha256:${string}`): Promise<number> {
  const rows = await tx
    .update(passkeyCredentials)
    .set({ removedAt: new Date() })
    .where(and(eq(passkeyCredentials.userId, adminId), isNull(passkeyCredentials.removedAt)))
    .returning();
  for (const row of rows) await sealPasskey(tx, adminId, "passkey.remove", row, actor);
  return rows.length;
}

export async function signInOptions(db: Database, settings: PasskeySettings, origin: string | null): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { rpId } = ceremonyFor(settings, origin);
  // Discoverable credentials: no allow-list, the authenticator offers the accounts it holds.
  const options = await generateAuthenticationOptions({ rpID: rpId, userVerification: "required", timeout: CHALLENGE_TTL_MS });
  await storeChallenge(db, { challenge: options.challenge, purpose: "sign-in", userId: null });
  return options;
}

/** Verifies an assertion against a stored credential of `expectedUser` (if given) and bumps its counter. */
async function verifyAssertion(
  db: Database,
  response: AuthenticationResponseJSON,
  expectedChallenge: string,
  settings: PasskeySettings,
  expectedUser: string | null,
): Promise<CredentialRow> {
  const rp = relyingParty(settings);
  if (!rp.available) throw refused(rp.reason, "set LEASEHOLD_PUBLIC_URL to a URL with a host name");
  const [credential] = await db.select().from(passkeyCredentials).where(eq(passkeyCredentials.credentialId, response.id));
  if (credential === undefined) throw refused("this passkey is not registered on this hub");
  if (credential.removedAt !== null) throw refused("this passkey was removed; it can no longer sign in or approve");
  if (expectedUser !== null && credential.userId !== expectedUser) throw refused("this passkey belongs to another account");
  if (response.response.userHandle !== undefined && response.response.userHandle !== toBase64Url(userHandleOf(credential.userId))) {
    throw refused("the passkey's user handle does not match its account");
  }
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpIds,
      credential: { id: credential.credentialId, publicKey: fromBase64Url(credential.publicKey) as Uint8Array<ArrayBuffer>, counter: credential.signCount, transports: credential.transports as never },
      requireUserVerification: true,
    });
  } catch (error) {
    throw refused(`the passkey signature did not verify: ${(error as Error).message}`);
  }
  if (!verified.verified) throw refused("the passkey signature did not verify");
  await db.update(passkeyCredentials).set({ signCount: verified.authenticationInfo.newCounter, lastUsedAt: new Date() }).where(eq(passkeyCredentials.id, credential.id));
  return credential;
}

/** Signs in with a discoverable passkey: a fresh session (which counts as re-authentication). */
export async function signInWithPasskey(
  db: Database,
  response: AuthenticationResponseJSON,
  settings: PasskeySettings,
  origin: string | null,
): Promise<{ token: string; binding: string; expiresAt: Date; admin: { id: string; username: string; role: AdminRole; mustChangePassword: boolean } }> {
  ceremonyFor(settings, origin);
  const challenge = await takeChallenge(db, challengeOf(response.response.clientDataJSON), "sign-in");
  const credential = await verifyAssertion(db, response, challenge.challenge, settings, null);
  const [user] = await db.select().from(adminUsers).where(eq(adminUsers.id, credential.userId));
  if (user === undefined || user.disabledAt !== null) throw new LeaseholdError("UNAUTHENTICATED", "this account is disabled", { tier: "hub" });
  const session = await createAdminSession(db, user.id);
  return { token: session.token, binding: session.binding, expiresAt: session.expiresAt, admin: { id: user.id, username: user.username, role: user.role as AdminRole, mustChangePassword: user.mustChangePassword } };
}

/**
 * Options for approving one pending approval with a passkey: the challenge is
 * derived from the approval id, its action_hash and a fresh nonce.
 */
export async function approvalOptions(
  db: Database,
  admin: { id: string },
  approvalId: string,
  settings: PasskeySettings,
  origin: string | null,
): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; approvalId: string; actionHash: string }> {
  const { rpId } = ceremonyFor(settings, origin);
  if (!/^[0-9a-f-]{36}$/i.test(approvalId)) throw new LeaseholdError("NOT_FOUND", `no approval ${approvalId}`, { tier: "hub" });
  const [approval] = await db.select().from(approvals).where(eq(approvals.id, approvalId));
  if (approval === undefined) throw new LeaseholdError("NOT_FOUND", `no approval ${approvalId}`, { tier: "hub" });
  if (approval.state !== "pending") throw new LeaseholdError("POLICY_REFUSED", `approval ${approvalId} is already ${approval.state}`, { tier: "hub" });
  const mine = await listPasskeys(db, admin.id);
  if (mine.length === 0) throw refused("register a passkey first (Your account → Passkeys)", "open /account");
  const nonce = freshNonce();
  const challenge = await approvalChallenge(approval.id, approval.actionHash, nonce);
  const options = await generateAuthenticationOptions({
    rpID: rpId,
    challenge: challenge as Uint8Array<ArrayBuffer>,
    userVerification: "required",
    allowCredentials: mine.map((c) => ({ id: c.credentialId })),
    timeout: CHALLENGE_TTL_MS,
  });
  await storeChallenge(db, { challenge: options.challenge, purpose: "approve", userId: admin.id, approvalId: approval.id, actionHash: approval.actionHash, nonce });
  return { options, approvalId: approval.id, actionHash: approval.actionHash };
}

/**
 * Inside the approval's transaction (server/approvals): takes the challenge
 * the assertion names, checks it was issued to this admin for exactly this
 * approval and action hash (recomputing the derivation), verifies the
 * signature with the admin's registered, not removed credential, and returns
 * what approvals.assertion stores.
 */
export async function verifyApprovalAssertion(
  tx: Database,
  input: { approvalId: string; actionHash: string; adminId: string; response: AuthenticationResponseJSON; settings: PasskeySettings },
): Promise<StoredAssertion> {
  const challenge = await takeChallenge(tx, challengeOf(input.response.response.clientDataJSON), "approve");
  if (challenge.userId !== input.adminId) throw refused("this passkey challenge was issued to another approver");
  if (challenge.approvalId !== input.approvalId || challenge.actionHash !== input.actionHash || challenge.nonce === null) {
    throw refused("this passkey signature was made for another approval or another action hash; it does not cover this action");
  }
  const derived = toBase64Url(await approvalChallenge(input.approvalId, input.actionHash, challenge.nonce));
  if (derived !== challenge.challenge) throw refused("the passkey challenge is not derived from this approval and action hash");
  await verifyAssertion(tx, input.response, derived, input.settings, input.adminId);
  return storedAssertion(input.response, challenge.nonce);
}

/**
 * Options for signing a grant's scope with a passkey: the challenge is
 * derived from the scope digest (sha256 of the JCS of the whole scope, see
 * server/policy/grants `grantScope`) and a fresh nonce, stored single use
 * with purpose `grant` (`action_hash` holds the scope digest).
 */
export async function grantOptions(
  db: Database,
  admin: { id: string },
  scopeDigest: string,
  settings: PasskeySettings,
  origin: string | null,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { rpId } = ceremonyFor(settings, origin);
  const mine = await listPasskeys(db, admin.id);
  if (mine.length === 0) throw refused("register a passkey first (Your account → Passkeys)", "open /account");
  const nonce = freshNonce();
  const options = await generateAuthenticationOptions({
    rpID: rpId,
    challenge: (await grantChallenge(scopeDigest, nonce)) as Uint8Array<ArrayBuffer>,
    userVerification: "required",
    allowCredentials: mine.map((c) => ({ id: c.credentialId })),
    timeout: CHALLENGE_TTL_MS,
  });
  await storeChallenge(db, { challenge: options.challenge, purpose: "grant", userId: admin.id, actionHash: scopeDigest, nonce });
  return options;
}

/**
 * Inside the grant's transaction (server/policy/grants): takes the challenge
 * the assertion names, checks it was issued to this admin for exactly this
 * scope digest (recomputing the derivation), verifies the signature with the
 * admin's registered, not removed credential, and returns what
 * grants.assertion stores.
 */
export async function verifyGrantAssertion(
  tx: Database,
  input: { scopeDigest: string; adminId: string; response: AuthenticationResponseJSON; settings: PasskeySettings },
): Promise<StoredAssertion> {
  const challenge = await takeChallenge(tx, challengeOf(input.response.response.clientDataJSON), "grant");
  if (challenge.userId !== input.adminId) throw refused("this passkey challenge was issued to another admin");
  if (challenge.actionHash !== input.scopeDigest || challenge.nonce === null) {
    throw refused("this passkey signature was made for another grant scope; it does not cover this grant");
  }
  const derived = toBase64Url(await grantChallenge(input.scopeDigest, challenge.nonce));
  if (derived !== challenge.challenge) throw refused("the passkey challenge is not derived from this grant's scope");
  await verifyAssertion(tx, input.response, derived, input.settings, input.adminId);
  return storedAssertion(input.response, challenge.nonce);
}

/** What is kept of a verified assertion: enough for `leasehold verify` to check it again offline. */
function storedAssertion(response: AuthenticationResponseJSON, nonce: string): StoredAssertion {
  return {
    credential_id: response.id,
    authenticator_data: response.response.authenticatorData,
    client_data_json: response.response.clientDataJSON,
    signature: response.response.signature,
    nonce,
  };
}
