import { ROLES } from "~/server/admins";
import { PageHeader } from "../../_components/ui";
import { requireAdminPage } from "../../_lib/session";
import { HostsView } from "./hosts-view";

export default async function HostsPage() {
  const session = await requireAdminPage(ROLES.deciders);
  return (
    <>
      <PageHeader title="Hosts" description="What each host's guest agent last reported, the leases held on it, and the capabilities the hub declares." />
      <HostsView owner={session.role === "owner"} />
    </>
  );
}
