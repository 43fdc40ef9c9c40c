/**
 * Grants: narrow, pre-approved permissions (docs/design.md#grants).
 *
 * A grant matches tool (operation) + host name + the WHOLE prepared action,
 * up to a risk ceiling, for a number of uses, until an expiry. `critical` is
 * never grantable: a grant's ceiling is at most `high`, and the decision
 * step never consults grants for critical actions.
 *
 * The whole action (a grant for `tar -xf a.tar` once ran a shell
 * through `TAR_OPTIONS=--checkpoint-action=exec=…`): every prepared argument
 * is covered by exactly one rule of `ARGUMENT_RULES`, and an argument with no
 * rule makes the grant not match (a person decides):
 *  - the subject (`command`, `code` or `path`) matches the pattern in full;
 *  - `env` equals the grant's env exactly — the same names with the same
 *    values; a grant that lists none covers only an action with none;
 *  - `stdin` is empty, or its sha256 (UTF-8 bytes) is the grant's digest;
 *  - `cwd` equals the grant's cwd (both lexically normalised; default ".");
 *  - `host` is matched by name; `idempotency_key` is not part of the action;
 *    `timeout_s`, `egress`, `offset`, `limit` can only narrow the sandbox or
 *    the read window below what the manifest allows, so any value is covered;
 *  - `content` and `encoding` (fs_write) are the data written to the path
 *    the pattern names: a write grant covers the path, not the bytes.
 * Not covered (so never granted): `language` (run_code — a grant cannot name
 * the interpreter yet) and any argument a runtime capability adds.
 *
 * The argument pattern is a JavaScript regular expression that must match
 * the action's *subject* in full (`^(?:pattern)$`, Unicode mode). The subject
 * is the first present of the prepared arguments `command`, `code`, `path`
 * (the text a person reads in the approval view); an operation with none of
 * them has the canonical JSON of its prepared arguments as subject.
 * Patterns are written by admins; they are compiled once when the grant is
 * created, so a broken pattern is refused then.
 *
 * Consumption contract: one use is spent by a single
 * `UPDATE … SET uses_remaining = uses_remaining - 1 WHERE id = … AND
 * uses_remaining > 0 AND expires_at > now() AND revoked_at IS NULL
 * RETURNING`. PostgreSQL re-checks the WHERE clause on the row it locked, so
 * however many callers race for the last use, exactly one gets a row back.
 * The use and its ledger entries commit in the caller's transaction.
 */
import { createHash } from "node:crypto";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { and, desc, eq, gt, isNull, sql } from "drizzle-orm";
import { canonicalize } from "../../canonical";
import { normaliseWorkspacePath } from "../../capabilities";
import type { Database } from "../../db";
import { grants } from "../../db/schema";
import { LeaseholdError } from "../../errors";
import { appendEntry } from "../../ledger/append";
import { digestOf, hashActor } from "../../ledger/entry";
import { assertionDigest, needsPasskey, type StoredAssertion } from "../../passkeys/challenge";
import { grantOptions, verifyGrantAssertion } from "../../passkeys/passkeys";
import { relyingParty, type PasskeySettings } from "../../passkeys/relying-party";
import { describeInvisibleCharacters, hasInvisibleCharacters, neutraliseOneLine } from "../../text";
import { RISK_LEVELS, compareRisk, type RiskLevel } from "../risk";

export type GrantRow = typeof grants.$inferSelect;
export type GrantRiskCeiling = Exclude<RiskLevel, "critical">;
export const GRANTABLE_LEVELS: readonly GrantRiskCeiling[] = RISK_LEVELS.filter((level): level is GrantRiskCeiling => level !== "critical");

export const GRANT_LIMITS = { maxUses: 10_000, maxLifetimeMs: 90 * 24 * 3600_000, maxPatternLength: 1000, maxEnv: 32, maxEnvValueLength: 4096, maxCwdLength: 1024 } as const;

/** POSIX-portable environment names (what a shell can export). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

const SUBJECT_ARGUMENTS = ["command", "code", "path"] as const;

/** The text a grant pattern is matched against. */
export function grantSubject(prepared: Record<string, unknown>): string {
  for (const name of SUBJECT_ARGUMENTS) {
    const value = prepared[name];
    if (typeof value === "string") return value;
  }
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(prepared)) if (key !== "idempotency_key") rest[key] = value;
  return canonicalize(rest);
}

function compilePattern(pattern: string): RegExp {
  try {
    return new RegExp(`^(?:${pattern})$`, "u");
  } catch (error) {
    throw new LeaseholdError("INVALID_ARGUMENT", `grant pattern is not a valid regular expression: ${(error as Error).message}`, { tier: "hub" });
  }
}

