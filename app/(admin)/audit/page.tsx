import { ROLES } from "~/server/admins";
import { PageHeader } from "../../_components/ui";
import { requireAdminPage } from "../../_lib/session";
import { CheckpointsCard, ExportButton } from "./audit-explorer";
import { EntriesCard } from "./entries-card";
import { VerifyCard } from "./verify-card";

export default async function AuditPage() {
  await requireAdminPage(ROLES.readers);
  return (
    <>
      <PageHeader
        title="Audit log"
        description="Every decision, approval and result, sealed in an append-only Merkle log. Verify it here, in your browser, against a key you pin."
        actions={<ExportButton />}
      />
      <VerifyCard />
      <EntriesCard />
      <CheckpointsCard />
    </>
  );
}
