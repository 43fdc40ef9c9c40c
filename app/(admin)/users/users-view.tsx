"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { CopyButton } from "../../_components/copy-button";
import { needsReauth, useReauth } from "../../_components/reauth-prompt";
import { useTRPC } from "../../_components/trpc";
import { Badge, Card, Code, EmptyState, ErrorState, Loading } from "../../_components/ui";
import { errorText } from "../../_lib/errors";

const ROLES = ["owner", "approver", "auditor"] as const;
type Role = (typeof ROLES)[number];
const ROLE_TEXT: Record<Role, string> = {
  owner: "owner — everything",
  approver: "approver — decide actions, see hosts and actions",
  auditor: "auditor — read-only: audit, actions, evidence",
};

// eslint-disable-next-line max-lines-per-function -- the user list and its create/role/disable forms share one query
export function UsersView({ self }: { self: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { ask, prompt } = useReauth();
  const users = useQuery(trpc.users.list.queryOptions());
  const refresh = () => void queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
  const [oneTime, setOneTime] = useState<{ username: string; password: string; why: string } | null>(null);
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("approver");
  const [roles, setRoles] = useState<Record<string, Role>>({});
  const opts = { onSuccess: refresh };
  const create = useMutation(trpc.users.create.mutationOptions({ onSuccess: (r) => (setOneTime({ username: r.username, password: r.oneTimePassword, why: `New ${r.role}` }), setName(""), refresh()) }));
  const disable = useMutation(trpc.users.disable.mutationOptions(opts));
  const setUserRole = useMutation(trpc.users.setRole.mutationOptions(opts));
  const reset = useMutation(trpc.users.resetPassword.mutationOptions({ onSuccess: (r) => (setOneTime({ username: r.username, password: r.oneTimePassword, why: "Password reset for" }), refresh()) }));
  /** Runs a guarded mutation; a refusal for want of re-authentication asks for the password and runs it again. */
  function guarded<I>(m: { mutate: (input: I, o: { onError: (e: unknown) => void }) => void }, input: I) {
    const run = () => m.mutate(input, { onError: (e) => (needsReauth(e) ? ask(run) : undefined) });
    run();
  }
  const failed = [create, disable, setUserRole, reset].find((m) => m.isError && !needsReauth(m.error));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    guarded(create, { name, role });
  };
  return (
    <>
      {prompt}
      {oneTime === null ? null : (
        <Card title="One-time password" className="secret-card">
          <div data-testid="one-time-password-card">
            <p>
              {oneTime.why} <strong>{oneTime.username}</strong>. Give them this password privately; it is shown only now, and they must replace it when they first sign in.
            </p>
            <Code block>
              <span data-testid="one-time-password">{oneTime.password}</span>
            </Code>
            <div className="form-row">
              <CopyButton text={oneTime.password} label="Copy password" />
              <button type="button" className="primary" onClick={() => setOneTime(null)}>
                Done — hide it
              </button>
            </div>
          </div>
        </Card>
      )}
      {failed === undefined ? null : <ErrorState>{errorText(failed.error)}</ErrorState>}
      <Card title="Add a user">
        <form onSubmit={submit} className="inline-form">
          <div>
            <label htmlFor="user-name">User name</label>
            <input id="user-name" required maxLength={63} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
          </div>
          <div>
            <label htmlFor="user-role">Role</label>
            <select id="user-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {ROLE_TEXT[r]}
                </option>
              ))}
            </select>
          </div>
          <div className="form-row">
            <button className="primary" type="submit" disabled={create.isPending}>
              {create.isPending ? "Adding…" : "Add user"}
            </button>
          </div>
        </form>
      </Card>
      <Card title="Users">
        {users.isPending ? (
          <Loading what="users" />
        ) : users.isError ? (
          <ErrorState>{errorText(users.error)}</ErrorState>
        ) : users.data.length === 0 ? (
          <EmptyState>No users.</EmptyState>
        ) : (
          <div className="table-wrap">
            <table className="stack">
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Role</th>
                  <th scope="col">State</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {users.data.map((u) => {
                  const chosen = roles[u.username] ?? (u.role as Role);
                  const isSelf = u.username === self;
                  return (
                    <tr key={u.id} data-testid={`user-${u.username}`}>
                      <td data-label="User">
                        {u.username}
                        {isSelf ? <span className="hint"> (you)</span> : null}
                      </td>
                      <td data-label="Role">
                        <span className="form-row tight">
                          <select aria-label={`Role of ${u.username}`} value={chosen} disabled={isSelf || u.disabled} onChange={(e) => setRoles({ ...roles, [u.username]: e.target.value as Role })}>
                            {ROLES.map((r) => (
                              <option key={r} value={r}>
                                {r}
                              </option>
                            ))}
                          </select>
                          {chosen !== u.role ? (
                            <button type="button" onClick={() => guarded(setUserRole, { name: u.username, role: chosen })}>
                              Change role
                            </button>
                          ) : null}
                        </span>
                      </td>
                      <td data-label="State">
                        {u.disabled ? <Badge tone="neutral">disabled</Badge> : u.mustChangePassword ? <Badge tone="warn">one-time password</Badge> : <Badge tone="ok">active</Badge>}
                      </td>
                      <td>
                        {isSelf || u.disabled ? null : (
                          <span className="form-row tight">
                            <button type="button" onClick={() => guarded(reset, { name: u.username })} aria-label={`Reset password of ${u.username}`}>
                              Reset password
                            </button>
                            <button type="button" className="danger" onClick={() => guarded(disable, { name: u.username })} aria-label={`Disable ${u.username}`}>
                              Disable
                            </button>
                          </span>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