/**
 * Refuses a pattern that holds a control, invisible or direction-changing
 * character as itself (server/text's property set): what a person read
 * would not be what the grant matches (`r<U+200B>m` reads as `rm`). Written
 * as an escape (`\u200b`) it is accepted. Every way to make a grant passes
 * here (`grantScope`), so the browser's early check is only a convenience.
 */
export function assertPatternVisible(pattern: string): void {
  if (hasInvisibleCharacters(pattern)) {
    throw new LeaseholdError(
      "INVALID_ARGUMENT",
      `grant pattern holds invisible or direction-changing characters as themselves (${describeInvisibleCharacters(pattern)}); write each as an escape such as \\u200b — shown escaped: ${neutraliseOneLine(pattern).text}`,
      { tier: "hub", hint: "write each invisible character as a regex escape (\\u200b, \\u{e0041})" },
    );
  }
}

export interface CreateGrantInput {
  tool: string;
  host: string;
  maxRisk: string;
  uses: number;
  expiresAt: Date;
  pattern?: string | null;
  /** The exact environment covered (default: none). */
  env?: Record<string, string> | null;
  /** sha256 hex of the exact stdin covered (default: no stdin). */
  stdinSha256?: string | null;
  /** The exact workspace-relative working directory covered (default "."). */
  cwd?: string | null;
}

function invalidGrant(message: string): LeaseholdError {
  return new LeaseholdError("INVALID_ARGUMENT", message, { tier: "hub" });
}

