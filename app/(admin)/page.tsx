import { HealthPanel } from "../_components/health-panel";
import { PageHeader } from "../_components/ui";

export default function DashboardPage() {
  return (
    <>
      <PageHeader title="Hub overview" />
      <HealthPanel />
    </>
  );
}
