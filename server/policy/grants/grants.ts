/**
 * Grants: narrow, pre-approved permissions (DESIGN.md "Policy").
 *
 * A grant matches tool (operation) + host name + optional argument pattern,
 * up to a risk ceiling, for a number of uses, until an expiry. `critical` is
 * never grantable: a grant's ceiling is at most `high`, and the decision
 * step never consults grants for critical actions.
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
import { and, desc, eq, gt, isNull, sql } from "drizzle-orm";
import { canonicalize } from "../../canonical";
import type { Database } from "../../db";
import { grants } from "../../db/schema";
import { LeaseholdError } from "../../errors";
import { appendEntry } from "../../ledger/append";
import { digestOf, hashActor } from "../../ledger/entry";
import { RISK_LEVELS, compareRisk, type RiskLevel } from "../risk";

export type GrantRow = typeof grants.$inferSelect;
export type GrantRiskCeiling = Exclude<RiskLevel, "critical">;
export const GRANTABLE_LEVELS: readonly GrantRiskCeiling[] = RISK_LEVELS.filter((level): level is GrantRiskCeiling => level !== "critical");

export const GRANT_LIMITS = { maxUses: 10_000, maxLifetimeMs: 90 * 24 * 3600_000, maxPatternLength: 1000 } as const;

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

export interface CreateGrantInput {
  tool: string;
  host: string;
  maxRisk: string;
  uses: number;
  expiresAt: Date;
  pattern?: string | null;
}

function sealGrant(
  db: Database,
  grant: GrantRow,
  event: "created" | "consumed" | "revoked",
  actor: `sha256:${string}`,
  actionId: string | null,
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
      pattern_digest: grant.argumentPattern === null ? null : digestOf(grant.argumentPattern),
    },
  });
}

/** Creates a grant as `admin`, sealed as grant/1 `created` in the same transaction. */
export async function createGrant(db: Database, admin: { id: string }, input: CreateGrantInput): Promise<GrantRow> {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(input.tool)) throw new LeaseholdError("INVALID_ARGUMENT", "grant tool must be an operation name", { tier: "hub" });
  if (!/^[a-z0-9][a-z0-9._-]{0,62}$/.test(input.host)) throw new LeaseholdError("INVALID_ARGUMENT", "grant host must be a host name", { tier: "hub" });
  if (!(GRANTABLE_LEVELS as readonly string[]).includes(input.maxRisk)) {
    throw new LeaseholdError("POLICY_REFUSED", `max risk must be one of ${GRANTABLE_LEVELS.join(", ")}; critical actions are never grantable`, { tier: "hub" });
  }
  if (!Number.isInteger(input.uses) || input.uses < 1 || input.uses > GRANT_LIMITS.maxUses) {
    throw new LeaseholdError("INVALID_ARGUMENT", `uses must be a whole number from 1 to ${GRANT_LIMITS.maxUses}`, { tier: "hub" });
  }
  const lifetime = input.expiresAt.getTime() - Date.now();
  if (!(lifetime > 0) || lifetime > GRANT_LIMITS.maxLifetimeMs) {
    throw new LeaseholdError("INVALID_ARGUMENT", "expiry must be in the future and at most 90 days away", { tier: "hub" });
  }
  const pattern = input.pattern ?? null;
  if (pattern !== null) {
    if (pattern.length === 0 || pattern.length > GRANT_LIMITS.maxPatternLength) throw new LeaseholdError("INVALID_ARGUMENT", "pattern must be 1–1000 characters", { tier: "hub" });
    compilePattern(pattern);
  }
  return db.transaction(async (tx) => {
    const [grant] = await tx
      .insert(grants)
      .values({ tool: input.tool, host: input.host, argumentPattern: pattern, maxRisk: input.maxRisk, usesRemaining: input.uses, expiresAt: input.expiresAt, createdBy: admin.id })
      .returning();
    if (grant === undefined) throw new LeaseholdError("INTERNAL", "grant insert returned no row", { tier: "database" });
    await sealGrant(tx as unknown as Database, grant, "created", hashActor("admin", admin.id), null);
    return grant;
  });
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
