"use client";
/**
 * The browser side of passkeys (server/passkeys): the approval ceremony the
 * approvals page runs before approving an action at or above the hub's
 * passkey threshold. `usePasskeyApproval().sign(item)` asks the hub for the
 * challenge bound to (approval id, action hash, fresh nonce), lets the
 * authenticator sign it, and returns the assertion to send with the
 * approve call — or undefined when the action is below the threshold.
 */
import { startAuthentication, type AuthenticationResponseJSON, type PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useCallback } from "react";
import { needsPasskey } from "../../server/passkeys/challenge";
import { useTRPC } from "./trpc";

export interface PasskeySignable {
  approval_id: string;
  action_hash: string;
  risk: string;
}

/** An assertion as the tRPC input takes it (extension results as a plain record). */
export type SignedAssertion = Omit<AuthenticationResponseJSON, "clientExtensionResults"> & { clientExtensionResults: Record<string, unknown> };

export function asInput(response: AuthenticationResponseJSON): SignedAssertion {
  return { ...response, clientExtensionResults: { ...response.clientExtensionResults } };
}

export function usePasskeyApproval() {
  const trpc = useTRPC();
  const status = useQuery(trpc.passkeys.list.queryOptions(undefined, { staleTime: 30_000 }));
  const options = useMutation(trpc.passkeys.approvalOptions.mutationOptions());
  const threshold = status.data?.approvalRisk;

  /** Whether approving `item` needs a passkey (the hub decides again; this only saves a refused round trip). */
  const needs = useCallback((item: PasskeySignable) => needsPasskey(item.risk, threshold), [threshold]);

  const sign = useCallback(
    async (item: PasskeySignable): Promise<SignedAssertion | undefined> => {
      if (!needsPasskey(item.risk, threshold)) return undefined;
      const issued = await options.mutateAsync({ approvalId: item.approval_id });
      if (issued.actionHash !== item.action_hash) {
        // The hub's action is not the one on screen: do not sign something else.
        throw new Error("the action awaiting approval is not the one shown (action_hash differs); reload the queue");
      }
      // The options went through JSON (tRPC); the browser library's type is the same shape.
      return asInput(await startAuthentication({ optionsJSON: issued.options as unknown as PublicKeyCredentialRequestOptionsJSON }));
    },
    [options, threshold],
  );
  return { sign, needs, threshold, signing: options.isPending };
}
