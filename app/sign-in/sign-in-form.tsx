"use client";

import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { useMutation } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { useTRPC } from "../_components/trpc";
import { ErrorState } from "../_components/ui";
import { errorText } from "../_lib/errors";
import { storeSessionBinding } from "../_lib/session-binding";
import { safeNext } from "~/server/http/safe-next";

/** After sign-in only a path on this page's own origin is followed (server/http/safe-next.ts: no open redirect). */
function nextPath(next: string | undefined): string {
  return safeNext(next, window.location.origin);
}

export function SignInForm({ next }: { next?: string }) {
  const trpc = useTRPC();
  // Typing before React has hydrated would be wiped by hydration: the button stays disabled until then.
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const signIn = useMutation(
    trpc.auth.signIn.mutationOptions({
      onSuccess: (result) => {
        storeSessionBinding(result.binding);
        window.location.assign(result.mustChangePassword ? "/change-password" : nextPath(next));
      },
    }),
  );
  const [passkeyError, setPasskeyError] = useState<string | null>(null);
  const passkeyOptions = useMutation(trpc.passkeys.signInOptions.mutationOptions());
  const passkeySignIn = useMutation(trpc.passkeys.signIn.mutationOptions());
  const passkeyBusy = passkeyOptions.isPending || passkeySignIn.isPending;
  /** A discoverable passkey: no user name needed; the authenticator offers the accounts it holds. */
  const withPasskey = async () => {
    setPasskeyError(null);
    try {
      const options = await passkeyOptions.mutateAsync();
      const response = await startAuthentication({ optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON });
      const result = await passkeySignIn.mutateAsync({ response: { ...response, clientExtensionResults: { ...response.clientExtensionResults } } });
      storeSessionBinding(result.binding);
      window.location.assign(result.mustChangePassword ? "/change-password" : nextPath(next));
    } catch (e) {
      setPasskeyError(e instanceof Error && e.name === "NotAllowedError" ? "The browser or authenticator cancelled the passkey sign-in." : errorText(e));
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate({ username, password });
  };
  return (
    <form onSubmit={submit} aria-describedby={signIn.isError ? "sign-in-error" : undefined}>
      <label htmlFor="username">User name</label>
      <input id="username" name="username" autoComplete="username" autoCapitalize="none" spellCheck={false} required value={username} onChange={(e) => setUsername(e.target.value)} />
      <label htmlFor="password">Password</label>
      <input id="password" name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      <div className="form-row">
        <button className="primary" type="submit" disabled={!hydrated || signIn.isPending}>
          {signIn.isPending ? "Signing in…" : "Sign in"}
        </button>
      </div>
      {signIn.isError ? (
        <div id="sign-in-error">
          <ErrorState>{errorText(signIn.error)}</ErrorState>
        </div>
      ) : null}
      <div className="form-row passkey-sign-in">
        <button type="button" disabled={passkeyBusy} onClick={() => void withPasskey()}>
          {passkeyBusy ? "Waiting for the passkey…" : "Sign in with a passkey"}
        </button>
      </div>
      {passkeyError === null ? null : <ErrorState>{passkeyError}</ErrorState>}
    </form>
  );
}
