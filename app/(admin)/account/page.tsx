import { Card, PageHeader } from "../../_components/ui";
import { ChangePasswordForm } from "../../change-password/change-password-form";
import { requireAdminPage } from "../../_lib/session";
import { PasskeysCard } from "./passkeys-card";
import { PushCard } from "./push-card";

export default async function AccountPage({ searchParams }: { searchParams: Promise<{ welcome?: string }> }) {
  await requireAdminPage();
  const { welcome } = await searchParams;
  return (
    <>
      <PageHeader title="Your account" description="Your passkeys, your notifications and your password." />
      {welcome === "1" ? (
        <Card title="Password changed">
          <p data-testid="password-changed">Your new password is set. Register a passkey next: approving high-risk actions needs one.</p>
        </Card>
      ) : null}
      <Card title="Passkeys">
        <div id="passkeys" data-testid="passkeys-section">
          <PasskeysCard />
        </div>
      </Card>
      <Card title="Notifications">
        <div id="notifications">
          <PushCard />
        </div>
      </Card>
      <Card title="Change password">
        <ChangePasswordForm forced={false} onDone={undefined} />
      </Card>
    </>
  );
}
