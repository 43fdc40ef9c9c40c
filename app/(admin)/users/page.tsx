import { ROLES } from "~/server/admins";
import { PageHeader } from "../../_components/ui";
import { requireAdminPage } from "../../_lib/session";
import { UsersView } from "./users-view";

export default async function UsersPage() {
  const session = await requireAdminPage(ROLES.owner);
  return (
    <>
      <PageHeader title="Users" description="Admin accounts and their roles. Every change asks for your password again." />
      <UsersView self={session.username} />
    </>
  );
}
