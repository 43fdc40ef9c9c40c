/**
 * Signing in and out, and the signed-in admin's own account: who am I,
 * change my password, prove my password again (re-authentication).
 * The session cookie is set here through the response headers.
 */
import { z } from "zod";
import {
  PASSWORD_MAX_LENGTH,
  ROLES,
  SESSION_FAILURES_ALLOWED,
  authenticateAdminSession,
  blankSessionCookie,
  changeOwnPassword,
  checkAdminPassword,
  invalidateSession,
  markReauthenticated,
  sessionCookie,
  signIn,
  signInThrottle,
} from "../../admins";
import type { Database } from "../../db";
import { LeaseholdError, isLeaseholdError } from "../../errors";
import { HEADER_PEER } from "../../trust/protocol";
import { createRouter, publicProcedure, roleProcedure, servedSecurely, type TrpcContext } from "../init";
import { channel } from "./channel";

const password = z.string().min(1, "enter the password").max(PASSWORD_MAX_LENGTH);

/** The sign-in throttle's client key: the peer address the hub's own server recorded (bin/next-web.ts replaces any client-sent value). */
function clientKey(ctx: TrpcContext): string {
  return ctx.headers.get(HEADER_PEER) || "unknown";
}

/**
 * A wrong password inside a session (re-authentication, password change):
 * counted with the admin's failed sign-ins and per session; the session that
 * uses up its allowance ends here, so a stolen cookie buys a few guesses only.
 * Always throws: `wrong`, or UNAUTHENTICATED saying the session ended.
 */
async function wrongPasswordInSession(db: Database, session: { adminId: string; sessionId: string }, wrong: LeaseholdError): Promise<never> {
  if (!(await signInThrottle.failInSession(db, session.adminId, session.sessionId))) throw wrong;
  await invalidateSession(db, session.sessionId);
  throw new LeaseholdError("UNAUTHENTICATED", `the password was wrong ${SESSION_FAILURES_ALLOWED} times: this session has ended; sign in again`, {
    tier: "hub",
    hint: "sign in again (or with a passkey); an owner can set a new password with `leasehold admin password`",
  });
}

export const authRouter = createRouter({
  /** The signed-in admin, or null. Public: the sign-in page asks it. */
  me: publicProcedure.query(async ({ ctx }) => {
    // Public, but bound like every other call: a bare cookie learns nothing here either.
    const session = await authenticateAdminSession(ctx.runtime.database.handle.db, ctx.headers, { secure: servedSecurely(ctx.runtime) });
    if (session === undefined) return null;
    return { username: session.username, role: session.role, mustChangePassword: session.mustChangePassword, expiresAt: session.expiresAt.toISOString() };
  }),
  signIn: publicProcedure
    .input(z.strictObject({ username: z.string().min(1, "enter the user name").max(63), password }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const result = await signIn(ctx.runtime.database.handle.db, { username: input.username, password: input.password, client: clientKey(ctx) });
        ctx.resHeaders?.append("Set-Cookie", sessionCookie(result.token, result.expiresAt, servedSecurely(ctx.runtime)));
        // The binding secret goes in the body only: the page keeps it in origin-scoped storage.
        return { username: result.admin.username, role: result.admin.role, mustChangePassword: result.admin.mustChangePassword, binding: result.binding };
      }),
    ),
  signOut: roleProcedure(ROLES.anyone, { duringPasswordChange: true }).mutation(async ({ ctx }) => {
    await invalidateSession(ctx.runtime.database.handle.db, ctx.session.sessionId);
    ctx.resHeaders?.append("Set-Cookie", blankSessionCookie(servedSecurely(ctx.runtime)));
    return { signedOut: true };
  }),
  changePassword: roleProcedure(ROLES.anyone, { duringPasswordChange: true })
    .input(z.strictObject({ current: password, next: z.string().max(PASSWORD_MAX_LENGTH) }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const db = ctx.runtime.database.handle.db;
        const refusal = await signInThrottle.sessionRefusal(ctx.runtime.database.handle.db, ctx.session.sessionId);
        if (refusal !== undefined) throw refusal;
        try {
          await changeOwnPassword(db, { adminId: ctx.session.adminId, sessionId: ctx.session.sessionId, current: input.current, next: input.next });
        } catch (error) {
          // FORBIDDEN is changeOwnPassword's answer to a wrong current password: a guess, counted like a failed sign-in.
          if (isLeaseholdError(error) && error.code === "FORBIDDEN") await wrongPasswordInSession(db, ctx.session, error);
          throw error;
        }
        await markReauthenticated(db, ctx.session.sessionId);
        return { changed: true };
      }),
    ),
  reauthenticate: roleProcedure(ROLES.anyone)
    .input(z.strictObject({ password }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const refusal = await signInThrottle.sessionRefusal(ctx.runtime.database.handle.db, ctx.session.sessionId);
        if (refusal !== undefined) throw refusal;
        if (!(await checkAdminPassword(ctx.runtime.database.handle.db, ctx.session.adminId, input.password))) {
          await wrongPasswordInSession(ctx.runtime.database.handle.db, ctx.session, new LeaseholdError("FORBIDDEN", "the password is wrong", { tier: "hub" }));
        }
        await markReauthenticated(ctx.runtime.database.handle.db, ctx.session.sessionId);
        return { reauthenticated: true };
      }),
    ),
});