function validEnv(env: Record<string, string> | null | undefined): Record<string, string> {
  const entries = Object.entries(env ?? {});
  if (entries.length > GRANT_LIMITS.maxEnv) throw invalidGrant(`a grant lists at most ${GRANT_LIMITS.maxEnv} environment variables`);
  const out: Record<string, string> = {};
  for (const [name, value] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!ENV_NAME.test(name)) throw invalidGrant(`environment name ${JSON.stringify(name)} is not a valid name (letters, digits, _; not starting with a digit)`);
    if (typeof value !== "string" || value.length > GRANT_LIMITS.maxEnvValueLength) throw invalidGrant(`environment value of ${name} must be a string of at most ${GRANT_LIMITS.maxEnvValueLength} characters`);
    if (value.includes("\0")) throw invalidGrant(`environment value of ${name} contains a NUL byte`);
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function validCwd(cwd: string | null | undefined): string {
  if (cwd === null || cwd === undefined) return ".";
  if (cwd.length > GRANT_LIMITS.maxCwdLength) throw invalidGrant(`cwd must be at most ${GRANT_LIMITS.maxCwdLength} characters`);
  try {
    return normaliseWorkspacePath("cwd", cwd);
  } catch (error) {
    throw invalidGrant(`grant ${(error as Error).message}`);
  }
}

function validStdinDigest(digest: string | null | undefined): string | null {
  if (digest === null || digest === undefined) return null;
  if (!SHA256_HEX.test(digest)) throw invalidGrant("stdin digest must be a sha256 in 64 hex digits");
  return digest.toLowerCase();
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

type ArgumentRule = (grant: GrantRow, value: unknown) => boolean;
const ANY: ArgumentRule = () => true;

function sameEnv(listed: Record<string, string>, value: unknown): boolean {
  const actual = value === undefined || value === null ? {} : value;
  if (typeof actual !== "object" || Array.isArray(actual)) return false;
  const a = Object.entries(actual as Record<string, unknown>);
  const l = Object.entries(listed);
  return a.length === l.length && a.every(([name, v]) => Object.hasOwn(listed, name) && listed[name] === v);
}

/**
 * How each prepared argument is covered. An argument missing here is not
 * covered, so no grant matches an action that carries it.
 */
const ARGUMENT_RULES: Readonly<Record<string, ArgumentRule>> = {
  host: ANY, // matched by name in the query
  idempotency_key: ANY, // a retry label, not part of what runs
  command: ANY, // the subject: matched by the pattern
  code: ANY,
  path: ANY,
  env: (grant, value) => sameEnv(grant.env ?? {}, value),
  stdin: (grant, value) => {
    const text = value === undefined || value === null ? "" : value;
    if (typeof text !== "string") return false;
    return grant.stdinSha256 === null ? text === "" : sha256Hex(text) === grant.stdinSha256;
  },
  cwd: (grant, value) => {
    const text = value === undefined || value === null ? "." : value;
    if (typeof text !== "string") return false;
    try {
      return normaliseWorkspacePath("cwd", text) === grant.cwd;
    } catch {
      return false;
    }
  },
  timeout_s: ANY, // narrows the manifest's timeout only
  egress: ANY, // narrows the manifest's egress list only
  offset: ANY,
  limit: ANY,
  content: ANY, // fs_write: the bytes written to the path the pattern names
  encoding: ANY,
};

/** Whether env, stdin, cwd and every other prepared argument are covered by `grant` (the pattern is checked apart). */
export function grantCoversArguments(grant: GrantRow, prepared: Record<string, unknown>): boolean {
  for (const name of ["env", "stdin", "cwd"]) if (!(ARGUMENT_RULES[name] as ArgumentRule)(grant, prepared[name])) return false;
  for (const [name, value] of Object.entries(prepared)) {
    const rule = Object.hasOwn(ARGUMENT_RULES, name) ? ARGUMENT_RULES[name] : undefined;
    if (rule === undefined || !rule(grant, value)) return false;
  }
  return true;
}

async function sealGrant(
  db: Database,
  grant: GrantRow,
  event: "created" | "consumed" | "revoked",
  actor: `sha256:${string}`,
  actionId: string | null,
  signed?: { scopeDigest: `sha256:${string}`; assertion: StoredAssertion },
): Promise<bigint> {
  return appendEntry(db, {
    type: "grant/1",
    time: new Date(),
    action_id: actionId,
    actor,
    data: {
      event,
      grant_id: grant.id,
      operation: grant.tool,
      host_id: null,
      risk_ceiling: grant.maxRisk as GrantRiskCeiling,
      uses_remaining: grant.usesRemaining,
      expires_at: grant.expiresAt.toISOString(),
      // The pattern and the exact env / stdin / cwd it covers, as one digest (the grant/1 shape is fixed).
      pattern_digest: grantScopeDigest(grant),
      // A passkey-signed creation: what was signed (the whole scope) and the signature's digest.
      ...(signed === undefined ? {} : { scope_digest: signed.scopeDigest, assertion_digest: await assertionDigest(signed.assertion) }),
    },
  });
}

/**
 * What the ledger records of a grant's scope. A grant with no env, no stdin
 * and cwd "." keeps the old digest of its pattern alone (null without one),
 * so entries sealed before these fields existed still read the same way.
 */
export function grantScopeDigest(grant: Pick<GrantRow, "argumentPattern" | "env" | "stdinSha256" | "cwd">): `sha256:${string}` | null {
  const env = grant.env ?? {};
  if (Object.keys(env).length === 0 && grant.stdinSha256 === null && grant.cwd === ".") return grant.argumentPattern === null ? null : digestOf(grant.argumentPattern);
  return digestOf(canonicalize({ pattern: grant.argumentPattern, env, stdin_sha256: grant.stdinSha256, cwd: grant.cwd }));
}

/**
 * A grant's whole scope after validation and normalisation — exactly what a
 * passkey signs and what the row stores. Its RFC 8785 form's sha256 is the
 * scope digest (`grantScopeSigningDigest`), the challenge's subject
 * (server/passkeys/challenge.ts `grantChallenge`).
 */
export interface GrantScope {
  tool: string;
  host: string;
  max_risk: GrantRiskCeiling;
  pattern: string | null;
  env: Record<string, string>;
  stdin_sha256: string | null;
  cwd: string;
  uses: number;
  /** The exact expiry instant (ISO 8601, milliseconds, UTC), decided before signing. */
  expires_at: string;
}

/** Validates and normalises `input` into the scope a grant would have; throws what `createGrant` would. */
export function grantScope(input: CreateGrantInput, now = Date.now()): GrantScope {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(input.tool)) throw new LeaseholdError("INVALID_ARGUMENT", "grant tool must be an operation name", { tier: "hub" });
  if (!/^[a-z0-9][a-z0-9._-]{0,62}$/.test(input.host)) throw new LeaseholdError("INVALID_ARGUMENT", "grant host must be a host name", { tier: "hub" });
  if (!(GRANTABLE_LEVELS as readonly string[]).includes(input.maxRisk)) {
    throw new LeaseholdError("POLICY_REFUSED", `max risk must be one of ${GRANTABLE_LEVELS.join(", ")}; critical actions are never grantable`, { tier: "hub" });
  }
  if (!Number.isInteger(input.uses) || input.uses < 1 || input.uses > GRANT_LIMITS.maxUses) {
    throw new LeaseholdError("INVALID_ARGUMENT", `uses must be a whole number from 1 to ${GRANT_LIMITS.maxUses}`, { tier: "hub" });
  }
  const lifetime = input.expiresAt.getTime() - now;
  if (!(lifetime > 0) || lifetime > GRANT_LIMITS.maxLifetimeMs) {
    throw new LeaseholdError("INVALID_ARGUMENT", "expiry must be in the future and at most 90 days away", { tier: "hub" });
  }
  const pattern = input.pattern ?? null;
  if (pattern !== null) {
    if (pattern.length === 0 || pattern.length > GRANT_LIMITS.maxPatternLength) throw new LeaseholdError("INVALID_ARGUMENT", "pattern must be 1–1000 characters", { tier: "hub" });
    assertPatternVisible(pattern);
    compilePattern(pattern);
  }
  return {
    tool: input.tool,
    host: input.host,
    max_risk: input.maxRisk as GrantRiskCeiling,
    pattern,
    env: validEnv(input.env),
    stdin_sha256: validStdinDigest(input.stdinSha256),
    cwd: validCwd(input.cwd),
    uses: input.uses,
    expires_at: input.expiresAt.toISOString(),
  };
}

/** `sha256:<hex>` of the RFC 8785 form of the scope: what the passkey's challenge is derived from. */
export function grantScopeSigningDigest(scope: GrantScope): `sha256:${string}` {
  return digestOf(canonicalize(scope));
}

/**
 * How a grant's creation is proven by a person. `settings` carries the hub's
 * passkey threshold (LEASEHOLD_PASSKEY_APPROVAL_RISK) and relying party;
 * `assertion` is a WebAuthn assertion over the grant challenge of this exact
 * scope (server/passkeys `grantOptions`). Omitted, the threshold counts as
 * `high` (fail closed): a `high` grant is refused.
 */
export interface GrantPasskeyProof {
  settings: PasskeySettings;
  assertion?: AuthenticationResponseJSON | null;
}

/** Whether creating a grant with this ceiling needs a passkey signature under `settings`. */
export function grantNeedsPasskey(maxRisk: string, settings: Pick<PasskeySettings, "passkeyApprovalRisk"> | undefined): boolean {
  return needsPasskey(maxRisk, settings?.passkeyApprovalRisk ?? "high");
}

/** The refusal for creating a grant at or above the threshold without a passkey signature: says where it can be done, or why not here. */
export function grantPasskeyRefusal(maxRisk: string, settings: PasskeySettings | undefined): LeaseholdError {
  const threshold = settings?.passkeyApprovalRisk ?? "high";
  const rp = settings === undefined ? null : relyingParty(settings);
  if (rp !== null && !rp.available) {
    return new LeaseholdError(
      "FORBIDDEN",
      `a grant with ceiling ${maxRisk} needs a passkey signature over its scope, and ${rp.reason}. Until then such grants are refused (LEASEHOLD_PASSKEY_APPROVAL_RISK=${threshold}; set it to off to create them without a passkey)`,
      { tier: "hub", hint: "set LEASEHOLD_PUBLIC_URL to a URL with a host name" },
    );
  }
  const where = rp === null ? "in the browser (Grants page)" : `in the browser at ${rp.origins[0]}/grants`;
  return new LeaseholdError(
    "FORBIDDEN",
    `a grant with ceiling ${maxRisk} needs a passkey signature over its scope (LEASEHOLD_PASSKEY_APPROVAL_RISK=${threshold}): create it ${where}, where your passkey signs it`,
    { tier: "hub", hint: "create the grant in the browser" },
  );
}

/**
 * Creates a grant as `admin`, sealed as grant/1 `created` in the same
 * transaction. At or above the passkey threshold the grant needs
 * `proof.assertion`, verified inside that transaction against the challenge
 * derived from exactly this scope (another scope, a used or foreign
 * challenge, another admin's passkey: refused, nothing created); it is
 * stored in `grants.assertion` and its digest sealed with the scope digest.
 * Below the threshold an assertion, if given, is verified and kept too.
 */
export async function createGrant(db: Database, admin: { id: string }, input: CreateGrantInput, proof?: GrantPasskeyProof): Promise<GrantRow> {
  const scope = grantScope(input);
  const assertion = proof?.assertion ?? null;
  if (assertion === null && grantNeedsPasskey(scope.max_risk, proof?.settings)) throw grantPasskeyRefusal(scope.max_risk, proof?.settings);
  const scopeDigest = grantScopeSigningDigest(scope);
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const stored = assertion === null || proof === undefined ? null : await verifyGrantAssertion(t, { scopeDigest, adminId: admin.id, response: assertion, settings: proof.settings });
    const [grant] = await tx
      .insert(grants)
      .values({
        tool: scope.tool,
        host: scope.host,
        argumentPattern: scope.pattern,
        env: scope.env,
        stdinSha256: scope.stdin_sha256,
        cwd: scope.cwd,
        maxRisk: scope.max_risk,
        usesRemaining: scope.uses,
        expiresAt: new Date(scope.expires_at),
        createdBy: admin.id,
        assertion: stored === null ? null : { ...stored },
      })
      .returning();
    if (grant === undefined) throw new LeaseholdError("INTERNAL", "grant insert returned no row", { tier: "database" });
    await sealGrant(t, grant, "created", hashActor("admin", admin.id), null, stored === null ? undefined : { scopeDigest, assertion: stored });
    return grant;
  });
}

