"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ConfirmAction } from "../../_components/confirm-action";
import { needsReauth, useReauth } from "../../_components/reauth-prompt";
import { useTRPC } from "../../_components/trpc";
import { Badge, Card, EmptyState, ErrorState, Loading } from "../../_components/ui";
import { errorText } from "../../_lib/errors";

const KIND_LABEL = { cimd: "metadata document", dynamic: "dynamic registration", registered: "registered by an admin" } as const;

// eslint-disable-next-line max-lines-per-function -- the client list and its register/remove forms share one query
export function OAuthClientsView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const clients = useQuery(trpc.oauth.clients.queryOptions());
  const refresh = () => void queryClient.invalidateQueries({ queryKey: trpc.oauth.clients.queryKey() });
  const setSettings = useMutation(trpc.oauth.setSettings.mutationOptions({ onSuccess: refresh }));
  const [confirming, setConfirming] = useState<string | null>(null);
  const remove = useMutation(trpc.oauth.removeClient.mutationOptions({ onSuccess: () => (setConfirming(null), refresh()) }));
  // Both change who may ask for consent: a session that has not proved the password recently is asked for it first.
  const { ask, prompt } = useReauth();
  const changeSettings = (dynamicRegistration: boolean) => {
    const run = () => setSettings.mutate({ dynamicRegistration }, { onError: (error) => (needsReauth(error) ? ask(run) : undefined) });
    run();
  };
  const removeClient = (id: string) => {
    const run = () => remove.mutate({ id }, { onError: (error) => (needsReauth(error) ? ask(run) : undefined) });
    run();
  };
  if (clients.isPending) return <Loading what="OAuth clients" />;
  if (clients.isError) return <ErrorState>{errorText(clients.error)}</ErrorState>;
  const { settings, metadataUrl } = clients.data;
  return (
    <>
      <Card title="Settings">
        <p className="hint">
          Authorization server metadata: <code>{metadataUrl}</code>
        </p>
        <div className="form-row">
          <input
            id="oauth-dcr"
            type="checkbox"
            checked={settings.dynamicRegistration}
            disabled={setSettings.isPending}
            onChange={(e) => changeSettings(e.target.checked)}
          />
          <label htmlFor="oauth-dcr">Allow dynamic client registration (RFC 7591)</label>
        </div>
        <p className="hint">Off: only clients with a Client ID Metadata Document or registered below can ask for consent.</p>
        {setSettings.isError && !needsReauth(setSettings.error) ? <ErrorState>{errorText(setSettings.error)}</ErrorState> : null}
      </Card>
      <RegisterClient onRegistered={refresh} />
      <Card title="Clients">
        {remove.isSuccess ? <p role="status">Removed; {remove.data.grantsRevoked} grant(s) revoked.</p> : null}
        {remove.isError && !needsReauth(remove.error) ? <ErrorState>{errorText(remove.error)}</ErrorState> : null}
        {clients.data.clients.length === 0 ? (
          <EmptyState>No OAuth clients yet. They appear when one asks for consent or registers.</EmptyState>
        ) : (
          <div className="table-wrap">
            <table className="stack">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Client id</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Redirect URIs</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span className="visually-hidden">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {clients.data.clients.map((c) => (
                  <tr key={c.id} data-testid={`oauth-client-${c.name}`}>
                    <td data-label="Name">{c.name}</td>
                    <td data-label="Client id">
                      <code>{c.id}</code>
                    </td>
                    <td data-label="Kind">
                      <Badge>{KIND_LABEL[c.kind]}</Badge>
                    </td>
                    <td data-label="Redirect URIs">{c.redirectUris.join(", ")}</td>
                    <td data-label="Last used">{c.lastUsedAt === null ? "never" : new Date(c.lastUsedAt).toLocaleString()}</td>
                    <td>
                      <ConfirmAction
                        id={c.id}
                        confirming={confirming}
                        setConfirming={setConfirming}
                        label="Remove"
                        confirmLabel="Confirm remove (revokes its grants)"
                        ariaLabel={`Remove ${c.name}`}
                        pending={remove.isPending}
                        onConfirm={() => removeClient(c.id)}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      {prompt}
    </>
  );
}

function RegisterClient({ onRegistered }: { onRegistered: () => void }) {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [uris, setUris] = useState("");
  const { ask, prompt } = useReauth();
  const register = useMutation(trpc.oauth.registerClient.mutationOptions({ onSuccess: onRegistered }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const input = { name, redirectUris: uris.split(/\s+/).filter((u) => u !== "") };
    const run = () => register.mutate(input, { onError: (error) => (needsReauth(error) ? ask(run) : undefined) });
    run();
  };
  return (
    <Card title="Register a client">
      <form onSubmit={submit}>
        <label htmlFor="oauth-client-name">Name</label>
        <input id="oauth-client-name" required value={name} onChange={(e) => setName(e.target.value)} />
        <label htmlFor="oauth-client-uris">Redirect URIs (one per line)</label>
        <textarea id="oauth-client-uris" required rows={3} value={uris} onChange={(e) => setUris(e.target.value)} placeholder="http://127.0.0.1:33418/callback" />
        <p className="hint">Loopback clients: http://127.0.0.1:PORT/… or http://[::1]:PORT/… — never the host name of this admin page, whose cookies every port of it would receive.</p>
        <div className="form-row">
          <button className="primary" type="submit" disabled={register.isPending}>
            Register
          </button>
        </div>
        {register.isSuccess ? (
          <p role="status">
            Registered. Client id: <code data-testid="registered-client-id">{register.data.id}</code> (public client: PKCE, no secret).
          </p>
        ) : null}
        {register.isError && !needsReauth(register.error) ? <ErrorState>{errorText(register.error)}</ErrorState> : null}
      </form>
      {prompt}
    </Card>
  );
}
