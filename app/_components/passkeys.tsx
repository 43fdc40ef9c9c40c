"use client";
/**
 * The browser side of passkeys (server/passkeys): the approval ceremony the
 * approvals page runs before approving an action at or above the hub's
 * passkey threshold. `usePasskeyApproval().sign(item)` asks the hub for the
 * challenge bound to (approval id, action hash, fresh nonce), lets the
 * authenticator sign it, and returns the assertion to send with the
 * approve call — or undefined when the action is below the threshold.
 * `usePasskeyGrant().sign(scope)` does the same for a grant's whole scope
 * (server/policy/grants): the hub fixes the exact expiry and derives the
 * challenge from the scope's digest; the grant is then created with that
 * expiry and the assertion. `confirmWithExistingPasskey` answers the
 * consent challenge a second passkey's registration needs.
 */
import { startAuthentication, type AuthenticationResponseJSON, type PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useCallback } from "react";
import { needsPasskey } from "~/server/passkeys/challenge";
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

/** A grant's scope as the grants form sends it (expiry as a duration). */
export interface GrantScopeInput {
  tool: string;
  host: string;
  maxRisk: string;
  uses: number;
  expires: string;
  pattern: string | null;
  env: Array<{ name: string; value: string }>;
  stdinSha256: string | null;
  cwd: string | null;
}

/** The grant "approve and allow similar" would create, as its form sends it (the hub adds the action's own tool, host, env and stdin). */
export interface AllowSimilarGrantInput {
  approvalId: string;
  actionHash: string;
  grant: { pattern: string | null; uses: number; expiresAt: string; maxRisk: string; cwd: string };
}

/**
 * One grant ceremony for both ways to make a grant: the hub returns the
 * exact expiry and WebAuthn options whose challenge is derived from the
 * scope's digest (server/policy/grants `grantPasskeyOptions`), the
 * authenticator signs, and the creation carries that expiry and assertion.
 * The Grants page sends the whole scope (`sign`); "allow similar" names the
 * held action and its edits (`signAllowSimilar`), because the action's raw
 * environment stays on the hub.
 */
export function usePasskeyGrant() {
  const trpc = useTRPC();
  const options = useMutation(trpc.grants.passkeyOptions.mutationOptions());
  const similarOptions = useMutation(trpc.approvals.grantPasskeyOptions.mutationOptions());
  const ceremony = useCallback(async (issued: { options: unknown; expiresAt: string }): Promise<{ expiresAt: string; assertion: SignedAssertion }> => {
    // The options went through JSON (tRPC); the browser library's type is the same shape.
    const assertion = asInput(await startAuthentication({ optionsJSON: issued.options as PublicKeyCredentialRequestOptionsJSON }));
    return { expiresAt: issued.expiresAt, assertion };
  }, []);
  /** Signs `scope` with a passkey: the exact expiry the hub decided and the assertion, for grants.create. */
  const sign = useCallback(async (scope: GrantScopeInput) => ceremony(await options.mutateAsync(scope)), [options, ceremony]);
  /** Signs the grant "allow similar" would create: the exact expiry and the assertion, for approvals.approveAndGrant. */
  const signAllowSimilar = useCallback(async (input: AllowSimilarGrantInput) => ceremony(await similarOptions.mutateAsync(input)), [similarOptions, ceremony]);
  return { sign, signAllowSimilar, signing: options.isPending || similarOptions.isPending };
}

/** The existing passkey's consent to registering another (registrationOptions().confirmWith), or undefined for the first passkey. */
export async function confirmWithExistingPasskey(confirmWith: unknown): Promise<SignedAssertion | undefined> {
  if (confirmWith === null || confirmWith === undefined) return undefined;
  return asInput(await startAuthentication({ optionsJSON: confirmWith as PublicKeyCredentialRequestOptionsJSON }));
}
