import { Suspense } from "react";
import { ROLES } from "~/server/admins";
import { Loading, PageHeader } from "../../_components/ui";
import { requireAdminPage } from "../../_lib/session";
import { ActionsList } from "./actions-list";

export default async function ActionsPage() {
  await requireAdminPage(ROLES.readers);
  return (
    <>
      <PageHeader title="Actions" description="Every action the pipeline recorded, newest first. Search by command, operation, host, token, state or decision." />
      <Suspense fallback={<Loading what="actions" />}>
        <ActionsList />
      </Suspense>
    </>
  );
}
