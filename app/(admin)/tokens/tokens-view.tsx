"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { CopyButton } from "../../_components/copy-button";
import { needsReauth, useReauth } from "../../_components/reauth-prompt";
import { ConfirmAction } from "../../_components/confirm-action";
import { useTRPC } from "../../_components/trpc";
import { Badge, Card, Code, EmptyState, ErrorState, Loading } from "../../_components/ui";
import { errorText } from "../../_lib/errors";

const EXPIRIES = ["1h", "12h", "7d", "30d", "90d", "never"] as const;

function list(text: string): string[] | null {
  const items = text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  return items.length === 0 ? null : items;
}

export function TokensView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const tokens = useQuery(trpc.tokens.list.queryOptions());
  const refresh = () => void queryClient.invalidateQueries({ queryKey: trpc.tokens.list.queryKey() });
  return (
    <>
      <CreateToken knownTools={tokens.data?.knownTools ?? []} onCreated={refresh} />
      <Card title="Tokens">
        {tokens.isPending ? (
          <Loading what="tokens" />
        ) : tokens.isError ? (
          <ErrorState>{errorText(tokens.error)}</ErrorState>
        ) : tokens.data.tokens.length === 0 ? (
          <EmptyState>No tokens yet. Create one above for an MCP client.</EmptyState>
        ) : (
          <TokenTable tokens={tokens.data.tokens} onRevoked={refresh} />
        )}
      </Card>
    </>
  );
}

type TokenRow = { id: string; name: string; kind: "static" | "oauth"; client: { id: string; name: string | null } | null; status: string; readOnly: boolean; observe: "judged" | "any"; tools: string[] | null; hosts: string[] | null; createdBy: string; createdAt: string; expiresAt: string | null };

