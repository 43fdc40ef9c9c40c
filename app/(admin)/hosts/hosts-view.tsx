"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { CopyButton } from "../../_components/copy-button";
import { useReauth, needsReauth } from "../../_components/reauth-prompt";
import { ConfirmAction } from "../../_components/confirm-action";
import { useTRPC } from "../../_components/trpc";
import { Badge, Card, Code, EmptyState, ErrorState, Loading } from "../../_components/ui";
import { errorText } from "../../_lib/errors";

const READY_TONE: Record<string, "ok" | "warn" | "err" | "neutral"> = { ready: "ok", degraded: "warn", installed: "warn", declared: "neutral", unsupported: "err", unavailable: "err" };

function bytes(n: number): string {
  for (const [unit, size] of [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]] as const) if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  return `${n} B`;
}

export function HostsView({ owner }: { owner: boolean }) {
  return (
    <>
      {owner ? <EnrolHost /> : null}
      <HostList owner={owner} />
      <Capabilities owner={owner} />
    </>
  );
}

// eslint-disable-next-line max-lines-per-function -- one host's card: health, host paths, snapshots and capabilities read the same report
function HostList({ owner }: { owner: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const hosts = useQuery({ ...trpc.hosts.list.queryOptions(), refetchInterval: 5_000 });
  const [confirming, setConfirming] = useState<string | null>(null);
  const breakLease = useMutation(
    trpc.hosts.breakLease.mutationOptions({
      onSuccess: () => {
        setConfirming(null);
        void queryClient.invalidateQueries({ queryKey: trpc.hosts.list.queryKey() });
      },
    }),
  );
  if (hosts.isPending) return <Loading what="hosts" />;
  if (hosts.isError) return <ErrorState>{errorText(hosts.error)}</ErrorState>;
  if (hosts.data.length === 0) return <EmptyState>No hosts enrolled yet.{owner ? " Enrol one above." : " An owner enrols hosts."}</EmptyState>;
  return (
    <>
      {breakLease.isError ? <ErrorState>{errorText(breakLease.error)}</ErrorState> : null}
      {/* eslint-disable-next-line max-lines-per-function -- the card of one host, for the reason on HostList */}
      {hosts.data.map((h) => (
        <Card
          key={h.name}
          className="host-card"
          title={
            <span className="host-title">
              <span>{h.name}</span>
              <Badge tone={h.witness_failure !== null ? "err" : h.online ? "ok" : "err"}>
                <span data-testid={`host-state-${h.name}`}>{h.witness_failure !== null ? "witness check failed" : h.online ? "online" : "offline"}</span>
              </Badge>
              <Badge tone={h.tier === null ? "err" : "info"}>
                tier <span data-testid={`host-tier-${h.name}`}>{h.tier ?? "none"}</span>
              </Badge>
            </span>
          }
        >
          {h.witness_failure !== null ? <ErrorState>Witness check failed: {h.witness_failure}</ErrorState> : null}
          <dl className="host-facts">
            <dt>Last report</dt>
            <dd>{h.last_seen_at === null ? "never" : new Date(h.last_seen_at).toLocaleString()}{h.seen_from === null ? "" : ` from ${h.seen_from}`}</dd>
            <dt>Guest</dt>
            <dd>{h.guest_version ?? "not reported"}{h.accepting_jobs ? "" : " · not accepting jobs"}</dd>
            <dt>Ceiling</dt>
            <dd data-testid={`host-ceiling-${h.name}`}>
              {h.ceiling === null
                ? "not reported by this guest"
                : `memory ${bytes(h.ceiling.memory_bytes)} · ${h.ceiling.cpus} CPU · ${h.ceiling.pids} processes · ${h.ceiling.timeout_ms / 1000} s · output ${bytes(h.ceiling.output_bytes)}/stream · workspace ${bytes(h.ceiling.workspace_max_bytes)} · ${h.ceiling.exec_dirs} exec dir(s) · ${h.ceiling.egress_rules === 0 ? "no egress" : `${h.ceiling.egress_rules} egress rule(s)`}`}
            </dd>
            <dt>Kernel tier</dt>
            <dd data-testid={`host-bpf-${h.name}`}>
              {h.tier ?? "none"}
              {h.bpf === null ? (
                " · BPF loader not reported by this guest"
              ) : (
                <>
                  {h.bpf.object_sha256 === null ? " · no BPF object" : <> · BPF object sha256 <Code>{h.bpf.object_sha256}</Code></>}
                  <span className="hint"> {h.bpf.detail}</span>
                </>
              )}
            </dd>
            <dt>Host paths</dt>
            <dd data-testid={`host-paths-${h.name}`}>
              {h.host_paths === null || h.host_paths.length === 0 ? (
                "none listed in this host's ceiling"
              ) : (
                <ul className="host-paths">
                  {h.host_paths.map((p) => (
                    <li key={p.label}>
                      <Code>{p.label}</Code> <Code>{p.path}</Code> <Badge tone={p.mode === "rw" ? "warn" : "neutral"}>{p.mode}</Badge>
                      <span className="hint">
                        {p.owner === undefined ? " · owner: the directory's own" : ` · owner uid ${p.owner.uid}, gid ${p.owner.gid}`}
                        {p.max_bytes === undefined ? "" : ` · budget ${bytes(p.max_bytes)}`}
                        {p.max_inodes === undefined ? "" : ` · ${p.max_inodes} inodes`}
                      </span>
                    </li>
                  ))}
                </ul>
              )}
            </dd>
            <dt>Recent snapshots</dt>
            <dd data-testid={`host-snapshots-${h.name}`}>
              {h.snapshots.length === 0 ? (
                "none"
              ) : (
                <ul className="host-snapshots">
                  {h.snapshots.slice(0, 10).map((snap) => (
                    <li key={snap.id}>
                      <Code>{snap.id}</Code> of <Code>{snap.label}</Code> at {new Date(snap.created_at).toLocaleString()} · {bytes(snap.bytes)} in {snap.files} file(s) · <Code>{snap.tree_digest}</Code>
                    </li>
                  ))}
                  {h.snapshots.length > 10 ? <li className="hint">{h.snapshots.length - 10} more: leasehold snapshot list --host {h.name}</li> : null}
                </ul>
              )}
            </dd>
          </dl>
          <h3>Capability readiness</h3>
          <ul className="readiness">
            {h.capabilities.map((c) => (
              <li key={c.id}>
                <Code>{c.id}</Code> <Badge tone={READY_TONE[c.state] ?? "neutral"}>{c.state}</Badge>
                {c.reasons.length > 0 ? <span className="hint"> {c.reasons.join("; ")}</span> : null}
                {c.requested_digest === null ? null : (
                  <span className="worker-digests" data-testid={`worker-digest-${h.name}-${c.id}`}>
                    {" "}
                    worker requested <Code>{c.requested_digest}</Code> · verified on this host{" "}
                    {c.verified_digest === null ? "none reported" : <Code>{c.verified_digest}</Code>}
                    {c.verified_digest !== null && c.verified_digest !== c.requested_digest ? <> <Badge tone="err">differs</Badge></> : null}
                  </span>
                )}
              </li>
            ))}
          </ul>
          <h3>Leases</h3>
          {h.leases.length === 0 ? (
            <EmptyState>No active lease.</EmptyState>
          ) : (
            <div className="table-wrap">
              <table className="stack">
                <thead>
                  <tr>
                    <th scope="col">Holder</th>
                    <th scope="col">Mode</th>
                    <th scope="col">Until</th>
                    {owner ? <th scope="col"><span className="visually-hidden">Action</span></th> : null}
                  </tr>
                </thead>
                <tbody>
                  {h.leases.map((l) => (
                    <tr key={l.id} data-testid={`lease-${l.id}`}>
                      <td data-label="Holder">{l.holder}</td>
                      <td data-label="Mode">{l.mode}</td>
                      <td data-label="Until">{new Date(l.expires_at).toLocaleTimeString()} (idle {new Date(l.idle_expires_at).toLocaleTimeString()})</td>
                      {owner ? (
                        <td>
                          <ConfirmAction
                            id={l.id}
                            confirming={confirming}
                            setConfirming={setConfirming}
                            label="Break lease"
                            confirmLabel="Confirm break"
                            pending={breakLease.isPending}
                            onConfirm={() => breakLease.mutate({ leaseId: l.id })}
                          />
                        </td>
                      ) : null}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Card>
      ))}
    </>
  );
}

function EnrolHost() {
  const trpc = useTRPC();
  const { ask, prompt } = useReauth();
  const [name, setName] = useState("");
  const [ttl, setTtl] = useState(15);
  const enrol = useMutation(trpc.hosts.enrolCode.mutationOptions());
  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const input = { name, ttlMinutes: ttl };
    enrol.mutate(input, { onError: (error) => (needsReauth(error) ? ask(() => enrol.mutate(input)) : undefined) });
  };
  return (
    <Card title="Enrol a host">
      {enrol.isSuccess ? (
        <div data-testid="enrol-result">
          <p>
            One-time code for <strong>{enrol.data.name}</strong>, valid until {new Date(enrol.data.expiresAt).toLocaleString()}. It is shown only now: only its SHA-256 is stored.
          </p>
          <p className="hint">
            On the host, as root, in a copy of this Leasehold checkout (the executables run only code built there). The code goes in on standard input, never as an
            argument, where every local user could read it.
          </p>
          <ol className="enrol-steps">
            {enrol.data.steps.map((step, i) => (
              <li key={i} data-testid={`enrol-step-${i + 1}`}>
                <p>{step.title}</p>
                <pre className="code-block" tabIndex={0} aria-label={`Step ${i + 1}: ${step.title}`}>
                  {step.command}
                </pre>
                <CopyButton text={step.command} label={`Copy step ${i + 1}`} />
              </li>
            ))}
          </ol>
          <div className="form-row">
            <button type="button" onClick={() => enrol.reset()}>
              Done
            </button>
          </div>
          {enrol.data.note === null ? null : <p className="hint">{enrol.data.note}</p>}
        </div>
      ) : (
        <form onSubmit={submit} className="inline-form">
          <div>
            <label htmlFor="enrol-name">Host name</label>
            <input
              id="enrol-name"
              required
              pattern="[a-z0-9][a-z0-9._\-]{0,62}"
              value={name}
              onChange={(e) => {
                setName(e.target.value);
                if (enrol.isError) enrol.reset();
              }}
              aria-describedby="enrol-name-hint"
            />
            <p className="hint" id="enrol-name-hint">
              Lower-case letters, digits, . _ -. Re-enrolling an existing name rotates its key.
            </p>
          </div>
          <div>
            <label htmlFor="enrol-ttl">Code valid for (minutes)</label>
            <input id="enrol-ttl" type="number" min={1} max={1440} value={ttl} onChange={(e) => setTtl(Number(e.target.value))} />
          </div>
          <div className="form-row">
            <button className="primary" type="submit" disabled={enrol.isPending}>
              {enrol.isPending ? "Minting…" : "Mint enrolment code"}
            </button>
          </div>
          {enrol.isError && !needsReauth(enrol.error) ? <ErrorState>{errorText(enrol.error)}</ErrorState> : null}
        </form>
      )}
      {prompt}
    </Card>
  );
}

// eslint-disable-next-line max-lines-per-function -- the capability switches and their confirmations share the list's state
function Capabilities({ owner }: { owner: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const caps = useQuery(trpc.hosts.capabilities.queryOptions());
  const { ask, prompt } = useReauth();
  const [confirming, setConfirming] = useState<{ id: string; enabled: boolean } | null>(null);
  const toggle = useMutation(
    trpc.hosts.setCapabilityEnabled.mutationOptions({
      onSuccess: () => {
        setConfirming(null);
        void queryClient.invalidateQueries({ queryKey: trpc.hosts.capabilities.queryKey() });
      },
    }),
  );
  const change = (id: string, enabled: boolean) => {
    const input = { id, enabled };
    toggle.mutate(input, { onError: (error) => (needsReauth(error) ? ask(() => toggle.mutate(input)) : undefined) });
  };
  // A switch is asked for first, with what it does; an earlier failure no longer applies to it.
  const propose = (id: string, enabled: boolean) => {
    toggle.reset();
    setConfirming({ id, enabled });
  };
  return (
    <Card title="Capabilities">
      <p className="hint">
        The manifests this hub declares and their readiness across hosts. An opt-in capability is off until an owner enables it by its exact id (sealed in the audit log); its operations then become tools for agents whose tokens allow them.
      </p>
      {prompt}
      {toggle.isError && !needsReauth(toggle.error) ? <ErrorState>{errorText(toggle.error)}</ErrorState> : null}
      {caps.isPending ? (
        <Loading what="capabilities" />
      ) : caps.isError ? (
        <ErrorState>{errorText(caps.error)}</ErrorState>
      ) : caps.data.length === 0 ? (
        <EmptyState>No capabilities declared.</EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="stack">
            <thead>
              <tr>
                <th scope="col">Capability</th>
                <th scope="col">Activation</th>
                <th scope="col">Readiness</th>
                <th scope="col">Operations</th>
              </tr>
            </thead>
            <tbody>
              {caps.data.map((c) => (
                <tr key={c.id} data-testid={`capability-${c.id}`}>
                  <td data-label="Capability">
                    <Code>{c.id}</Code> <span className="hint">v{c.version} · {c.trust_boundary}</span>
                    {c.worker_digest === null ? null : (
                      <span className="hint" data-testid={`capability-worker-${c.id}`}>
                        {" "}
                        · worker <Code>{c.worker_digest}</Code>
                      </span>
                    )}
                  </td>
                  <td data-label="Activation">
                    {c.activation}
                    {c.status === "not_enabled" ? <> <Badge tone="neutral">not enabled</Badge></> : null}
                    {c.activation === "opt-in" && c.status === "active" ? <> <Badge tone="info">enabled</Badge></> : null}
                    {owner && c.activation === "opt-in" ? (
                      confirming?.id === c.id ? (
                        <div className="capability-confirm" role="group" aria-labelledby={`capability-consequence-${c.id}`} data-testid={`capability-confirm-${c.id}`}>
                          <p id={`capability-consequence-${c.id}`}>
                            <strong>{confirming.enabled ? `Enable ${c.id}?` : `Disable ${c.id}?`}</strong>{" "}
                            {c.consequence === null ? null : confirming.enabled ? c.consequence.enable : c.consequence.disable}
                          </p>
                          <div className="form-row tight">
                            <button type="button" className={confirming.enabled ? "danger" : undefined} disabled={toggle.isPending} onClick={() => change(c.id, confirming.enabled)}>
                              {confirming.enabled ? `Yes, enable ${c.id}` : `Yes, disable ${c.id}`}
                            </button>
                            <button type="button" onClick={() => setConfirming(null)}>
                              Keep as it is
                            </button>
                          </div>
                        </div>
                      ) : (
                        <>
                          {" "}
                          <button type="button" onClick={() => propose(c.id, c.status !== "active")} disabled={toggle.isPending} aria-label={`${c.status === "active" ? "Disable" : "Enable"} ${c.id}…`}>
                            {c.status === "active" ? "Disable…" : "Enable…"}
                          </button>
                        </>
                      )
                    ) : null}
                  </td>
                  <td data-label="Readiness">{c.readiness === null ? "—" : <Badge tone={READY_TONE[c.readiness.state] ?? "neutral"}>{c.readiness.state}</Badge>}</td>
                  <td data-label="Operations">
                    {c.operations.map((o) => (
                      <span key={o.name} className="op">
                        <Code>{o.name}</Code>
                        {o.mutating ? "" : " (read-only)"}
                      </span>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
