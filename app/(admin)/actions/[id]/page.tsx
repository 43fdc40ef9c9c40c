import { ROLES } from "~/server/admins";
import { requireAdminPage } from "~/app/_lib/session";
import { ActionDetailView } from "./action-detail";

export default async function ActionPage({ params }: { params: Promise<{ id: string }> }) {
  await requireAdminPage(ROLES.readers);
  const { id } = await params;
  return <ActionDetailView id={id} />;
}
