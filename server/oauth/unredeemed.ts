import { and, eq, isNull, notExists, sql } from "drizzle-orm";
import type { Database } from "../db";
import { agentTokens, oauthAuthorizations, oauthTokens } from "../db/schema";
import { tokenStatus, type AgentToken, type TokenStatus } from "../tokens";
import { CODE_TTL_MS } from "./authorize";

/**
 * OAuth grants an admin approved whose authorization code was never
 * redeemed. Approving creates the grant (its row and its `oauth_grant/1`
 * entry) with the lifetime the admin chose, but until the client exchanges
 * the code no token exists: the grant can do nothing, and if the code's
 * minute passes it never will. So a listing shows it as `pending` until the
 * code expires, then `expired` — never as an active 30-day grant.
 *
 * "Never redeemed" is read from what exists: a redeemed grant always holds
 * its newest refresh token's row (token-service.ts keeps it until the grant
 * ends or is revoked), so a grant with no `oauth_tokens` row was never
 * redeemed. The code's expiry comes from its authorization request while
 * that row lives (10 minutes), else from the grant's creation (the same
 * moment) plus the code's lifetime.
 */
export async function unredeemedGrants(db: Database): Promise<Map<string, Date>> {
  const rows = await db
    .select({ id: agentTokens.id, createdAt: agentTokens.createdAt, codeExpiresAt: oauthAuthorizations.codeExpiresAt })
    .from(agentTokens)
    .leftJoin(oauthAuthorizations, eq(oauthAuthorizations.tokenId, agentTokens.id))
    .where(
      and(
        eq(agentTokens.kind, "oauth"),
        isNull(agentTokens.revokedAt),
        notExists(db.select({ one: sql`1` }).from(oauthTokens).where(eq(oauthTokens.tokenId, agentTokens.id))),
      ),
    );
  return new Map(rows.map((r) => [r.id, r.codeExpiresAt ?? new Date(new Date(r.createdAt).getTime() + CODE_TTL_MS)]));
}

export type ListedTokenStatus = TokenStatus | "pending";

/** A token's status and expiry as `token list` and the tokens page show them. */
export function listedStatus(token: AgentToken, unredeemed: ReadonlyMap<string, Date>, now: Date): { status: ListedTokenStatus; expiresAt: Date | null } {
  const codeExpiresAt = token.revokedAt === null ? unredeemed.get(token.id) : undefined;
  if (codeExpiresAt === undefined) return { status: tokenStatus(token, now), expiresAt: token.expiresAt };
  return { status: codeExpiresAt.getTime() > now.getTime() ? "pending" : "expired", expiresAt: codeExpiresAt };
}
