"use client";
/**
 * Grants (server/policy/grants): create, list, revoke. Creating needs a
 * recent password confirmation (the reauth prompt); a ceiling at or above
 * the hub's passkey threshold (`passkeyLevels`) is signed by your passkey
 * over the whole scope first — the hub fixes the exact expiry, the passkey
 * signs, and the grant is created with that expiry and the signature.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ConfirmAction } from "../../_components/confirm-action";
import { usePasskeyGrant, type GrantScopeInput } from "../../_components/passkeys";
import { needsReauth, useReauth } from "../../_components/reauth-prompt";
import { useTRPC } from "../../_components/trpc";
import { Card, Code, EmptyState, ErrorState, Loading, RiskBadge } from "../../_components/ui";
import { errorText } from "../../_lib/errors";
import { describeInvisibleCharacters, hasInvisibleCharacters, neutraliseOneLine } from "~/server/text/terminal";

/**
 * A grant's text as a person must read it: patterns, env and cwd may come
 * from an agent's command (allow similar) or a paste, and a right-to-left
 * override or a zero-width space would make the grant read as something it
 * does not match. Escapes (`\u202e`) are regex syntax, so the pattern still
 * reads as what it matches.
 */
function shown(text: string): string {
  return neutraliseOneLine(text).text;
}

interface EnvEntry {
  name: string;
  value: string;
}

