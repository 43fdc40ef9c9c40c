import { HealthPanel } from "./_components/health-panel";

export default function HomePage() {
  return (
    <>
      <h1>Hub overview</h1>
      <HealthPanel />
    </>
  );
}