function TokenTable({ tokens, onRevoked }: { tokens: TokenRow[]; onRevoked: () => void }) {
  const trpc = useTRPC();
  const [confirming, setConfirming] = useState<string | null>(null);
  const revoke = useMutation(trpc.tokens.revoke.mutationOptions({ onSuccess: () => (setConfirming(null), onRevoked()) }));
  return (
    <>
      {revoke.isSuccess ? (
        <p role="status" data-testid="revoke-result">
          Revoked: {revoke.data.ended.approvalsDenied} held approval(s) denied, {revoke.data.ended.jobsCancelled} queued job(s) cancelled, {revoke.data.ended.leasesReleased} lease(s) released
          {revoke.data.ended.jobsRunning > 0 ? `; ${revoke.data.ended.jobsRunning} running job(s) told to stop` : ""}.
        </p>
      ) : null}
      {revoke.isError ? <ErrorState>{errorText(revoke.error)}</ErrorState> : null}
      <div className="table-wrap">
        <table className="stack">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Scope</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col"><span className="visually-hidden">Action</span></th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
              <tr key={t.id} data-testid={`token-${t.name}`}>
                <td data-label="Name">{t.name}</td>
                <td data-label="Kind">
                  {t.kind === "oauth" ? (
                    <>
                      <Badge tone="info">OAuth</Badge>{" "}
                      <span className="hint" title={t.client?.id}>
                        {t.client?.name ?? t.client?.id ?? "removed client"}
                      </span>
                    </>
                  ) : (
                    <Badge>lh_ token</Badge>
                  )}
                </td>
                <td data-label="Status">
                  <Badge tone={t.status === "active" ? "ok" : "neutral"}>{t.status}</Badge>
                </td>
                <td data-label="Scope">
                  {t.readOnly ? "read-only" : "read-write"}
                  {t.observe === "any" ? <span data-testid="token-observe-any">; sandbox-first (observe any)</span> : null}; {t.tools === null ? "all tools" : t.tools.join(", ")}; {t.hosts === null ? "all hosts" : t.hosts.join(", ")}
                </td>
                <td data-label="Created">
                  {new Date(t.createdAt).toLocaleString()} <span className="hint">by {t.createdBy}</span>
                </td>
                <td data-label="Expires">{t.expiresAt === null ? "never" : new Date(t.expiresAt).toLocaleString()}</td>
                <td>
                  {t.status !== "active" && t.status !== "pending" ? null : (
                    <ConfirmAction
                      id={t.id}
                      confirming={confirming}
                      setConfirming={setConfirming}
                      label="Revoke"
                      confirmLabel="Confirm revoke"
                      ariaLabel={`Revoke ${t.name}`}
                      pending={revoke.isPending}
                      onConfirm={() => revoke.mutate({ id: t.id })}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

// eslint-disable-next-line max-lines-per-function -- the token form's fields and the one-time secret it shows share one draft
function CreateToken({ knownTools, onCreated }: { knownTools: string[]; onCreated: () => void }) {
  const trpc = useTRPC();
  const { ask, prompt } = useReauth();
  const [name, setName] = useState("");
  const [expires, setExpires] = useState<string>("30d");
  const [readOnly, setReadOnly] = useState(false);
  const [observeAny, setObserveAny] = useState(false);
  const [tools, setTools] = useState<string[]>([]);
  const [hosts, setHosts] = useState("");
  const create = useMutation(trpc.tokens.create.mutationOptions({ onSuccess: onCreated }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const input = { name, expires, readOnly, observe: observeAny ? ("any" as const) : ("judged" as const), tools: tools.length === 0 ? null : tools, hosts: list(hosts) };
    // Minting an agent credential always asks for the password first (not only when the session's last proof is stale).
    const run = () => create.mutate(input, { onError: (error) => (needsReauth(error) ? ask(run) : undefined) });
    ask(run);
  };
  if (create.isSuccess) {
    const { token, secret, settings } = create.data;
    return (
      <Card title={`Token “${token.name}” created`} className="secret-card">
        <div data-testid="token-created">
          <p>
            <strong>This is the only time the secret is shown</strong>; the hub stores only its SHA-256. Copy it now.
          </p>
          <h3>Secret</h3>
          <Code block>
            <span id="token-secret" data-testid="token-secret">
              {secret}
            </span>
          </Code>
          <CopyButton text={secret} label="Copy secret" />
          <h3>MCP client settings</h3>
          <p className="hint">Claude Code:</p>
          <Code block>
            <span data-testid="mcp-command">{settings.command}</span>
          </Code>
          <CopyButton text={settings.command} label="Copy command" />
          <p className="hint">Clients that take a JSON block (mcpServers):</p>
          <Code block>
            <span data-testid="mcp-json">{settings.json}</span>
          </Code>
          <CopyButton text={settings.json} label="Copy JSON" />
          <div className="form-row">
            <button className="primary" type="button" onClick={() => create.reset()}>
              Done — hide the secret
            </button>
          </div>
        </div>
      </Card>
    );
  }
  return (
    <Card title="Create a token">
      <form onSubmit={submit}>
        <div className="inline-form">
          <div>
            <label htmlFor="token-name">Name</label>
            <input id="token-name" required maxLength={64} value={name} onChange={(e) => setName(e.target.value)} />
          </div>
          <div>
            <label htmlFor="token-expires">Expires after</label>
            <select id="token-expires" value={expires} onChange={(e) => setExpires(e.target.value)}>
              {EXPIRIES.map((e) => (
                <option key={e} value={e}>
                  {e}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="token-hosts">Hosts (comma-separated; empty = all)</label>
            <input id="token-hosts" value={hosts} onChange={(e) => setHosts(e.target.value)} />
          </div>
        </div>
        <label className="check">
          <input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} disabled={observeAny} /> Read-only (no mutating tools)
        </label>
        <label className="check">
          <input type="checkbox" data-testid="token-observe-any-input" checked={observeAny} onChange={(e) => setObserveAny(e.target.checked)} disabled={readOnly} /> Sandbox-first (observe any): every
          run_command runs at once, without a person, under the observe lease — workspace read-only, /tmp thrown away, no network — whatever its risk; writes and network
          still need a person.
        </label>
        <fieldset className="tool-scope">
          <legend>Tools (none ticked = all tools)</legend>
          {knownTools.map((tool) => (
            <label key={tool} className="check">
              <input type="checkbox" checked={tools.includes(tool)} onChange={(e) => setTools(e.target.checked ? [...tools, tool] : tools.filter((t) => t !== tool))} /> <Code>{tool}</Code>
            </label>
          ))}
        </fieldset>
        <div className="form-row">
          <button className="primary" type="submit" disabled={create.isPending}>
            {create.isPending ? "Creating…" : "Create token"}
          </button>
        </div>
        {create.isError && !needsReauth(create.error) ? <ErrorState>{errorText(create.error)}</ErrorState> : null}
      </form>
      {prompt}
    </Card>
  );
}
