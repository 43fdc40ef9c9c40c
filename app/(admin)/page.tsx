import { HealthPanel } from "../_components/health-panel";
import { PageHeader } from "../_components/ui";
import { ROLES } from "~/server/admins";
import { requireAdminPage } from "../_lib/session";
import { DashboardCharts, DashboardFigures } from "./_dashboard/dashboard";

export default async function DashboardPage() {
  const session = await requireAdminPage();
  return (
    <>
      <PageHeader title="Hub overview" description="Pending approvals, recent actions, hosts and the ledger, from the hub's database." />
      <DashboardFigures canDecide={(ROLES.deciders as readonly string[]).includes(session.role)} />
      <DashboardCharts />
      <HealthPanel />
    </>
  );
}
