import { ROLES } from "~/server/admins";
import { PageHeader } from "../../_components/ui";
import { requireAdminPage } from "../../_lib/session";
import { ConsoleRunner } from "./console-runner";

export default async function ConsolePage() {
  await requireAdminPage(ROLES.owner);
  return (
    <>
      <PageHeader
        title="Console"
        description="Run an operation on a host through the same pipeline as agents: the same risk assessment, approvals, sandbox, evidence and ledger."
      />
      <ConsoleRunner />
    </>
  );
}
