"use client";
/**
 * Every decision the approvals page sends goes through this module — ONE
 * place that turns a person's click into a call bound to the action hash
 * they were shown. `approveOne` is the single approve path (the card's
 * Approve button, and "approve and allow similar" before its grant); batch
 * approve is bound per item the same way. The passkey step: for
 * an action at or above the hub's passkey threshold (high by default) every
 * approve path first signs a challenge derived from (approval id, action
 * hash, fresh nonce) with the person's passkey (app/_components/passkeys.tsx)
 * and sends the assertion with the call; the hub verifies it and refuses
 * such approvals without one.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { needsPasskey } from "~/server/passkeys/challenge";
import { usePasskeyApproval, usePasskeyGrant } from "../../_components/passkeys";
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
  const passkey = usePasskeyApproval();
  const grantPasskey = usePasskeyGrant();

  /** Approves one held action, bound to the hash shown. */
  const approveOne = useCallback(
    async (item: Decidable, reason?: string) => {
      const assertion = await passkey.sign(item);
      return approve.mutateAsync({ approvalId: item.approval_id, actionHash: item.action_hash, ...(reason ? { reason } : {}), ...(assertion === undefined ? {} : { assertion }) });
    },
    [approve, passkey],
  );
  /** Denies one held action with the person's reason, bound to the hash shown. */
  const denyOne = useCallback((item: Decidable, reason: string) => deny.mutateAsync({ approvalId: item.approval_id, actionHash: item.action_hash, reason }), [deny]);
  /** Approves or denies several; each item carries its own hash, and each succeeds or fails on its own. */
  const batchDecide = useCallback(
    async (decision: "approve" | "deny", items: readonly Decidable[], reason?: string) => {
      // One passkey ceremony per item that needs it: each signature covers its own action hash.
      const signed = [];
      for (const i of items) {
        const assertion = decision === "approve" ? await passkey.sign(i) : undefined;
        signed.push({ approvalId: i.approval_id, actionHash: i.action_hash, ...(assertion === undefined ? {} : { assertion }) });
      }
      return batch.mutateAsync({ decision, items: signed, ...(reason ? { reason } : {}) });
    },
    [batch, passkey],
  );
  /**
   * Approves and creates the grant the person confirmed (the hub keeps the action's exact env and stdin), in one
   * commit. The approval is signed first (a high action), then — at or above the threshold — the grant's own scope,
   * with the Grants page's ceremony; the grant is created with the expiry the hub fixed for that signature.
   */
  const approveAndAllowSimilar = useCallback(
    async (item: Decidable, grant: GrantEditsInput) => {
      const assertion = await passkey.sign(item);
      const signed = needsPasskey(grant.maxRisk, passkey.threshold) ? await grantPasskey.signAllowSimilar({ approvalId: item.approval_id, actionHash: item.action_hash, grant }) : undefined;
      return approveGrant.mutateAsync({
        approvalId: item.approval_id,
        actionHash: item.action_hash,
        grant: signed === undefined ? grant : { ...grant, expiresAt: signed.expiresAt },
        ...(assertion === undefined ? {} : { assertion }),
        ...(signed === undefined ? {} : { grantAssertion: signed.assertion }),
      });
    },
    [approveGrant, passkey, grantPasskey],
  );
  /** Whether a grant with this ceiling is signed with a passkey (the hub decides again). */
  const grantNeedsPasskey = useCallback((maxRisk: string) => needsPasskey(maxRisk, passkey.threshold), [passkey.threshold]);
  const pending = approve.isPending || deny.isPending || batch.isPending || approveGrant.isPending || passkey.signing || grantPasskey.signing;
  return { approveOne, denyOne, batchDecide, approveAndAllowSimilar, pending, needsPasskey: passkey.needs, grantNeedsPasskey };
}
