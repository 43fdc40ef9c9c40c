"use client";
/**
 * Your passkeys (server/passkeys): register one (named), list, remove. A
 * hub whose public URL is a bare IP address cannot use passkeys; the card
 * then says why instead of failing inside the browser. Adding and removing
 * need a recent password confirmation (the reauth prompt); adding a second
 * passkey is first confirmed with an existing one.
 */
import { startRegistration, type PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/browser";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { confirmWithExistingPasskey } from "../../_components/passkeys";
import { needsReauth, useReauth } from "../../_components/reauth-prompt";
import { useTRPC } from "../../_components/trpc";
import { EmptyState, ErrorState, Loading } from "../../_components/ui";
import { errorText } from "../../_lib/errors";

function when(iso: string | null): string {
  return iso === null ? "never" : new Date(iso).toLocaleString();
}

// eslint-disable-next-line max-lines-per-function -- register, rename and remove share the list's state and the ceremony's progress
export function PasskeysCard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.passkeys.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.passkeys.list.queryKey() });
  const options = useMutation(trpc.passkeys.registrationOptions.mutationOptions());
  const register = useMutation(trpc.passkeys.register.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(trpc.passkeys.remove.mutationOptions({ onSuccess: refresh }));
  const { ask, prompt } = useReauth();
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const busy = options.isPending || register.isPending;

  const add = async () => {
    setError(null);
    setMessage(null);
    try {
      const issued = await options.mutateAsync();
      // A second passkey: an existing one consents first, in this same ceremony.
      if (issued.confirmWith !== null) setMessage("Confirm with one of your existing passkeys, then create the new one.");
      const confirmation = await confirmWithExistingPasskey(issued.confirmWith);
      // The options went through JSON (tRPC); the browser library's type is the same shape.
      const response = await startRegistration({ optionsJSON: issued.options as unknown as PublicKeyCredentialCreationOptionsJSON });
      const saved = await register.mutateAsync({ name, response: { ...response, clientExtensionResults: { ...response.clientExtensionResults } }, ...(confirmation === undefined ? {} : { confirmation }) });
      setMessage(`Passkey "${saved.name}" registered.`);
      setName("");
    } catch (e) {
      if (needsReauth(e)) {
        setMessage(null);
        ask(() => void add());
        return;
      }
      setMessage(null);
      setError(e instanceof Error && e.name === "NotAllowedError" ? "The browser or authenticator cancelled the registration." : errorText(e));
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void add();
  };
  const removeOne = (id: string) =>
    remove.mutate(
      { id },
      {
        onError: (e) => {
          if (needsReauth(e)) ask(() => removeOne(id));
        },
      },
    );

  if (list.isPending) return <Loading what="passkeys" />;
  if (list.isError) return <ErrorState>{errorText(list.error)}</ErrorState>;
  const { available, reason, passkeys, approvalRisk } = list.data;
  return (
    <div className="passkeys">
      <p className="muted">
        {approvalRisk === "off"
          ? "Passkeys sign you in without a password."
          : `Approving ${approvalRisk === "critical" ? "critical" : "high and critical"} actions needs a passkey signature over the exact action; passkeys also sign you in without a password.`}
      </p>
      {!available ? (
        <ErrorState>{reason}</ErrorState>
      ) : (
        <form onSubmit={submit} className="passkey-register">
          <label htmlFor="passkey-name">Name for a new passkey</label>
          <input id="passkey-name" required maxLength={64} placeholder="e.g. work laptop" value={name} onChange={(e) => setName(e.target.value)} />
          <div className="form-row">
            <button type="submit" className="primary" disabled={busy || name.trim().length === 0}>
              {busy ? "Waiting for the authenticator…" : "Register a passkey"}
            </button>
          </div>
        </form>
      )}
      {prompt}
      {message === null ? null : (
        <p role="status" className="hint">
          {message}
        </p>
      )}
      {error === null ? null : <ErrorState>{error}</ErrorState>}
      {passkeys.length === 0 ? (
        <EmptyState>No passkeys yet.</EmptyState>
      ) : (
        <div className="table-wrap">
          <table aria-label="Your passkeys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Added</th>
                <th scope="col">Last used</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {passkeys.map((p) => (
                <tr key={p.id} data-testid="passkey-row">
                  <td>{p.name}</td>
                  <td>{when(p.createdAt)}</td>
                  <td>{when(p.lastUsedAt)}</td>
                  <td>
                    <button
                      type="button"
                      className="danger"
                      disabled={remove.isPending}
                      aria-label={`Remove passkey ${p.name}`}
                      onClick={() => {
                        if (window.confirm(`Remove the passkey "${p.name}"? Approvals it signed stay verifiable.`)) removeOne(p.id);
                      }}
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {passkeys.length === 0 ? null : (
        <p className="hint" data-testid="passkeys-after-password">
          Your passkeys stay valid when you change your password. If one is listed here that you did not add, remove it. An owner&apos;s password reset removes them all.
        </p>
      )}
      {remove.isError && !needsReauth(remove.error) ? <ErrorState>{errorText(remove.error)}</ErrorState> : null}
    </div>
  );
}
