"use client";

import { useMutation } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { useTRPC } from "../_components/trpc";
import { ErrorState } from "../_components/ui";
import { errorText } from "../_lib/errors";

const MIN_LENGTH = 12;

/** Replace the password (forced after a generated one-time password, or any time from Account). */
export function ChangePasswordForm({ forced, onDone }: { forced: boolean; onDone?: () => void }) {
  const trpc = useTRPC();
  // Typing before React has hydrated would be wiped by hydration: the button stays disabled until then.
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const [mismatch, setMismatch] = useState(false);
  const change = useMutation(
    trpc.auth.changePassword.mutationOptions({
      onSuccess: () => (onDone ? onDone() : window.location.assign("/account?welcome=1")),
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setMismatch(next !== repeat);
    if (next === repeat) change.mutate({ current, next });
  };
  return (
    <form onSubmit={submit}>
      <label htmlFor="current-password">{forced ? "One-time password" : "Current password"}</label>
      <input id="current-password" type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
      <label htmlFor="new-password">New password</label>
      <input id="new-password" type="password" autoComplete="new-password" required aria-describedby="new-password-hint" value={next} onChange={(e) => setNext(e.target.value)} />
      <p className="hint" id="new-password-hint">
        At least {MIN_LENGTH} characters; a passphrase of several words is easiest to remember. Your other sessions end.
      </p>
      <label htmlFor="repeat-password">Repeat the new password</label>
      <input id="repeat-password" type="password" autoComplete="new-password" required value={repeat} onChange={(e) => setRepeat(e.target.value)} />
      <div className="form-row">
        <button className="primary" type="submit" disabled={!hydrated || change.isPending}>
          {change.isPending ? "Saving…" : "Change password"}
        </button>
      </div>
      {mismatch ? <ErrorState>The two new passwords differ.</ErrorState> : null}
      {change.isError ? <ErrorState>{errorText(change.error)}</ErrorState> : null}
    </form>
  );
}
