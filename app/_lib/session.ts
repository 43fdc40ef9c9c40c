/**
 * The signed-in admin for a page render (server components only). Pages
 * call `requireAdminPage()`; it redirects to sign-in (or to the forced
 * password change) rather than render anything for a visitor. The tRPC
 * procedures each check again — a page check only decides what to show.
 */
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { authenticateAdminSession, type AdminRole, type AdminSession } from "../../server/admins";
import { getHubRuntime } from "../../server/hub/runtime";
import { servedSecurely } from "../../server/trpc/init";

export async function currentAdmin(): Promise<AdminSession | undefined> {
  const runtime = await getHubRuntime();
  return authenticateAdminSession(runtime.database.handle.db, new Headers(await headers()), { secure: servedSecurely(runtime) });
}

export async function requireAdminPage(roles?: readonly AdminRole[]): Promise<AdminSession> {
  const session = await currentAdmin();
  if (session === undefined) redirect("/sign-in");
  if (session.mustChangePassword) redirect("/change-password");
  if (roles !== undefined && !roles.includes(session.role)) redirect("/?forbidden=1");
  return session;
}