/**
 * The passkey ceremony for creating exactly `input`: the normalised scope
 * (with its exact expiry, which `createGrant` must then receive unchanged)
 * and WebAuthn options whose challenge is derived from its digest.
 */
export async function grantPasskeyOptions(
  db: Database,
  admin: { id: string },
  input: CreateGrantInput,
  settings: PasskeySettings,
  origin: string | null,
): Promise<{ scope: GrantScope; scopeDigest: `sha256:${string}`; options: Awaited<ReturnType<typeof grantOptions>> }> {
  const scope = grantScope(input);
  const scopeDigest = grantScopeSigningDigest(scope);
  return { scope, scopeDigest, options: await grantOptions(db, admin, scopeDigest, settings, origin) };
}

export async function listGrants(db: Database, options: { includeInactive?: boolean } = {}): Promise<GrantRow[]> {
  const where = options.includeInactive ? undefined : and(isNull(grants.revokedAt), gt(grants.usesRemaining, 0), sql`${grants.expiresAt} > now()`);
  return db.select().from(grants).where(where).orderBy(desc(grants.createdAt)).limit(200);
}

/** Revokes a grant as `admin`; sealed. NOT_FOUND when it does not exist or is already revoked. */
export async function revokeGrant(db: Database, admin: { id: string }, grantId: string): Promise<GrantRow> {
  return db.transaction(async (tx) => {
    const [grant] = await tx
      .update(grants)
      .set({ revokedAt: new Date(), revokedBy: admin.id })
      .where(and(eq(grants.id, grantId), isNull(grants.revokedAt)))
      .returning();
    if (grant === undefined) throw new LeaseholdError("NOT_FOUND", `no active grant ${grantId}`, { tier: "hub" });
    await sealGrant(tx as unknown as Database, grant, "revoked", hashActor("admin", admin.id), null);
    return grant;
  });
}

