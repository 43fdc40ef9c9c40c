/**
 * Test-only helpers for router tests: an admin of a role with a session
 * (fresh or past its re-authentication window), a tRPC caller for it, and
 * the stable code of a refusal. Not imported by production code.
 */
import { eq } from "drizzle-orm";
import type { AdminRole } from "../../admins";
import { SESSION_BINDING_HEADER, createAdminSession, sessionCookieName, sessionCookieSecure } from "../../admins";
import type { DatabaseHandle } from "../../db";
import { adminSessions, adminUsers } from "../../db/schema";
import { isLeaseholdError } from "../../errors";
import type { HubRuntime } from "../../hub/runtime";
import { appRouter } from "../root";

export const TEST_PUBLIC_URL = "http://localhost:8700";

export function testRuntime(handle: DatabaseHandle): HubRuntime {
  return { database: { handle }, config: { publicUrl: TEST_PUBLIC_URL, dataDir: "/nonexistent" } } as unknown as HubRuntime;
}

let counter = 0;

/** The headers a signed-in page of a hub at `publicUrl` sends: the session cookie (its name as that hub sets it) and the binding secret. */
export function sessionHeaders(session: { token: string; binding: string }, config: { publicUrl: string; host?: string } = { publicUrl: TEST_PUBLIC_URL }, extra: Record<string, string> = {}): Headers {
  return new Headers({ cookie: sessionCookiePair(session, config), [SESSION_BINDING_HEADER]: session.binding, ...extra });
}

/** `name=token` for the session cookie of a hub at `publicUrl`. */
export function sessionCookiePair(session: { token: string }, config: { publicUrl: string; host?: string } = { publicUrl: TEST_PUBLIC_URL }): string {
  return `${sessionCookieName(sessionCookieSecure(config))}=${session.token}`;
}

/** A new admin of `role` and a caller signed in as it; `stale` backdates the session's last password proof by an hour. */
export async function adminCaller(handle: DatabaseHandle, role: AdminRole, options: { stale?: boolean } = {}) {
  counter += 1;
  const username = `${role}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 6)}`;
  const [admin] = await handle.db.insert(adminUsers).values({ username, passwordHash: "unused", role }).returning();
  if (admin === undefined) throw new Error("no admin row");
  const session = await createAdminSession(handle.db, admin.id);
  if (options.stale === true) await handle.db.update(adminSessions).set({ reauthenticatedAt: new Date(Date.now() - 3600_000) }).where(eq(adminSessions.id, session.sessionId));
  const caller = appRouter.createCaller({ runtime: testRuntime(handle), headers: sessionHeaders(session) });
  return { admin: { id: admin.id, username }, caller };
}

/** The refusal's stable code (LeaseholdError code, else the tRPC code) and hint; throws when the call succeeded. */
export async function refusal(call: Promise<unknown>): Promise<{ code: string; hint: string | undefined; message: string }> {
  try {
    await call;
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    if (isLeaseholdError(cause)) return { code: cause.code, hint: cause.hint, message: cause.message };
    return { code: String((error as { code?: unknown }).code), hint: undefined, message: String((error as Error).message) };
  }
  throw new Error("expected a refusal, but the call succeeded");
}
