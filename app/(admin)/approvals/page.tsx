import { ROLES } from "~/server/admins";
import { PageHeader } from "../../_components/ui";
import { requireAdminPage } from "../../_lib/session";
import { ApprovalsQueue } from "./queue";

export const dynamic = "force-dynamic";

/** The live approvals queue (owner, approver). Auditors are sent back to the dashboard; the procedures refuse them too. */
export default async function ApprovalsPage() {
  await requireAdminPage(ROLES.deciders);
  return (
    <>
      <PageHeader
        title="Approvals"
        description="Held actions waiting for a person. Read exactly what will run, then approve or deny; each decision is bound to the action hash shown."
      />
      <ApprovalsQueue />
    </>
  );
}
