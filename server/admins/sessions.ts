/**
 * Admin sessions, minimal: the browser console's caller identity. The
 * cookie holds 32 random bytes (base64url); the table holds only their
 * sha256. Sign-in pages and sliding expiry come with the admin UI issue.
 */
import { createHash, randomBytes } from "node:crypto";
import { and, eq, gt, isNull } from "drizzle-orm";
import type { Database } from "../db";
import { adminSessions, adminUsers } from "../db/schema";

export const ADMIN_SESSION_COOKIE = "leasehold_session";

function sessionId(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export async function createAdminSession(db: Database, adminId: string, ttlMs = 12 * 3600_000): Promise<{ token: string; sessionId: string }> {
  const token = randomBytes(32).toString("base64url");
  const id = sessionId(token);
  await db.insert(adminSessions).values({ id, userId: adminId, expiresAt: new Date(Date.now() + ttlMs) });
  return { token, sessionId: id };
}

function cookieValue(header: string | null, name: string): string | undefined {
  if (header === null) return undefined;
  for (const part of header.split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

/** The admin behind a request's session cookie, or undefined (deny on any doubt). */
export async function authenticateAdminSession(db: Database, headers: Headers): Promise<{ adminId: string; username: string; sessionId: string } | undefined> {
  const token = cookieValue(headers.get("cookie"), ADMIN_SESSION_COOKIE);
  if (token === undefined || !/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const id = sessionId(token);
  const [row] = await db
    .select({ adminId: adminUsers.id, username: adminUsers.username })
    .from(adminSessions)
    .innerJoin(adminUsers, eq(adminUsers.id, adminSessions.userId))
    .where(and(eq(adminSessions.id, id), gt(adminSessions.expiresAt, new Date()), isNull(adminUsers.disabledAt)));
  return row === undefined ? undefined : { ...row, sessionId: id };
}
