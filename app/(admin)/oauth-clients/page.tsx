import { ROLES } from "~/server/admins";
import { PageHeader } from "../../_components/ui";
import { requireAdminPage } from "../../_lib/session";
import { OAuthClientsView } from "./oauth-clients-view";

export default async function OAuthClientsPage() {
  await requireAdminPage(ROLES.owner);
  return (
    <>
      <PageHeader
        title="OAuth clients"
        description="MCP clients that sign in through the hub's OAuth authorization server. Each connection still needs an owner's consent; the grants it yields are on the Tokens page."
      />
      <OAuthClientsView />
    </>
  );
}
