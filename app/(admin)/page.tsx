import { HealthPanel } from "../_components/health-panel";
import { PageHeader } from "../_components/ui";
import { DashboardCharts, DashboardFigures } from "./_dashboard/dashboard";

export default function DashboardPage() {
  return (
    <>
      <PageHeader title="Hub overview" description="Pending approvals, recent actions, hosts and the ledger, from the hub's database." />
      <DashboardFigures />
      <DashboardCharts />
      <HealthPanel />
    </>
  );
}
