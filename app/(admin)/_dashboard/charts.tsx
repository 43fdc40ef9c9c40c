"use client";

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { DECISION_COLOUR, DECISION_LABEL, formatMs } from "./labels";

export interface HourRow {
  hour: string;
  counts: Record<string, number>;
  total: number;
}

export interface Stats {
  count: number;
  p50_ms: number | null;
  p95_ms: number | null;
  max_ms: number | null;
  buckets: number[];
}

const AXIS = { fontSize: 12, fill: "currentColor" };

/** Stacked bars: actions per hour, one colour per decision; decisions with no actions in the window are left out of the legend. */
export function ActionsPerHourChart({ hours }: { hours: HourRow[] }) {
  const decisions = Object.keys(DECISION_LABEL).filter((d) => hours.some((h) => (h.counts[d] ?? 0) > 0));
  const data = hours.map((h) => ({ label: `${new Date(h.hour).getUTCHours().toString().padStart(2, "0")}:00`, ...h.counts }));
  return (
    <div className="dash-chart" data-testid="chart-actions-per-hour" role="img" aria-label={`Actions per hour by decision, last 24 hours: ${hours.reduce((n, h) => n + h.total, 0)} actions`}>
      <ResponsiveContainer width="100%" height={240}>
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#8a8f9955" vertical={false} />
          <XAxis dataKey="label" tick={AXIS} interval="preserveStartEnd" minTickGap={12} />
          <YAxis allowDecimals={false} tick={AXIS} />
          <Tooltip />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {decisions.map((d) => (
            <Bar key={d} dataKey={d} name={DECISION_LABEL[d]} stackId="decision" fill={DECISION_COLOUR[d]} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

/** A duration histogram (one or two series over the same buckets) with its count and percentiles written out. */
export function DurationChart({ testId, labels, series }: { testId: string; labels: string[]; series: Array<{ name: string; colour: string; stats: Stats }> }) {
  const data = labels.map((label, i) => Object.fromEntries([["label", label], ...series.map((s) => [s.name, s.stats.buckets[i] ?? 0])]));
  return (
    <div className="dash-chart" data-testid={testId}>
      <ul className="dash-stats">
        {series.map((s) => (
          <li key={s.name}>
            <strong>{s.name}</strong>: {s.stats.count} · p50 {formatMs(s.stats.p50_ms)} · p95 {formatMs(s.stats.p95_ms)} · max {formatMs(s.stats.max_ms)}
          </li>
        ))}
      </ul>
      <div role="img" aria-label={series.map((s) => `${s.name}: ${s.stats.count} measured, median ${formatMs(s.stats.p50_ms)}`).join("; ")}>
        <ResponsiveContainer width="100%" height={200}>
          <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="#8a8f9955" vertical={false} />
            <XAxis dataKey="label" tick={AXIS} interval={0} angle={-30} textAnchor="end" height={48} />
            <YAxis allowDecimals={false} tick={AXIS} />
            <Tooltip />
            {series.length > 1 ? <Legend wrapperStyle={{ fontSize: 12 }} /> : null}
            {series.map((s) => (
              <Bar key={s.name} dataKey={s.name} fill={s.colour} isAnimationActive={false} />
            ))}
          </BarChart>
        </ResponsiveContainer>
      </div>
    </div>
  );
}
