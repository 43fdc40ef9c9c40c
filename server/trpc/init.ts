/**
 * tRPC for the browser channel, read top to bottom: context, initialisation,
 * procedures. Routers live in ./routers, one per domain.
 *
 * Every procedure declares who may call it, and the declaration is data
 * (`meta.roles`) the authorization-matrix test reads:
 * - `publicProcedure` — only sign-in and "who am I" (meta.roles = "public");
 * - `roleProcedure(roles)` — a signed-in admin whose role is in `roles`;
 *   the context gains `session` (narrowed type). An admin who still has to
 *   replace a generated password may call only procedures marked
 *   `duringPasswordChange`.
 * Unauthenticated → UNAUTHORIZED (401); wrong role → FORBIDDEN (403).
 */
import { initTRPC, TRPCError } from "@trpc/server";
import { SESSION_REFUSAL_TEXT, checkAdminSession, sessionCookieSecure, recentlyReauthenticated, type AdminRole, type AdminSession } from "../admins";
import { getHubRuntime, type HubRuntime } from "../hub/runtime";
import { isLeaseholdError, LeaseholdError, toErrorPayload } from "../errors";

export interface TrpcContext {
  runtime: HubRuntime;
  headers: Headers;
  /** Response headers (Set-Cookie); absent for in-process callers. */
  resHeaders?: Headers;
}

export async function createTrpcContext(opts: { headers: Headers; resHeaders?: Headers }): Promise<TrpcContext> {
  return { runtime: await getHubRuntime(), headers: opts.headers, ...(opts.resHeaders === undefined ? {} : { resHeaders: opts.resHeaders }) };
}

export interface ProcedureMeta {
  /** "public", or the roles that may call it. */
  roles: "public" | readonly AdminRole[];
  /** Callable while the admin must still replace a generated password (sign-out, change password). */
  duringPasswordChange?: boolean;
  /** Needs a password or passkey proof within the last few minutes (minting tokens, changing roles). */
  reauth?: boolean;
}

const t = initTRPC
  .context<TrpcContext>()
  .meta<ProcedureMeta>()
  .create({
    defaultMeta: { roles: [] },
    errorFormatter({ shape, error }) {
      // Same {code, message, retryable, hint} as every other channel; anything
      // that is not a LeaseholdError leaks nothing beyond INTERNAL.
      const cause = error.cause;
      const leasehold = isLeaseholdError(cause) ? toErrorPayload(cause) : undefined;
      return {
        ...shape,
        message: leasehold?.message ?? (error.code === "INTERNAL_SERVER_ERROR" ? "internal error" : shape.message),
        data: { ...shape.data, stack: undefined, leasehold: leasehold ?? null },
      };
    },
  });

export const createRouter = t.router;
export const createCallerFactory = t.createCallerFactory;
export { TRPCError };

/** Whether the admin's pages are a secure context (Secure, `__Host-` session cookies): see sessionCookieSecure. */
export function servedSecurely(runtime: HubRuntime): boolean {
  return sessionCookieSecure(runtime.config);
}

function refusal(code: "UNAUTHORIZED" | "FORBIDDEN", error: LeaseholdError): TRPCError {
  return new TRPCError({ code, message: error.message, cause: error });
}

/** Only what must work signed out: sign-in and "who am I". */
export const publicProcedure = t.procedure.meta({ roles: "public" });

const authenticated = t.procedure.use(async ({ ctx, meta, next }) => {
  const roles = meta?.roles;
  // A procedure that forgot to declare roles is callable by nobody.
  if (roles === undefined || roles === "public" || roles.length === 0) {
    throw refusal("FORBIDDEN", new LeaseholdError("FORBIDDEN", "this procedure declares no role", { tier: "hub" }));
  }
  const check = await checkAdminSession(ctx.runtime.database.handle.db, ctx.headers, { secure: servedSecurely(ctx.runtime) });
  if (!check.ok) throw refusal("UNAUTHORIZED", new LeaseholdError("UNAUTHENTICATED", SESSION_REFUSAL_TEXT[check.reason], { tier: "hub" }));
  const session = check.session;
  if (session.mustChangePassword && meta?.duringPasswordChange !== true) {
    throw refusal("FORBIDDEN", new LeaseholdError("FORBIDDEN", "replace your one-time password first", { tier: "hub", hint: "open /change-password" }));
  }
  if (!roles.includes(session.role)) {
    throw refusal("FORBIDDEN", new LeaseholdError("FORBIDDEN", `your role (${session.role}) may not do this; it needs ${roles.join(" or ")}`, { tier: "hub" }));
  }
  if (meta?.reauth === true && !recentlyReauthenticated(session)) {
    throw refusal("FORBIDDEN", new LeaseholdError("FORBIDDEN", "confirm your password first (re-authentication)", { tier: "hub", hint: "reauthenticate" }));
  }
  return next({ ctx: { ...ctx, session: session satisfies AdminSession } });
});

/** A procedure for signed-in admins whose role is in `roles` (see ROLES in server/admins). */
export function roleProcedure(roles: readonly AdminRole[], options: Omit<ProcedureMeta, "roles"> = {}) {
  return authenticated.meta({ roles, ...options });
}
