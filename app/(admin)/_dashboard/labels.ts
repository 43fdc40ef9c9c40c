/** Words and colours for decisions, shared by the dashboard, the actions list and the detail page. */
export const DECISION_LABEL: Readonly<Record<string, string>> = {
  auto_allow: "auto-allowed",
  observe_scope: "ran under observe",
  grant: "by grant",
  approved: "approved",
  denied: "denied",
  expired: "expired",
  pending: "pending",
  none: "deciding",
};

/** Readable on light and dark backgrounds (≥ 3:1 against both for chart marks). */
export const DECISION_COLOUR: Readonly<Record<string, string>> = {
  auto_allow: "#2e7d4f",
  observe_scope: "#1f7a80",
  grant: "#2f6fbf",
  approved: "#7a4fbf",
  denied: "#c0392b",
  expired: "#b7791f",
  pending: "#8a8f99",
  none: "#5b6270",
};

export const DECISION_TONE: Readonly<Record<string, "ok" | "info" | "err" | "warn" | "neutral">> = {
  auto_allow: "ok",
  observe_scope: "ok",
  grant: "info",
  approved: "info",
  denied: "err",
  expired: "warn",
  pending: "warn",
  none: "neutral",
};

/** "850 ms", "4.2 s", "3.1 min". */
export function formatMs(ms: number | null): string {
  if (ms === null) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

export function formatTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium" });
}
