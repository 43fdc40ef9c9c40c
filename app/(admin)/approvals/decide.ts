"use client";
/**
 * Every decision the approvals page sends goes through this module — ONE
 * place that turns a person's click into a call bound to the action hash
 * they were shown. `approveOne` is the single approve path (the card's
 * Approve button, and "approve and allow similar" before its grant); batch
 * approve is bound per item the same way. The passkey step for high and
 * critical actions (issue 13) belongs in `approveOne` / `batchDecide`:
 * sign a challenge derived from (approval id, action hash) and pass the
 * assertion along with the call.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { useTRPC } from "../../_components/trpc";
import type { HeldAction } from "./types";

export interface GrantEditsInput {
  pattern: string | null;
  uses: number;
  expiresAt: string;
  maxRisk: string;
  cwd: string;
}

/** The action a decision is about: its ids, the hash shown, its risk. */
export type Decidable = Pick<HeldAction, "approval_id" | "action_hash" | "risk">;

export function useDecisions() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const refresh = useCallback(() => queryClient.invalidateQueries({ queryKey: trpc.approvals.list.pathKey() }), [queryClient, trpc]);
  const approve = useMutation(trpc.approvals.approve.mutationOptions({ onSettled: refresh }));
  const deny = useMutation(trpc.approvals.deny.mutationOptions({ onSettled: refresh }));
  const batch = useMutation(trpc.approvals.batch.mutationOptions({ onSettled: refresh }));
  const approveGrant = useMutation(trpc.approvals.approveAndGrant.mutationOptions({ onSettled: refresh }));

  /** Approves one held action, bound to the hash shown. */
  const approveOne = useCallback(
    (item: Decidable, reason?: string) => approve.mutateAsync({ approvalId: item.approval_id, actionHash: item.action_hash, ...(reason ? { reason } : {}) }),
    [approve],
  );
  /** Denies one held action with the person's reason, bound to the hash shown. */
  const denyOne = useCallback((item: Decidable, reason: string) => deny.mutateAsync({ approvalId: item.approval_id, actionHash: item.action_hash, reason }), [deny]);
  /** Approves or denies several; each item carries its own hash, and each succeeds or fails on its own. */
  const batchDecide = useCallback(
    (decision: "approve" | "deny", items: readonly Decidable[], reason?: string) =>
      batch.mutateAsync({ decision, items: items.map((i) => ({ approvalId: i.approval_id, actionHash: i.action_hash })), ...(reason ? { reason } : {}) }),
    [batch],
  );
  /** Approves, then creates the grant the person confirmed (the hub keeps the action's exact env and stdin). */
  const approveAndAllowSimilar = useCallback(
    (item: Decidable, grant: GrantEditsInput) => approveGrant.mutateAsync({ approvalId: item.approval_id, actionHash: item.action_hash, grant }),
    [approveGrant],
  );
  const pending = approve.isPending || deny.isPending || batch.isPending || approveGrant.isPending;
  return { approveOne, denyOne, batchDecide, approveAndAllowSimilar, pending };
}
