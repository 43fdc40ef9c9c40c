import { redirect } from "next/navigation";
import { Card } from "../_components/ui";
import { currentAdmin } from "../_lib/session";
import { SignInForm } from "./sign-in-form";

export const dynamic = "force-dynamic";

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string | string[] }> }) {
  const session = await currentAdmin();
  if (session !== undefined) redirect(session.mustChangePassword ? "/change-password" : "/");
  const { next } = await searchParams;
  return (
    <main>
      <div className="form-narrow">
        <h1>Leasehold admin</h1>
        <p className="muted">Sign in to approve agent actions, manage hosts and audit the ledger.</p>
        <Card>
          <SignInForm next={typeof next === "string" ? next : undefined} />
        </Card>
        <p className="hint">The first admin&apos;s one-time password is printed by the hub&apos;s first start; more admins: <code>leasehold admin create</code>.</p>
      </div>
    </main>
  );
}
