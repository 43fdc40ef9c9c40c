import { redirect } from "next/navigation";
import { Card } from "../_components/ui";
import { currentAdmin } from "../_lib/session";
import { ChangePasswordForm } from "./change-password-form";

export const dynamic = "force-dynamic";

export default async function ChangePasswordPage() {
  const session = await currentAdmin();
  if (session === undefined) redirect("/sign-in");
  return (
    <main>
      <div className="form-narrow">
        <h1>Choose your password</h1>
        <p className="muted">
          {session.mustChangePassword ? "You signed in with a one-time password. Replace it before going on." : "Choose a new password for your account."}
        </p>
        <Card>
          <ChangePasswordForm forced={session.mustChangePassword} />
        </Card>
      </div>
    </main>
  );
}
