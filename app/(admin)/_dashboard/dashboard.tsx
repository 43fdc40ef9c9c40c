"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_components/trpc";
import { Badge, Card, Code, EmptyState, ErrorState, Loading, RiskBadge } from "../../_components/ui";
import { errorText } from "../../_lib/errors";
import { ActionsPerHourChart, DurationChart } from "./charts";
import { DECISION_LABEL, DECISION_TONE, formatTime } from "./labels";

/** Labels for the duration buckets; the server's bounds are DURATION_BOUNDS_MS in server/dashboard/charts.ts. */
const BUCKETS = ["<1 s", "1–2 s", "2–5 s", "5–10 s", "10–30 s", "30 s–1 min", "1–5 min", "≥5 min"];

/** `canDecide`: the pending-approvals tile links to the queue only for those who may open it (owners, approvers). */
// eslint-disable-next-line max-lines-per-function -- the dashboard's one query and the tiles it fills; the tiles read the same figures
export function DashboardFigures({ canDecide }: { canDecide: boolean }) {
  const trpc = useTRPC();
  const summary = useQuery({ ...trpc.dashboard.summary.queryOptions(), refetchInterval: 5_000 });
  if (summary.isPending) return <Loading what="the dashboard" />;
  if (summary.isError) return <ErrorState>Dashboard unavailable: {errorText(summary.error)}</ErrorState>;
  const s = summary.data;
  const cp = s.ledger.checkpoint;
  return (
    <>
      <div className="dash-tiles">
        {canDecide ? (
          <Link href="/approvals" className="dash-tile" data-testid="dash-pending">
            <span className="dash-figure">{s.pending_approvals}</span>
            <span>pending approval{s.pending_approvals === 1 ? "" : "s"}</span>
          </Link>
        ) : (
          <div className="dash-tile" data-testid="dash-pending">
            <span className="dash-figure">{s.pending_approvals}</span>
            <span>pending approval{s.pending_approvals === 1 ? "" : "s"}</span>
          </div>
        )}
        <div className="dash-tile" data-testid="dash-hosts">
          <span className="dash-figure">
            {s.hosts.online}/{s.hosts.total}
          </span>
          <span>hosts online</span>
        </div>
        <div className="dash-tile" data-testid="dash-ledger">
          <span className="dash-figure">{s.ledger.entries}</span>
          <span>ledger entries{s.ledger.pending > 0 ? ` (${s.ledger.pending} integrating)` : ""}</span>
        </div>
        <div className="dash-tile" data-testid="dash-checkpoint">
          <span className="dash-figure">{cp === null ? "—" : cp.size}</span>
          <span>{cp === null ? "no checkpoint yet" : `checkpoint size · ${cp.cosignatures.length} cosignature${cp.cosignatures.length === 1 ? "" : "s"}`}</span>
        </div>
      </div>
      <div className="dash-columns">
        <Card title="Recent actions">
          {s.recent_actions.length === 0 ? (
            <EmptyState>No actions yet. They appear here as agents and the console run them.</EmptyState>
          ) : (
            <ul className="dash-recent" data-testid="dash-recent">
              {s.recent_actions.map((a) => (
                <li key={a.id}>
                  <Link href={`/actions/${a.id}`}>
                    <Code>{a.operation}</Code> {a.summary === "" ? null : <span className="dash-summary">{a.summary}</span>}
                  </Link>
                  <span className="dash-meta">
                    {a.host ?? "—"} · <RiskBadge level={a.risk} /> <Badge tone={DECISION_TONE[a.decision] ?? "neutral"}>{DECISION_LABEL[a.decision] ?? a.decision}</Badge> · {formatTime(a.created_at)}
                  </span>
                </li>
              ))}
            </ul>
          )}
          <p className="hint">
            <Link href="/actions">All actions</Link>
          </p>
        </Card>
        <Card title="Hosts and ledger">
          {s.hosts.list.length === 0 ? (
            <EmptyState>No host enrolled.</EmptyState>
          ) : (
            <ul className="dash-hosts">
              {s.hosts.list.map((h) => (
                <li key={h.name}>
                  <Badge tone={h.online ? "ok" : "err"}>{h.online ? "online" : "offline"}</Badge> <strong>{h.name}</strong> · tier {h.tier ?? "?"}
                </li>
              ))}
            </ul>
          )}
          {cp === null ? (
            <EmptyState>No signed checkpoint yet.</EmptyState>
          ) : (
            <dl className="dash-checkpoint">
              <dt>Last checkpoint</dt>
              <dd>
                size {cp.size}, {formatTime(cp.created_at)}
              </dd>
              <dt>Root</dt>
              <dd>
                <Code>{cp.root}</Code>
              </dd>
              <dt>Cosigned by</dt>
              <dd data-testid="dash-cosigners">{cp.cosignatures.length === 0 ? "no witness yet" : cp.cosignatures.map((c) => `${c.witness} (${c.key_id})`).join(", ")}</dd>
            </dl>
          )}
        </Card>
      </div>
    </>
  );
}

export function DashboardCharts() {
  const trpc = useTRPC();
  const charts = useQuery({ ...trpc.dashboard.charts.queryOptions(), refetchInterval: 15_000 });
  if (charts.isPending) return <Loading what="charts" />;
  if (charts.isError) return <ErrorState>Charts unavailable: {errorText(charts.error)}</ErrorState>;
  const c = charts.data;
  const total = c.actions_per_hour.reduce((n, h) => n + h.total, 0);
  return (
    <div className="dash-columns">
      <Card title="Actions per hour by decision (last 24 h, UTC)" className="dash-wide">
        {total === 0 ? <EmptyState>No actions in the last 24 hours.</EmptyState> : <ActionsPerHourChart hours={c.actions_per_hour} />}
      </Card>
      <Card title="Approval response time">
        {c.approval_response.count === 0 ? (
          <EmptyState>No held action was decided by a person in the last 24 hours.</EmptyState>
        ) : (
          <DurationChart testId="chart-approval-response" labels={BUCKETS} series={[{ name: "approved or denied", colour: "#7a4fbf", stats: c.approval_response }]} />
        )}
        <p className="hint">From the action being held to a person's decision.</p>
      </Card>
      <Card title="End-to-end latency">
        {c.latency.without_person.count + c.latency.with_person.count === 0 ? (
          <EmptyState>No action finished in the last 24 hours.</EmptyState>
        ) : (
          <DurationChart
            testId="chart-latency"
            labels={BUCKETS}
            series={[
              { name: "no person", colour: "#2e7d4f", stats: c.latency.without_person },
              { name: "held for a person", colour: "#b7791f", stats: c.latency.with_person },
            ]}
          />
        )}
        <p className="hint">From the action's creation to its result stored by the hub.</p>
      </Card>
    </div>
  );
}
