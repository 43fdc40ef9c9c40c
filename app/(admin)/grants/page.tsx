import { ROLES } from "~/server/admins";
import { PageHeader } from "../../_components/ui";
import { requireAdminPage } from "../../_lib/session";
import { GrantsView } from "./grants-view";

export default async function GrantsPage() {
  await requireAdminPage(ROLES.deciders);
  return (
    <>
      <PageHeader
        title="Grants"
        description="Pre-approvals: an action a grant covers exactly (tool, host, command pattern, environment, stdin, working directory, up to its risk) runs without a person, for its uses and until its expiry."
      />
      <GrantsView />
    </>
  );
}
