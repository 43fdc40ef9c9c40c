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
 * - Binding: a cookie alone opens nothing. Cookies do not isolate ports, so
 *   any other server on the hub's host name (an OAuth client's loopback
 *   listener, a dev server) receives the session cookie. Each session also
 *   has a binding secret, returned once in the sign-in response body; the
 *   page keeps it in origin-scoped storage (scheme, host AND port) and sends
 *   it as SESSION_BINDING_HEADER on every API call. Only hex(sha256) of it is
 *   stored. A request with the cookie but without the matching secret is
 *   refused, and says why.
 */
import { timingSafeEqual } from "node:crypto";
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
import { SESSION_BINDING_HEADER } from "./binding-header";
export { SESSION_BINDING_HEADER };

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

export interface NewAdminSession {
  /** The cookie value. */
  token: string;
  /** The binding secret: goes to the page in the response body, never in a cookie. */
  binding: string;
  sessionId: string;
  expiresAt: Date;
}

export async function createAdminSession(db: Database, adminId: string, now = new Date()): Promise<NewAdminSession> {
  const token = generateSessionToken();
  const binding = generateSessionToken();
  const sessionId = sessionIdOf(token);
  const expiresAt = new Date(now.getTime() + SESSION_IDLE_MS);
  await db.insert(adminSessions).values({ id: sessionId, userId: adminId, createdAt: now, expiresAt, reauthenticatedAt: now, bindingHash: sessionIdOf(binding) });
  return { token, binding, sessionId, expiresAt };
}

/** Whether `binding` is the secret whose hash the session stores (constant time; a session without one never matches). */
function bindingMatches(stored: string | null, binding: string | undefined): boolean {
  if (stored === null || binding === undefined || !TOKEN_PATTERN.test(binding)) return false;
  const a = Buffer.from(sessionIdOf(binding), "hex");
  const b = Buffer.from(stored, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Why a request's session was not accepted (shown to the caller; the cookie and the secret are never echoed). */
export type SessionRefusal = "no-session" | "binding-missing" | "binding-mismatch";

export type SessionCheck = { ok: true; session: AdminSession } | { ok: false; reason: SessionRefusal };

export const SESSION_REFUSAL_TEXT: Readonly<Record<SessionRefusal, string>> = {
  "no-session": "sign in as an admin",
  "binding-missing": `the session cookie came without its binding secret (${SESSION_BINDING_HEADER}): a cookie alone opens nothing; sign in again in this browser`,
  "binding-mismatch": `the session cookie came with a binding secret that is not this session's (${SESSION_BINDING_HEADER}); sign in again in this browser`,
};

/**
 * The live session for `token` and its binding secret, its expiry slid
 * forward when due; or why not (an expired row is deleted). `binding:
 * "cookie-only"` is for server-rendered page shells only: they decide
 * whether to redirect to sign-in, and render nothing a bare cookie may not
 * see (every datum comes through the API, which checks the binding).
 */
export async function checkSessionToken(db: Database, token: string, binding: string | undefined | "cookie-only", now = new Date()): Promise<SessionCheck> {
  if (!TOKEN_PATTERN.test(token)) return { ok: false, reason: "no-session" };
  const sessionId = sessionIdOf(token);
  const [row] = await db
    .select({ session: adminSessions, username: adminUsers.username, role: adminUsers.role, mustChangePassword: adminUsers.mustChangePassword, disabledAt: adminUsers.disabledAt })
    .from(adminSessions)
    .innerJoin(adminUsers, eq(adminUsers.id, adminSessions.userId))
    .where(eq(adminSessions.id, sessionId));
  if (row === undefined) return { ok: false, reason: "no-session" };
  const absoluteEnd = row.session.createdAt.getTime() + SESSION_ABSOLUTE_MS;
  if (row.disabledAt !== null || now.getTime() >= row.session.expiresAt.getTime() || now.getTime() >= absoluteEnd) {
    await db.delete(adminSessions).where(eq(adminSessions.id, sessionId));
    return { ok: false, reason: "no-session" };
  }
  if (binding !== "cookie-only" && !bindingMatches(row.session.bindingHash, binding)) {
    return { ok: false, reason: binding === undefined || binding === "" ? "binding-missing" : "binding-mismatch" };
  }
  let expiresAt = row.session.expiresAt;
  if (expiresAt.getTime() - now.getTime() < SESSION_IDLE_MS / 2) {
    expiresAt = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, absoluteEnd));
    await db.update(adminSessions).set({ expiresAt }).where(eq(adminSessions.id, sessionId));
  }
  const session: AdminSession = {
    sessionId,
    adminId: row.session.userId,
    username: row.username,
    role: row.role as AdminRole,
    mustChangePassword: row.mustChangePassword,
    expiresAt,
    reauthenticatedAt: row.session.reauthenticatedAt,
  };
  return { ok: true, session };
}

/** The live session for `token` and its binding secret, or undefined on any doubt. */
export async function validateSessionToken(db: Database, token: string, binding: string | undefined, now = new Date()): Promise<AdminSession | undefined> {
  const check = await checkSessionToken(db, token, binding, now);
  return check.ok ? check.session : undefined;
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

/**
 * Whether session cookies are `Secure` with the `__Host-` prefix: over
 * HTTPS, and on http://localhost, which browsers treat as a secure context
 * (the default admin URL). Elsewhere over plain HTTP browsers refuse both,
 * and the hub warns at start.
 */
export function sessionCookieSecure(config: { publicUrl: string; host?: string; publicUrlSet?: boolean }): boolean {
  let url: URL;
  try {
    url = new URL(config.publicUrl);
  } catch {
    return false;
  }
  if (url.protocol === "https:") return true;
  if (url.hostname === "localhost") return true;
  // No public URL set and listening on loopback: the admin URL is http://localhost:PORT.
  const host = (config.host ?? "").replace(/^\[|\]$/g, "").toLowerCase();
  const loopback = host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  return config.publicUrlSet !== true && loopback;
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

/** The admin behind a request's session cookie AND its binding header, or why not (deny on any doubt). */
export async function checkAdminSession(db: Database, headers: Headers, options: { secure?: boolean } = {}): Promise<SessionCheck> {
  const token = sessionTokenFrom(headers, options.secure ?? false);
  if (token === undefined) return { ok: false, reason: "no-session" };
  return checkSessionToken(db, token, headers.get(SESSION_BINDING_HEADER) ?? undefined);
}

/** The admin behind a request's session cookie and binding header, or undefined (deny on any doubt). */
export async function authenticateAdminSession(db: Database, headers: Headers, options: { secure?: boolean } = {}): Promise<AdminSession | undefined> {
  const check = await checkAdminSession(db, headers, options);
  return check.ok ? check.session : undefined;
}

/**
 * For server-rendered page shells only: the session a bare cookie names,
 * to decide between rendering the shell and redirecting to sign-in. Never
 * use it to decide or show anything else.
 */
export async function pageShellSession(db: Database, headers: Headers, options: { secure?: boolean } = {}): Promise<AdminSession | undefined> {
  const token = sessionTokenFrom(headers, options.secure ?? false);
  if (token === undefined) return undefined;
  const check = await checkSessionToken(db, token, "cookie-only");
  return check.ok ? check.session : undefined;
}
