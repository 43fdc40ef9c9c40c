import { ROLES } from "~/server/admins";
import { PageHeader } from "../../_components/ui";
import { requireAdminPage } from "../../_lib/session";
import { TokensView } from "./tokens-view";

export default async function TokensPage() {
  await requireAdminPage(ROLES.owner);
  return (
    <>
      <PageHeader title="Agent tokens" description="Bearer tokens MCP clients use. A token's secret is shown once, when it is made; revoking ends what it started." />
      <TokensView />
    </>
  );
}
