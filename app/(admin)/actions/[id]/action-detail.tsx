"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { neutraliseTerminalText } from "~/server/text/terminal";
import { useTRPC } from "~/app/_components/trpc";
import { Badge, Card, Code, EmptyState, ErrorState, Loading, PageHeader, RiskBadge } from "~/app/_components/ui";
import { errorText } from "~/app/_lib/errors";
import { DECISION_LABEL, DECISION_TONE, formatTime } from "../../_dashboard/labels";
import { StopButton } from "./stop-button";

/** Text from the envelope (a process name is the workload's choice), control characters shown as visible escapes. */
function shownText(value: string): string {
  return neutraliseTerminalText(value).text;
}

/** JSON for display, with any terminal control characters shown as visible escapes. */
function shown(value: unknown): string {
  return neutraliseTerminalText(JSON.stringify(value, null, 2)).text;
}

/** The few fields of a ledger entry's data worth a glance in the timeline row. */
function entrySummary(data: Record<string, unknown> | null): string {
  if (data === null) return "";
  const keys = ["outcome", "event", "risk", "state", "exit_code", "tier", "mode", "code", "stage", "job_id"];
  return keys.filter((k) => data[k] !== undefined && data[k] !== null).map((k) => `${k} ${String(data[k])}`).join(" · ");
}

