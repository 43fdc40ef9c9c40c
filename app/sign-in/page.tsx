import { Card } from "../_components/ui";
import { SignInForm } from "./sign-in-form";

export const dynamic = "force-dynamic";

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string | string[] }> }) {
  // No redirect for a cookie that names a live session: the cookie alone proves nothing (this page may
  // hold no binding secret for it), and sending it on to "/" would loop back here.
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
