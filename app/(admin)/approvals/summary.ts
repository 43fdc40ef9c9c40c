/**
 * How one held action reads in the dense queue: its sort key, and the short
 * form of its command that row headings and accessible names carry. Pure
 * functions over the hub's view (server/approvals/view.ts), no React.
 *
 * The hub already shows every invisible or direction-changing character as
 * a visible token; the short form passes the text through `escapeInvisible`
 * once more, one line (a line break becomes `\n`), so nothing the browser
 * renders from a command can hide or reorder what it says.
 */
import { escapeInvisible } from "~/server/text/terminal";
import type { HeldAction } from "./types";

/** Most dangerous first. */
export const RISK_ORDER: Readonly<Record<string, number>> = { critical: 0, high: 1, medium: 2, low: 3, read_only: 4 };
/** Approved by keyboard (`a`) only after a second, explicit step. */
export const CONFIRM_RISKS: ReadonlySet<string> = new Set(["high", "critical"]);
/** How much of the command a row shows (and a heading or button name carries). */
export const PREVIEW_CHARS = 80;

/** Risk (most dangerous first), then deadline (soonest first), then id: the queue's order. */
export function queueOrder(a: Pick<HeldAction, "risk" | "deadline" | "approval_id">, b: Pick<HeldAction, "risk" | "deadline" | "approval_id">): number {
  return (RISK_ORDER[a.risk] ?? 5) - (RISK_ORDER[b.risk] ?? 5) || Date.parse(a.deadline) - Date.parse(b.deadline) || (a.approval_id < b.approval_id ? -1 : a.approval_id > b.approval_id ? 1 : 0);
}

export function oneLine(text: string): string {
  return escapeInvisible(text, { keep: "none" }).text;
}

export type PreviewPiece = { text: string; risky: boolean };

/** The command's first PREVIEW_CHARS characters, one line, its risky spans still marked; `cut` when more follows. */
export function commandPreview(item: Pick<HeldAction, "subject">, limit = PREVIEW_CHARS): { pieces: PreviewPiece[]; cut: boolean } {
  const pieces: PreviewPiece[] = [];
  let left = limit;
  let cut = false;
  for (const segment of item.subject?.segments ?? []) {
    const chars = [...oneLine(segment.text)];
    if (left <= 0) {
      cut = true;
      break;
    }
    if (chars.length > left) cut = true;
    pieces.push({ text: chars.slice(0, left).join(""), risky: segment.risky });
    left -= Math.min(left, chars.length);
  }
  return { pieces, cut };
}

/** "`rm -rf ./build` on local": what headings, buttons and checkboxes are named by. */
export function commandLabel(item: Pick<HeldAction, "subject" | "operation" | "host">): string {
  const where = `on ${item.host ?? "?"}`;
  if (item.subject === null) return `${item.operation} ${where}`;
  const { pieces, cut } = commandPreview(item);
  return `\`${pieces.map((p) => p.text).join("")}${cut ? "…" : ""}\` ${where}`;
}

export function requesterText(item: Pick<HeldAction, "requester">): string {
  const r = item.requester;
  const name = r.name ?? r.id ?? "?";
  return r.kind === "token" ? `token ${name}` : r.kind === "admin" ? `admin ${name}` : "unknown requester";
}

/**
 * "agent waiting (session open, last seen 3 s ago)" or "orphaned: no client
 * waiting since 12:01:07 (session closed)": the hub's judgement (which clock
 * says waiting or orphaned), the seconds counted on against the hub's clock.
 */
export function livenessWords(liveness: NonNullable<HeldAction["liveness"]>, nowMs: number): string {
  const session = liveness.session === "none" ? "no MCP session" : `session ${liveness.session}`;
  if (liveness.state === "waiting") return `agent waiting (${session}, last seen ${Math.max(0, Math.floor((nowMs - Date.parse(liveness.since)) / 1000))} s ago)`;
  return `orphaned: no client waiting since ${new Date(liveness.since).toLocaleTimeString()} (${session})`;
}

/** Live first (an agent waits on a person), orphaned after, each in the queue's order: orphaned rows are marked and counted, not mixed in. */
export function livenessOrder(a: Pick<HeldAction, "liveness">, b: Pick<HeldAction, "liveness">): number {
  return Number(a.liveness?.state === "orphaned") - Number(b.liveness?.state === "orphaned");
}

/** "4m 05s left", or "deadline passed". */
export function timeLeft(deadline: string, nowMs: number): string {
  const ms = Date.parse(deadline) - nowMs;
  if (ms <= 0) return "deadline passed";
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s left`;
}
