"use client";

import { useMutation } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { useTRPC } from "../_components/trpc";
import { ErrorState } from "../_components/ui";
import { errorText } from "../_lib/errors";

/** Only same-site paths are followed after sign-in (no open redirect). */
function safeNext(next: string | undefined): string {
  return next !== undefined && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/";
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
      onSuccess: (result) => window.location.assign(result.mustChangePassword ? "/change-password" : safeNext(next)),
    }),
  );
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
    </form>
  );
}
