"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "./trpc";

/** Hub health, fetched through the tRPC `health.get` procedure. */
export function HealthPanel() {
  const trpc = useTRPC();
  const health = useQuery({ ...trpc.health.get.queryOptions(), refetchInterval: 10_000 });
  if (health.isPending) return <p aria-busy="true">Reading hub health…</p>;
  if (health.isError) {
    return (
      <p role="alert" className="error">
        Hub health unavailable: {health.error.message}
      </p>
    );
  }
  const h = health.data;
  return (
    <section aria-labelledby="health-title" className="card">
      <h2 id="health-title">
        Hub health: <span data-testid="health-status" className={`status status-${h.status}`}>{h.status}</span>
      </h2>
      <dl>
        <dt>Version</dt>
        <dd data-testid="health-version">{h.version}</dd>
        <dt>Database</dt>
        <dd data-testid="health-database">{h.database.kind}</dd>
        <dt>Migrations applied</dt>
        <dd data-testid="health-migrations">
          {h.database.migrations.applied} of {h.database.migrations.known}
        </dd>
        <dt>Durability</dt>
        <dd>
          fsync {h.database.durability.fsync}, full_page_writes {h.database.durability.full_page_writes}, synchronous_commit{" "}
          {h.database.durability.synchronous_commit}
        </dd>
        <dt>Up for</dt>
        <dd>{h.uptime_s} s</dd>
      </dl>
    </section>
  );
}