export interface GrantMatchInput {
  tool: string;
  host: string;
  risk: RiskLevel;
  prepared: Record<string, unknown>;
}

/** Grants that would cover this action now (does not consume). Never for critical. */
export async function matchingGrants(db: Database, input: GrantMatchInput): Promise<GrantRow[]> {
  if (input.risk === "critical") return [];
  const candidates = await db
    .select()
    .from(grants)
    .where(and(eq(grants.tool, input.tool), eq(grants.host, input.host), isNull(grants.revokedAt), gt(grants.usesRemaining, 0), sql`${grants.expiresAt} > now()`))
    .orderBy(grants.expiresAt, grants.id);
  const subject = grantSubject(input.prepared);
  return candidates.filter((grant) => {
    if (compareRisk(input.risk, grant.maxRisk as RiskLevel) > 0) return false;
    if (!grantCoversArguments(grant, input.prepared)) return false;
    return grant.argumentPattern === null || compilePattern(grant.argumentPattern).test(subject);
  });
}

/**
 * Spends one use of the first matching grant that still has one, inside
 * `tx`, and seals grant/1 `consumed` there too. Returns null when no grant
 * covers the action (or every candidate lost its last use to a racer).
 */
export async function consumeMatchingGrant(
  tx: Database,
  input: GrantMatchInput & { actor: `sha256:${string}`; actionId: string },
): Promise<GrantRow | null> {
  for (const candidate of await matchingGrants(tx, input)) {
    const [spent] = await tx
      .update(grants)
      .set({ usesRemaining: sql`${grants.usesRemaining} - 1` })
      .where(and(eq(grants.id, candidate.id), gt(grants.usesRemaining, 0), sql`${grants.expiresAt} > now()`, isNull(grants.revokedAt)))
      .returning();
    if (spent !== undefined) {
      await sealGrant(tx, spent, "consumed", input.actor, input.actionId);
      return spent;
    }
  }
  return null;
}
