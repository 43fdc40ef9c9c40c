// Public surface of server/dashboard.
export { dashboardSummary } from "./summary";
export type { DashboardSummary } from "./summary";
export { DECISIONS, DURATION_BOUNDS_MS, HOUR_MS, WINDOW_HOURS, bucketLabels, dashboardCharts } from "./charts";
export type { DashboardCharts, DurationStats, HourBucket } from "./charts";
