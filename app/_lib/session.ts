/**
 * The signed-in admin for a page render (server components only). Pages
 * call `requireAdminPage()`; it redirects to sign-in (or to the forced
 * password change) rather than render anything for a visitor. A page
 * request carries only the cookie (navigation sends no custom header), so
 * this check cannot see the session's binding secret: a page shell renders
 * nothing a bare cookie may not see, and every datum comes through tRPC,
 * which checks cookie and binding together.
 */
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { pageShellSession, type AdminRole, type AdminSession } from "~/server/admins";
import { getHubRuntime } from "~/server/hub/runtime";
import { servedSecurely } from "~/server/trpc/init";

export async function currentAdmin(): Promise<AdminSession | undefined> {
  const runtime = await getHubRuntime();
  return pageShellSession(runtime.database.handle.db, new Headers(await headers()), { secure: servedSecurely(runtime) });
}

export async function requireAdminPage(roles?: readonly AdminRole[]): Promise<AdminSession> {
  const session = await currentAdmin();
  if (session === undefined) redirect("/sign-in");
  if (session.mustChangePassword) redirect("/change-password");
  if (roles !== undefined && !roles.includes(session.role)) redirect("/?forbidden=1");
  return session;
}