// eslint-disable-next-line max-lines-per-function -- the action page is one read-only view of one record, laid out top to bottom; its parts are markup, not logic
export function ActionDetailView({ id }: { id: string }) {
  const trpc = useTRPC();
  const detail = useQuery({
    ...trpc.actions.get.queryOptions({ id }),
    // Until the action ends, keep it current (held → approved → running → sealed).
    // and until its last entry is in a signed checkpoint (the receipt follows within about a second).
    refetchInterval: (q) => {
      const d = q.state.data;
      if (d === undefined || q.state.status === "error") return false;
      const ended = ["completed", "failed", "denied", "expired", "unknown", "cancelled"].includes(d.state);
      return ended && d.receipt !== null && d.timeline.every((e) => e.leaf_index !== null) ? false : 2_000;
    },
  });
  if (detail.isPending) return <Loading what="the action" />;
  if (detail.isError) {
    return (
      <>
        <PageHeader title="Action" />
        <ErrorState>{errorText(detail.error)}</ErrorState>
        <p>
          <Link href="/actions">Back to actions</Link>
        </p>
      </>
    );
  }
  const a = detail.data;
  const reasons = Array.isArray(a.risk.reasons) ? (a.risk.reasons as Array<{ rule?: string; message?: string; level?: string }>) : [];
  return (
    <>
      <PageHeader
        title={`${a.operation} on ${a.host ?? "?"}`}
        description={
          <>
            <RiskBadge level={a.risk.level} /> <Badge tone={DECISION_TONE[a.decision] ?? "neutral"}>{DECISION_LABEL[a.decision] ?? a.decision}</Badge> <span data-testid="action-state">{a.state}</span>
            {a.exit === null ? "" : ` · exit ${a.exit.code ?? "none"}${a.exit.signal ? ` (${a.exit.signal})` : ""}${a.exit.timed_out ? " · timed out" : ""}`} · {a.channel === "console" ? "console" : "MCP"} ·{" "}
            {a.requester.kind === "admin" ? "admin" : "token"} {a.requester.name ?? "?"} · {formatTime(a.created_at)}
          </>
        }
        actions={
          <>
            <StopButton id={a.id} state={a.state} /> <Link href="/actions">All actions</Link>
          </>
        }
      />
      {a.error === null ? null : (
        <ErrorState>
          {a.error.code}: {neutraliseTerminalText(a.error.message).text}
        </ErrorState>
      )}
      <div className="detail-grid">
        <Card title="Prepared action">
          <dl>
            <dt>Action id</dt>
            <dd>
              <Code>{a.id}</Code>
            </dd>
            <dt>Action hash</dt>
            <dd>
              <Code>{a.action_hash}</Code>
            </dd>
            <dt>Capability</dt>
            <dd>{a.capability}</dd>
          </dl>
          <h3 className="detail-sub">Arguments</h3>
          <Code block>{shown(a.arguments)}</Code>
          {a.network === null ? null : (
            <p data-testid="action-network">
              <span className="muted">Network</span>{" "}
              {a.network.mode === "none" ? "none" : <>egress allow-list <Code>{shownText(a.network.egress.join(", "))}</Code></>}
            </p>
          )}
          {reasons.length === 0 ? null : (
            <>
              <h3 className="detail-sub">Risk reasons</h3>
              <ul>
                {reasons.map((r, i) => (
                  <li key={i}>
                    <RiskBadge level={r.level ?? a.risk.level} /> {neutraliseTerminalText(r.message ?? "").text} <span className="muted">({r.rule})</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </Card>

        <Card title="Approval">
          {a.approval === null ? (
            <EmptyState>{a.decision === "auto_allow"
                ? "Auto-allowed: read-only, run under an observe lease without a person."
                : a.decision === "observe_scope"
                  ? "Ran under observe, not judged read-only: the token's observe scope is any, so it ran at once under the observe lease (workspace read-only, /tmp thrown away, no network) without a person; its risk above is the verdict, not what was allowed."
                  : a.decision === "grant" ? "Allowed by a grant, without a person." : "No approval."}</EmptyState>
          ) : (
            <dl data-testid="approval">
              <dt>State</dt>
              <dd>{a.approval.state}</dd>
              <dt>Held</dt>
              <dd>{formatTime(a.approval.created_at)}</dd>
              <dt>Decided</dt>
              <dd>{a.approval.decided_at === null ? `not yet (deadline ${formatTime(a.approval.deadline)})` : `${formatTime(a.approval.decided_at)} by ${a.approval.decided_by ?? "nobody (expired)"}`}</dd>
              {a.approval.first_approved_by === null ? null : (
                <>
                  <dt>First approver</dt>
                  <dd>
                    {a.approval.first_approved_by} at {a.approval.first_approved_at === null ? "?" : formatTime(a.approval.first_approved_at)}
                  </dd>
                </>
              )}
              <dt>Reason</dt>
              <dd>{a.approval.reason === null ? <span className="muted">none given</span> : neutraliseTerminalText(a.approval.reason).text}</dd>
              <dt>Passkey</dt>
              <dd data-testid="approval-passkey">
                {a.approval.passkey.status === "absent" ? (
                  <span className="muted">no passkey assertion stored</span>
                ) : (
                  <Badge tone={a.approval.passkey.status === "verified" ? "ok" : "err"}>{a.approval.passkey.status}: {a.approval.passkey.detail}</Badge>
                )}
              </dd>
            </dl>
          )}
        </Card>
      </div>

      <Card title="Timeline">
        {a.timeline.length === 0 ? (
          <EmptyState>No ledger entry names this action yet.</EmptyState>
        ) : (
          <div className="table-wrap">
            <table data-testid="timeline" className="stack-table">
              <thead>
                <tr>
                  <th scope="col">Index</th>
                  <th scope="col">Type</th>
                  <th scope="col">Time</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {a.timeline.map((e) => (
                  <tr key={e.entry_id}>
                    <td data-label="Index">{e.leaf_index === null ? <span className="muted">integrating</span> : e.leaf_index}</td>
                    <td data-label="Type">
                      <Code>{e.type}</Code>
                    </td>
                    <td data-label="Time">{e.time === null ? "—" : formatTime(e.time)}</td>
                    <td data-label="Details">{e.invalid === null ? entrySummary(e.data) : <span className="error">does not decode: {e.invalid}</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>

      <Card title="Output">
        {a.job?.output_pruned ? <p className="hint">Output was pruned ({a.job.output_pruned}); the evidence keeps its digest and size.</p> : null}
        {a.output.length === 0 ? (
          <EmptyState>{a.job === null ? "Not run." : a.job.completed_at === null ? `Job ${a.job.state}; no output yet.` : "No output."}</EmptyState>
        ) : (
          a.output.map((s) => (
            <div key={s.name} data-testid={`output-${s.name}`}>
              <h3 className="detail-sub">
                {s.name} <span className="muted">({s.bytes} bytes{s.shown_bytes < s.bytes ? `, first ${s.shown_bytes} shown` : ""})</span>
                {s.controls ? <Badge tone="warn">terminal controls escaped</Badge> : null}
              </h3>
              <Code block>{s.text === "" ? " " : s.text}</Code>
            </div>
          ))
        )}
        <p className="hint">Scrubbed on the host before it left; control sequences are shown as visible escapes such as \x1b.</p>
      </Card>

      <Card title="Evidence envelope">
        {a.evidence === null ? (
          <EmptyState>No evidence yet: the host has not sealed a result.</EmptyState>
        ) : (
          <div data-testid="evidence">
            <p>
              {a.evidence.verified ? <Badge tone="ok">verified</Badge> : <Badge tone="err">verification failed</Badge>} <span className="muted">digest</span> <Code>{a.evidence.digest}</Code>
            </p>
            <ul className="checks">
              {a.evidence.checks.map((c) => (
                <li key={c.name} className={c.ok ? "check-ok" : "check-bad"}>
                  <strong>
                    {c.ok ? "✓" : "✗"} {c.name}
                  </strong>
                  : {c.detail}
                </li>
              ))}
            </ul>
            {a.evidence.network === null ? null : (
              <div data-testid="evidence-network">
                <p>
                  <span className="muted">kernel tier</span> {a.evidence.network.tier} ·{" "}
                  {a.evidence.network.attached ? "BPF programs enforced this lease" : "no BPF program enforced this lease"}
                  {a.evidence.network.object_sha256 === null ? null : (
                    <>
                      {" "}
                      · <span className="muted">BPF object sha256</span> <Code>{a.evidence.network.object_sha256}</Code>
                    </>
                  )}
                </p>
                {a.evidence.network.resolved_names.length === 0 ? null : (
                  <ul>
                    {a.evidence.network.resolved_names.map((n) => (
                      <li key={n.name}>
                        <Code>{shownText(n.name)}</Code> resolved to <Code>{n.addresses.join(", ")}</Code>
                      </li>
                    ))}
                  </ul>
                )}
                {a.evidence.network.attached ? (
                  a.evidence.network.denials.length === 0 && (a.evidence.network.denials_dropped ?? 0) === 0 ? (
                    <p>No denials.</p>
                  ) : (
                    <>
                      <p>
                        Denials ({a.evidence.network.denials.length}
                        {(a.evidence.network.denials_dropped ?? 0) > 0 ? `, ${a.evidence.network.denials_dropped} more not listed` : ""}):
                      </p>
                      <ul data-testid="evidence-denials">
                        {a.evidence.network.denials.map((d, i) => (
                          <li key={i}>
                            <Code>{shownText(d)}</Code>
                          </li>
                        ))}
                      </ul>
                    </>
                  )
                ) : null}
              </div>
            )}
            <details>
              <summary>Envelope (signed JSON)</summary>
              <Code block>{shown(a.evidence.envelope)}</Code>
            </details>
          </div>
        )}
      </Card>

      <Card title="Receipt">
        {a.receipt === null ? (
          <EmptyState>No receipt yet: the entry is not in a signed checkpoint.</EmptyState>
        ) : (
          <div data-testid="receipt">
            <p>
              {a.receipt.verified ? <Badge tone="ok">inclusion verified</Badge> : <Badge tone="err">receipt does not verify</Badge>} {a.receipt.detail}
            </p>
            <dl>
              <dt>Leaf index</dt>
              <dd>{a.receipt.receipt.leaf_index}</dd>
              <dt>Tree size</dt>
              <dd>{a.receipt.tree_size}</dd>
              <dt>Proof</dt>
              <dd>{a.receipt.receipt.inclusion_proof.length} hashes</dd>
            </dl>
            <details>
              <summary>Signed checkpoint (with cosignatures) and proof</summary>
              <Code block>{`${a.receipt.receipt.checkpoint}\n${a.receipt.receipt.inclusion_proof.join("\n")}`}</Code>
            </details>
          </div>
        )}
      </Card>
    </>
  );
}
