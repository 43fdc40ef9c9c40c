"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "../../_components/trpc";
import { RiskBadge } from "../../_components/ui";
import type { Decided } from "./approval-card";
import { commandLabel } from "./summary";
import type { HeldAction } from "./types";

/** Action states after which nothing more happens to it. */
const FINAL = new Set(["completed", "failed", "denied", "expired", "cancelled", "refused"]);
const OUTCOME_POLL_MS = 1000;

/** "completed, exit 0", "failed, exit 2", "denied", "running": the action's state in words. */
export function outcomeText(action: { state: string; exit: { code: number | null; signal: string | null; timed_out: boolean } | null }): string {
  const exit = action.exit;
  if (exit === null) return FINAL.has(action.state) ? action.state : action.state === "approved" ? "approved, not yet run…" : `${action.state}…`;
  const how = exit.timed_out ? "timed out" : exit.signal !== null ? `signal ${exit.signal}` : `exit ${exit.code ?? "?"}`;
  return `${action.state}, ${how}`;
}

/**
 * The row a decided item turns into, in place: what was decided and, once
 * the host reports, how the action ended ("completed, exit 0"), with a link
 * to the action's page.
 */
export function OutcomeRow({ item, decided }: { item: HeldAction; decided: Decided }) {
  const trpc = useTRPC();
  const action = useQuery({
    ...trpc.actions.get.queryOptions({ id: item.action_id }),
    refetchInterval: (query) => (query.state.data !== undefined && FINAL.has(query.state.data.state) ? false : OUTCOME_POLL_MS),
  });
  const label = commandLabel(item);
  const state = action.data === undefined ? (decided.decision === "denied" ? "denied" : "approved, waiting for the host…") : outcomeText(action.data);
  return (
    <article className={`approval approval-outcome risk-border-${item.risk}`} id={item.approval_id} data-action-id={item.action_id} data-outcome={action.data?.state ?? decided.decision} aria-label={`${decided.decision} ${label}`}>
      <div className="approval-row">
        <RiskBadge level={item.risk} />
        <span className="approval-preview">
          <span className="approval-decision">{decided.decision === "approved" ? "Approved" : "Denied"}</span> {label}
        </span>
        <span className="approval-result" role="status" data-testid="approval-outcome">
          {state} (
          <Link href={`/actions/${item.action_id}`} aria-label={`view the action ${label}`}>
            view
          </Link>
          )
        </span>
      </div>
      {decided.text === `${decided.decision === "approved" ? "Approved" : "Denied"} ${label}.` ? null : <p className="hint">{decided.text}</p>}
    </article>
  );
}
