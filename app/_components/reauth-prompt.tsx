"use client";

import { useMutation } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import { errorText } from "../_lib/errors";
import { useTRPC } from "./trpc";
import { ErrorState } from "./ui";

/** True when a procedure refused because the session has not proved the password recently (roleProcedure `reauth`). */
export function needsReauth(error: unknown): boolean {
  return (error as { data?: { leasehold?: { hint?: string } | null } } | null)?.data?.leasehold?.hint === "reauthenticate";
}

/**
 * Re-authentication before minting tokens or changing accounts: `ask(retry)`
 * shows a password prompt; once `auth.reauthenticate` accepts it, `retry`
 * runs (the refused mutation, again). `prompt` is the element to render.
 */
export function useReauth(): { ask: (retry: () => void) => void; prompt: ReactNode } {
  const trpc = useTRPC();
  const [retry, setRetry] = useState<(() => void) | null>(null);
  const [password, setPassword] = useState("");
  const input = useRef<HTMLInputElement>(null);
  const reauth = useMutation(trpc.auth.reauthenticate.mutationOptions());
  useEffect(() => {
    if (retry !== null) input.current?.focus();
  }, [retry]);
  const close = () => {
    setRetry(null);
    setPassword("");
    reauth.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const then = retry;
    reauth.mutate(
      { password },
      {
        onSuccess: () => {
          close();
          then?.();
        },
      },
    );
  };
  const prompt =
    retry === null ? null : (
      <section className="card reauth" role="dialog" aria-modal="false" aria-labelledby="reauth-title">
        <h2 className="card-title" id="reauth-title">
          Confirm your password
        </h2>
        <form
          onSubmit={submit}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              e.stopPropagation();
              close();
            }
          }}
        >
          <p className="hint">This change needs a fresh proof that it is you.</p>
          <label htmlFor="reauth-password">Your password</label>
          <input id="reauth-password" ref={input} type="password" autoComplete="current-password" required value={password} onChange={(e) => {
              setPassword(e.target.value);
              // A refusal answers the password that was sent; once it changes, the old error no longer applies.
              if (reauth.isError) reauth.reset();
            }} />
          <div className="form-row">
            <button className="primary" type="submit" disabled={reauth.isPending}>
              {reauth.isPending ? "Checking…" : "Confirm"}
            </button>
            <button type="button" onClick={close}>
              Cancel
            </button>
          </div>
          {reauth.isError ? <ErrorState>{errorText(reauth.error)}</ErrorState> : null}
        </form>
      </section>
    );
  return { ask: (next) => setRetry(() => next), prompt };
}