export function GrantsView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const grants = useQuery(trpc.grants.list.queryOptions());
  const refresh = () => void queryClient.invalidateQueries({ queryKey: trpc.grants.list.queryKey() });
  const [confirming, setConfirming] = useState<string | null>(null);
  const revoke = useMutation(trpc.grants.revoke.mutationOptions({ onSuccess: () => (setConfirming(null), refresh()) }));
  return (
    <>
      <CreateGrant tools={grants.data?.tools ?? []} hosts={grants.data?.hosts ?? []} levels={grants.data?.levels ?? []} passkeyLevels={grants.data?.passkeyLevels ?? []} onCreated={refresh} />
      <Card title="Active grants">
        {revoke.isError ? <ErrorState>{errorText(revoke.error)}</ErrorState> : null}
        {grants.isPending ? (
          <Loading what="grants" />
        ) : grants.isError ? (
          <ErrorState>{errorText(grants.error)}</ErrorState>
        ) : grants.data.grants.length === 0 ? (
          <EmptyState>No active grants: every action at medium risk or above waits for a person.</EmptyState>
        ) : (
          <div className="table-wrap">
            <table className="stack">
              <thead>
                <tr>
                  <th scope="col">Tool on host</th>
                  <th scope="col">Up to</th>
                  <th scope="col">Covers</th>
                  <th scope="col">Uses left</th>
                  <th scope="col">Until</th>
                  <th scope="col"><span className="visually-hidden">Action</span></th>
                </tr>
              </thead>
              <tbody>
                {grants.data.grants.map((g) => (
                  <tr key={g.id} data-testid={`grant-${g.id}`}>
                    <td data-label="Tool on host">
                      <Code>{shown(g.tool)}</Code> on <Code>{shown(g.host)}</Code>
                    </td>
                    <td data-label="Up to">
                      <RiskBadge level={g.maxRisk} />
                      {g.passkeySigned ? <div className="hint">signed with a passkey</div> : null}
                    </td>
                    <td className="grant-scope" data-label="Covers">
                      <div>
                        {g.pattern === null ? (
                          "any command"
                        ) : (
                          <>
                            pattern <Code>{shown(g.pattern)}</Code>
                            {hasInvisibleCharacters(g.pattern) ? <span className="hint"> (invisible or direction-changing characters shown as escapes)</span> : null}
                          </>
                        )}
                      </div>
                      <div>{g.env.length === 0 ? "env none" : <>env {g.env.map(([k, v]) => <Code key={k}>{`${shown(k)}=${shown(JSON.stringify(v))} `}</Code>)}</>}</div>
                      <div>{g.stdinSha256 === null ? "stdin none" : <>stdin sha256 <Code>{g.stdinSha256}</Code></>}</div>
                      <div>cwd <Code>{shown(g.cwd)}</Code></div>
                    </td>
                    <td data-label="Uses left">{g.usesRemaining}</td>
                    <td data-label="Until">{new Date(g.expiresAt).toLocaleString()}</td>
                    <td>
                      <ConfirmAction
                        id={g.id}
                        confirming={confirming}
                        setConfirming={setConfirming}
                        label="Revoke"
                        confirmLabel="Confirm revoke"
                        ariaLabel={`Revoke grant for ${g.tool} on ${g.host}`}
                        pending={revoke.isPending}
                        onConfirm={() => revoke.mutate({ id: g.id })}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}

// eslint-disable-next-line max-lines-per-function -- the grant form's fields and the preview of its scope share one draft
function CreateGrant({ tools, hosts, levels, passkeyLevels, onCreated }: { tools: string[]; hosts: string[]; levels: readonly string[]; passkeyLevels: readonly string[]; onCreated: () => void }) {
  const trpc = useTRPC();
  const [tool, setTool] = useState("");
  const [host, setHost] = useState("");
  const [maxRisk, setMaxRisk] = useState("low");
  const [uses, setUses] = useState(5);
  const [expires, setExpires] = useState("1h");
  const [pattern, setPattern] = useState("");
  const [env, setEnv] = useState<EnvEntry[]>([]);
  const [stdinSha256, setStdin] = useState("");
  const [cwd, setCwd] = useState("");
  const create = useMutation(trpc.grants.create.mutationOptions({ onSuccess: onCreated }));
  const passkey = usePasskeyGrant();
  const { ask, prompt } = useReauth();
  const [error, setError] = useState<string | null>(null);
  const signed = passkeyLevels.includes(maxRisk);
  // The hub refuses a pattern holding an invisible character as itself (server/policy/grants); said here before sending.
  const hiddenInPattern = hasInvisibleCharacters(pattern);
  const run = async () => {
    setError(null);
    if (hiddenInPattern) {
      setError(`The pattern holds invisible or direction-changing characters (${describeInvisibleCharacters(pattern)}); write each as an escape such as \\u200b.`);
      return;
    }
    const scope: GrantScopeInput = {
      tool: tool || (tools[0] ?? ""),
      host: host || (hosts[0] ?? ""),
      maxRisk,
      uses,
      expires,
      pattern: pattern === "" ? null : pattern,
      env: env.filter((e) => e.name !== ""),
      stdinSha256: stdinSha256 === "" ? null : stdinSha256,
      cwd: cwd === "" ? null : cwd,
    };
    try {
      if (signed) {
        const { expiresAt, assertion } = await passkey.sign(scope);
        const { expires: _duration, ...exact } = scope;
        await create.mutateAsync({ ...exact, expiresAt, assertion });
      } else {
        await create.mutateAsync(scope);
      }
    } catch (e) {
      if (needsReauth(e)) ask(() => void run());
      else setError(e instanceof Error && e.name === "NotAllowedError" ? "The browser or authenticator cancelled the passkey signature." : errorText(e));
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run();
  };
  const busy = create.isPending || passkey.signing;
  const setEntry = (i: number, entry: EnvEntry) => setEnv(env.map((e, j) => (j === i ? entry : e)));
  return (
    <Card title="Create a grant">
      {prompt}
      <form onSubmit={submit}>
        <div className="inline-form">
          <div>
            <label htmlFor="grant-tool">Tool</label>
            <select id="grant-tool" value={tool || (tools[0] ?? "")} onChange={(e) => setTool(e.target.value)}>
              {tools.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="grant-host">Host</label>
            <select id="grant-host" value={host || (hosts[0] ?? "")} onChange={(e) => setHost(e.target.value)}>
              {hosts.map((h) => (
                <option key={h}>{h}</option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="grant-risk">Up to risk</label>
            <select id="grant-risk" value={maxRisk} onChange={(e) => setMaxRisk(e.target.value)} aria-describedby="grant-risk-hint">
              {levels.map((l) => (
                <option key={l} value={l}>
                  {l.replace("_", "-")}
                </option>
              ))}
            </select>
            <p className="hint" id="grant-risk-hint">
              Critical actions are never grantable.{signed ? " This ceiling needs your passkey's signature over the whole grant." : ""}
            </p>
          </div>
          <div>
            <label htmlFor="grant-uses">Uses</label>
            <input id="grant-uses" type="number" min={1} max={10000} required value={uses} onChange={(e) => setUses(Number(e.target.value))} />
          </div>
          <div>
            <label htmlFor="grant-expires">Expires after</label>
            <input id="grant-expires" required value={expires} onChange={(e) => setExpires(e.target.value)} aria-describedby="grant-expires-hint" />
            <p className="hint" id="grant-expires-hint">
              e.g. 30m, 2h, 7d (at most 90 days)
            </p>
          </div>
        </div>
        <label htmlFor="grant-pattern">Command pattern (regular expression matching the whole command; empty = any)</label>
        <input id="grant-pattern" className="mono" value={pattern} onChange={(e) => setPattern(e.target.value)} aria-describedby="grant-pattern-problem" aria-invalid={hiddenInPattern} />
        {hiddenInPattern ? (
          <ErrorState>
            <span id="grant-pattern-problem" data-testid="grant-pattern-hidden">
              The pattern holds invisible or direction-changing characters as themselves: {describeInvisibleCharacters(pattern)}. It reads as <Code>{shown(pattern)}</Code>; write each
              as an escape (such as <code>\u200b</code>) — a grant cannot be created until then.
            </span>
          </ErrorState>
        ) : null}
        <fieldset className="env-entries">
          <legend>Environment (exactly these entries; none = the action has no environment)</legend>
          {env.map((entry, i) => (
            <div className="env-entry" key={i}>
              <input aria-label={`Environment name ${i + 1}`} className="mono" placeholder="NAME" value={entry.name} onChange={(e) => setEntry(i, { ...entry, name: e.target.value })} />
              <input aria-label={`Environment value ${i + 1}`} className="mono" placeholder="value" value={entry.value} onChange={(e) => setEntry(i, { ...entry, value: e.target.value })} />
              <button type="button" onClick={() => setEnv(env.filter((_, j) => j !== i))} aria-label={`Remove environment entry ${i + 1}`}>
                Remove
              </button>
            </div>
          ))}
          <button type="button" onClick={() => setEnv([...env, { name: "", value: "" }])}>
            Add an environment entry
          </button>
        </fieldset>
        <div className="inline-form">
          <div>
            <label htmlFor="grant-stdin">Stdin SHA-256 (64 hex digits; empty = no stdin)</label>
            <input id="grant-stdin" className="mono" value={stdinSha256} onChange={(e) => setStdin(e.target.value)} />
          </div>
          <div>
            <label htmlFor="grant-cwd">Working directory (workspace-relative; empty = the root)</label>
            <input id="grant-cwd" className="mono" value={cwd} onChange={(e) => setCwd(e.target.value)} />
          </div>
        </div>
        <div className="form-row">
          <button className="primary" type="submit" disabled={busy || hiddenInPattern || tools.length === 0 || hosts.length === 0}>
            {passkey.signing ? "Waiting for the passkey…" : create.isPending ? "Creating…" : signed ? "Sign with passkey and create grant" : "Create grant"}
          </button>
          {hosts.length === 0 ? <span className="hint">No host is enrolled yet.</span> : null}
        </div>
        {error === null ? null : <ErrorState>{error}</ErrorState>}
        {create.isSuccess ? (
          <p role="status" data-testid="grant-created">
            Grant created: {create.data.tool} on {create.data.host} up to {create.data.maxRisk}, {create.data.usesRemaining} uses.
          </p>
        ) : null}
      </form>
    </Card>
  );
}
