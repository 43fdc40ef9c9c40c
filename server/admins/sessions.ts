/**
 * Admin sessions, the way Lucia's guide builds them (lucia-auth.com,
 * "Basic API"): a token of 20 random bytes (160 bits) in lowercase base32 is
 * the cookie; the table keeps only hex(sha256(token)) as the session id, so a
 * database leak yields no usable cookie.
 *
 * - Sliding expiry: a session idle for IDLE_MS ends; using it in the second
 *   half of that window pushes the expiry forward (one write per half-window,
 *   not per request).
 * - Absolute lifetime: no session outlives created_at + ABSOLUTE_MS however
 *   active it is.
 * - A new session on every sign-in (no fixation); sign-out deletes it;
 *   disabling a user or changing their password deletes all of theirs.
 * - Re-authentication: minting agent tokens and changing roles need a
 *   password or passkey proof within REAUTH_MS (`reauthenticated_at`).
 */
import { sha256 } from "@oslojs/crypto/sha2";
import { encodeBase32LowerCaseNoPadding, encodeHexLowerCase } from "@oslojs/encoding";
import { and, eq, ne } from "drizzle-orm";
import type { Database } from "../db";
import { adminSessions, adminUsers } from "../db/schema";
import type { AdminRole } from "./roles";

export const SESSION_IDLE_MS = 12 * 3600_000;
export const SESSION_ABSOLUTE_MS = 7 * 86_400_000;
export const REAUTH_MS = 5 * 60_000;

/** `__Host-` (Secure, Path=/, no Domain) only over HTTPS: browsers refuse the prefix otherwise. */
export const ADMIN_SESSION_COOKIE = "leasehold_session";
export const SECURE_ADMIN_SESSION_COOKIE = "__Host-leasehold_session";
const TOKEN_PATTERN = /^[a-z2-7]{32}$/;

export interface AdminSession {
  sessionId: string;
  adminId: string;
  username: string;
  role: AdminRole;
  mustChangePassword: boolean;
  expiresAt: Date;
  /** When this session last proved the password or a passkey (sign-in counts). */
  reauthenticatedAt: Date | null;
}

export function generateSessionToken(): string {
  const bytes = new Uint8Array(20);
  crypto.getRandomValues(bytes);
  return encodeBase32LowerCaseNoPadding(bytes);
}

export function sessionIdOf(token: string): string {
  return encodeHexLowerCase(sha256(new TextEncoder().encode(token)));
}

export async function createAdminSession(db: Database, adminId: string, now = new Date()): Promise<{ token: string; sessionId: string; expiresAt: Date }> {
  const token = generateSessionToken();
  const sessionId = sessionIdOf(token);
  const expiresAt = new Date(now.getTime() + SESSION_IDLE_MS);
  await db.insert(adminSessions).values({ id: sessionId, userId: adminId, createdAt: now, expiresAt, reauthenticatedAt: now });
  return { token, sessionId, expiresAt };
}

/** The live session for `token`, its expiry slid forward when due; undefined on any doubt (and an expired row is deleted). */
export async function validateSessionToken(db: Database, token: string, now = new Date()): Promise<AdminSession | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  const sessionId = sessionIdOf(token);
  const [row] = await db
    .select({ session: adminSessions, username: adminUsers.username, role: adminUsers.role, mustChangePassword: adminUsers.mustChangePassword, disabledAt: adminUsers.disabledAt })
    .from(adminSessions)
    .innerJoin(adminUsers, eq(adminUsers.id, adminSessions.userId))
    .where(eq(adminSessions.id, sessionId));
  if (row === undefined) return undefined;
  const absoluteEnd = row.session.createdAt.getTime() + SESSION_ABSOLUTE_MS;
  if (row.disabledAt !== null || now.getTime() >= row.session.expiresAt.getTime() || now.getTime() >= absoluteEnd) {
    await db.delete(adminSessions).where(eq(adminSessions.id, sessionId));
    return undefined;
  }
  let expiresAt = row.session.expiresAt;
  if (expiresAt.getTime() - now.getTime() < SESSION_IDLE_MS / 2) {
    expiresAt = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, absoluteEnd));
    await db.update(adminSessions).set({ expiresAt }).where(eq(adminSessions.id, sessionId));
  }
  return {
    sessionId,
    adminId: row.session.userId,
    username: row.username,
    role: row.role as AdminRole,
    mustChangePassword: row.mustChangePassword,
    expiresAt,
    reauthenticatedAt: row.session.reauthenticatedAt,
  };
}

export async function invalidateSession(db: Database, sessionId: string): Promise<void> {
  await db.delete(adminSessions).where(eq(adminSessions.id, sessionId));
}

/** Ends every session of `adminId` (except `keepSessionId`, the one that just changed the password). */
export async function invalidateUserSessions(db: Database, adminId: string, keepSessionId?: string): Promise<void> {
  await db.delete(adminSessions).where(keepSessionId === undefined ? eq(adminSessions.userId, adminId) : and(eq(adminSessions.userId, adminId), ne(adminSessions.id, keepSessionId)));
}

export async function markReauthenticated(db: Database, sessionId: string, now = new Date()): Promise<void> {
  await db.update(adminSessions).set({ reauthenticatedAt: now }).where(eq(adminSessions.id, sessionId));
}

export function recentlyReauthenticated(session: AdminSession, now = new Date()): boolean {
  return session.reauthenticatedAt !== null && now.getTime() - session.reauthenticatedAt.getTime() <= REAUTH_MS;
}

function cookieValue(header: string | null, name: string): string | undefined {
  if (header === null) return undefined;
  for (const part of header.split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

export function sessionCookieName(secure: boolean): string {
  return secure ? SECURE_ADMIN_SESSION_COOKIE : ADMIN_SESSION_COOKIE;
}

/** The session token a request carries. Over HTTPS only the `__Host-` cookie counts (a sibling host cannot plant it). */
export function sessionTokenFrom(headers: Headers, secure: boolean): string | undefined {
  return cookieValue(headers.get("cookie"), sessionCookieName(secure));
}

/** Set-Cookie for a session token; `HttpOnly; SameSite=Lax; Path=/`, plus `Secure` over HTTPS. */
export function sessionCookie(token: string, expiresAt: Date, secure: boolean): string {
  const parts = [`${sessionCookieName(secure)}=${token}`, "HttpOnly", "SameSite=Lax", "Path=/", `Expires=${expiresAt.toUTCString()}`];
  if (secure) parts.push("Secure");
  return parts.join("; ");
}

export function blankSessionCookie(secure: boolean): string {
  return [`${sessionCookieName(secure)}=`, "HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=0", ...(secure ? ["Secure"] : [])].join("; ");
}

/** The admin behind a request's session cookie, or undefined (deny on any doubt). */
export async function authenticateAdminSession(db: Database, headers: Headers, options: { secure?: boolean } = {}): Promise<AdminSession | undefined> {
  const token = sessionTokenFrom(headers, options.secure ?? false);
  return token === undefined ? undefined : validateSessionToken(db, token);
}
