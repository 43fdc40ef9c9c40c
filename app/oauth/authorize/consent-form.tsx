"use client";

import { useMutation } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { useTRPC } from "../../_components/trpc";
import { Card, ErrorState } from "../../_components/ui";
import { errorText } from "../../_lib/errors";

function lifetimeLabel(seconds: number): string {
  if (seconds < 86_400) return `${seconds / 3600} hour${seconds === 3600 ? "" : "s"}`;
  const days = seconds / 86_400;
  return `${days} day${days === 1 ? "" : "s"}`;
}

/**
 * The decision. Narrowing only: tools and hosts default to all, read-only is
 * forced on when the client did not ask for mcp:write. The handle is this
 * page's CSRF token; the server checks it belongs to this admin. Approve
 * sends the owner's password with the decision (its proof, checked in the
 * same call); Deny sends none, since denying grants nothing.
 */
// eslint-disable-next-line max-lines-per-function -- the consent page is one form: the client, the scopes asked and the decision
export function ConsentForm(props: {
  handle: string;
  scopes: { scope: string; meaning: string }[];
  canWrite: boolean;
  /** The client asked for mcp:observe-any; the owner must tick it to grant it. */
  askedObserveAny: boolean;
  tools: string[];
  lifetimes: number[];
  defaultLifetime: number;
  expiresAt: string;
}) {
  const trpc = useTRPC();
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  const [readOnly, setReadOnly] = useState(!props.canWrite);
  const [observeAny, setObserveAny] = useState(false);
  const [allTools, setAllTools] = useState(true);
  const [tools, setTools] = useState<string[]>([]);
  const [hosts, setHosts] = useState("");
  const [lifetime, setLifetime] = useState(props.defaultLifetime);
  const [password, setPassword] = useState("");
  const decide = useMutation(trpc.oauth.decide.mutationOptions({ onSuccess: (result) => window.location.assign(result.location) }));

  const send = (approve: boolean) => {
    const hostList = hosts
      .split(",")
      .map((h) => h.trim())
      .filter((h) => h !== "");
    const input = { handle: props.handle, approve, readOnly, observeAny: observeAny && !readOnly, tools: allTools ? null : tools, hosts: hostList.length === 0 ? null : hostList, lifetimeS: lifetime, ...(approve ? { password } : {}) };
    decide.mutate(input, { onSettled: () => setPassword("") });
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send(true);
  };

  return (
    <Card title="What it asks for">
      <form onSubmit={submit}>
        <ul className="scopes">
          {props.scopes.map((s) => (
            <li key={s.scope}>
              <code>{s.scope}</code> — {s.meaning}
            </li>
          ))}
        </ul>
        <div className="form-row">
          <input id="consent-read-only" type="checkbox" checked={readOnly} disabled={!props.canWrite} onChange={(e) => setReadOnly(e.target.checked)} />
          <label htmlFor="consent-read-only">Read-only</label>
          <span className="hint">{props.canWrite ? "Tick to grant read-only tools only." : "The client asked for read-only tools only."}</span>
        </div>
        {props.askedObserveAny ? (
          <div className="form-row">
            <input id="consent-observe-any" type="checkbox" checked={observeAny && !readOnly} disabled={readOnly} onChange={(e) => setObserveAny(e.target.checked)} />
            <label htmlFor="consent-observe-any">Sandbox-first (mcp:observe-any)</label>
            <span className="hint">
              Tick to let every command run at once without you, read-only and offline in the sandbox, whatever its risk; commands that need to write or reach the network still come
              to you. Unticked, every command is judged and risky ones are held.
            </span>
          </div>
        ) : null}
        <fieldset>
          <legend>Tools</legend>
          <div className="form-row">
            <input id="consent-all-tools" type="checkbox" checked={allTools} onChange={(e) => setAllTools(e.target.checked)} />
            <label htmlFor="consent-all-tools">All tools{readOnly ? " (read-only ones)" : ""}</label>
          </div>
          {allTools ? null : (
            <div className="tool-grid">
              {props.tools.map((tool) => (
                <label key={tool} className="check">
                  <input type="checkbox" checked={tools.includes(tool)} onChange={(e) => setTools(e.target.checked ? [...tools, tool] : tools.filter((t) => t !== tool))} /> <code>{tool}</code>
                </label>
              ))}
            </div>
          )}
        </fieldset>
        <label htmlFor="consent-hosts">Hosts (comma-separated; empty = every host)</label>
        <input id="consent-hosts" value={hosts} onChange={(e) => setHosts(e.target.value)} placeholder="local, web-1" />
        <label htmlFor="consent-lifetime">Access expires</label>
        <select id="consent-lifetime" value={lifetime} onChange={(e) => setLifetime(Number(e.target.value))}>
          {props.lifetimes.map((s) => (
            <option key={s} value={s}>
              after {lifetimeLabel(s)}
            </option>
          ))}
        </select>
        <p className="hint">Access tokens last 15 minutes and are refreshed until then; revoke the grant on the Tokens page at any time. This request expires at {new Date(props.expiresAt).toLocaleTimeString()}.</p>
        <label htmlFor="consent-password">Your password</label>
        <input id="consent-password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        <p className="hint">Approve needs your sign-in password, every time: a session alone cannot let a client in. Deny needs none.</p>
        <div className="form-row">
          <button className="primary" type="submit" disabled={!hydrated || decide.isPending}>
            Approve
          </button>
          <button type="button" disabled={!hydrated || decide.isPending} onClick={() => send(false)}>
            Deny
          </button>
        </div>
        {decide.isError ? <ErrorState>{errorText(decide.error)}</ErrorState> : null}
      </form>
    </Card>
  );
}
