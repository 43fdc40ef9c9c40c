"use client";

import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { needsReauth, useReauth } from "../../_components/reauth-prompt";
import { useTRPC } from "../../_components/trpc";
import { Code, ErrorState, Loading, RiskBadge } from "../../_components/ui";
import { errorText } from "../../_lib/errors";
import { describeInvisibleCharacters, hasInvisibleCharacters, neutraliseOneLine } from "../../../server/text/terminal";
import { useDecisions } from "./decide";
import type { HeldAction } from "./types";

/** "4m 05s left", or "deadline passed". */
export function timeLeft(deadline: string, nowMs: number): string {
  const ms = Date.parse(deadline) - nowMs;
  if (ms <= 0) return "deadline passed";
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s left`;
}

function requesterText(item: HeldAction): string {
  const r = item.requester;
  const name = r.name ?? r.id ?? "?";
  return r.kind === "token" ? `token ${name}` : r.kind === "admin" ? `admin ${name}` : "unknown requester";
}

/** Beyond this many characters the command is shown collapsed: both ends and every risky span, the quiet middle elided. */
export const COLLAPSE_AT = 600;
const ENDS = 160;
const CONTEXT = 60;

type Segment = NonNullable<HeldAction["subject"]>["segments"][number];
type Piece = { kind: "text" | "risky"; text: string } | { kind: "elided"; chars: number };

/**
 * The collapsed form of a long command: risky segments whole, quiet ones cut
 * to their ends (more at the command's own start and end). A 4,800-character
 * command must not hide its `curl … | sh` tail below a scroll box.
 */
export function collapseSegments(segments: readonly Segment[]): Piece[] {
  const pieces: Piece[] = [];
  segments.forEach((segment, i) => {
    if (segment.risky) {
      pieces.push({ kind: "risky", text: segment.text });
      return;
    }
    const keepHead = i === 0 ? ENDS : CONTEXT;
    const keepTail = i === segments.length - 1 ? ENDS : CONTEXT;
    const chars = [...segment.text];
    if (chars.length <= keepHead + keepTail + 40) {
      pieces.push({ kind: "text", text: segment.text });
      return;
    }
    pieces.push({ kind: "text", text: chars.slice(0, keepHead).join("") }, { kind: "elided", chars: chars.length - keepHead - keepTail }, { kind: "text", text: chars.slice(chars.length - keepTail).join("") });
  });
  return pieces;
}

/** The command or code, the risky spans (from the risk reasons) in <mark class="risky">; a long one collapsed until asked. */
function Subject({ subject }: { subject: NonNullable<HeldAction["subject"]> }) {
  const length = subject.segments.reduce((n, s) => n + s.text.length, 0);
  const [whole, setWhole] = useState(false);
  const collapsed = length > COLLAPSE_AT && !whole;
  const pieces: Piece[] = collapsed ? collapseSegments(subject.segments) : subject.segments.map((s) => ({ kind: s.risky ? "risky" : "text", text: s.text }));
  const risky = subject.segments.filter((s) => s.risky).length;
  return (
    <>
      {length > COLLAPSE_AT ? (
        <p className="hint approval-command-note" data-testid="approval-command-note">
          {length.toLocaleString()} characters{risky > 0 ? `, ${risky} risky part${risky === 1 ? "" : "s"} marked` : ""}.{" "}
          {collapsed ? "Both ends and every risky part are shown; the rest is elided. " : ""}
          <button type="button" onClick={() => setWhole(!whole)}>
            {collapsed ? "Show the whole command" : "Collapse the command"}
          </button>
        </p>
      ) : null}
      <pre
        className={`code-block approval-command${collapsed ? " collapsed" : ""}`}
        data-testid="approval-command"
        aria-label={`${subject.name}${subject.language ? ` (${subject.language})` : ""}, risky parts highlighted`}
      >
        {pieces.map((piece, i) =>
          piece.kind === "risky" ? (
            <mark key={i} className="risky">
              {piece.text}
            </mark>
          ) : piece.kind === "elided" ? (
            <span key={i} className="elided">{` ⋯ ${piece.chars.toLocaleString()} characters not shown ⋯ `}</span>
          ) : (
            <span key={i}>{piece.text}</span>
          ),
        )}
      </pre>
    </>
  );
}

function DataRow({ label, data }: { label: string; data: HeldAction["stdin"] }) {
  if (data === null) return null;
  return (
    <>
      <dt>{label}</dt>
      <dd>
        {data.bytes === 0 ? (
          "none"
        ) : (
          <>
            {data.bytes} bytes, sha256 <Code>{data.sha256.slice(0, 16)}…</Code>
            {data.redactions > 0 ? ` (${data.redactions} redacted)` : ""}
            <Code block>
              {data.preview}
              {data.cut ? " …" : ""}
            </Code>
          </>
        )}
      </dd>
    </>
  );
}

function AllowSimilarForm({ item, onDone, onCancel }: { item: HeldAction; onDone: (text: string) => void; onCancel: () => void }) {
  const trpc = useTRPC();
  const { approveAndAllowSimilar, pending, grantNeedsPasskey } = useDecisions();
  const { ask, prompt } = useReauth();
  const proposal = useQuery({ ...trpc.approvals.proposeGrant.queryOptions({ approvalId: item.approval_id, actionHash: item.action_hash }), staleTime: Number.POSITIVE_INFINITY, retry: false });
  const [edits, setEdits] = useState<{ pattern: string; uses: string; minutes: string; maxRisk: string; cwd: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (proposal.isPending) return <Loading what="the proposed grant" />;
  if (proposal.isError) return <ErrorState>{errorText(proposal.error)}</ErrorState>;
  const p = proposal.data;
  const form = edits ?? { pattern: p.pattern, uses: String(p.uses), minutes: "60", maxRisk: p.maxRisk, cwd: p.cwd };
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => setEdits({ ...form, [key]: e.target.value });
  const prefix = `grant-${item.approval_id}`;
  const shownPattern = neutraliseOneLine(form.pattern);
  const hidden = hasInvisibleCharacters(form.pattern);
  const uses = Number(form.uses);
  const usesText = Number.isInteger(uses) && uses > 0 ? `${uses} matching action${uses === 1 ? "" : "s"}` : "matching actions";
  // At or above the hub's passkey threshold the grant itself is signed with the passkey, and the runs it covers need neither a person nor a passkey.
  const signed = grantNeedsPasskey(form.maxRisk);
  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    setError(null);
    if (hidden) {
      setError(`The pattern holds invisible or direction-changing characters (${describeInvisibleCharacters(form.pattern)}, shown escaped beside it). Write each as an escape such as \\u200b, then confirm.`);
      return;
    }
    try {
      const minutes = Number(form.minutes);
      const result = await approveAndAllowSimilar(item, {
        pattern: form.pattern.length === 0 ? null : form.pattern,
        uses: Number(form.uses),
        expiresAt: new Date(Date.now() + minutes * 60_000).toISOString(),
        maxRisk: form.maxRisk,
        cwd: form.cwd,
      });
      onDone(
        `Approved ${item.operation} on ${item.host ?? "?"} and created grant ${result.grant.id.slice(0, 8)} (${result.grant.usesRemaining} uses${result.grant.passkeySigned ? ", signed with your passkey" : ""}).`,
      );
    } catch (e) {
      // A grant needs a fresh password proof; nothing was approved yet, so ask and send the same again.
      if (needsReauth(e)) ask(() => void submit());
      else setError(e instanceof Error && e.name === "NotAllowedError" ? "The browser or authenticator cancelled the passkey signature; nothing was approved." : errorText(e));
    }
  };
  return (
    <>
      <form className="grant-form" onSubmit={(e) => void submit(e)} aria-label="Proposed grant">
        <p className="hint">
          The narrowest grant for this action: host <strong>{p.host}</strong>, operation <strong>{p.tool}</strong>, exactly this {item.subject?.name ?? "subject"}, this
          environment, stdin and working directory. Edit it, then confirm.
        </p>
        <label htmlFor={`${prefix}-pattern`}>Pattern (regular expression, anchored at both ends)</label>
        <div className="grant-pattern">
          <textarea id={`${prefix}-pattern`} rows={2} className="code" value={form.pattern} onChange={set("pattern")} spellCheck={false} aria-describedby={`${prefix}-pattern-shown`} />
          <div id={`${prefix}-pattern-shown`} className="grant-pattern-shown" data-testid="grant-pattern-shown">
            <span className="hint">Every character it matches, invisible ones as escapes:</span>
            <code className="code-block">{shownPattern.text === "" ? " " : shownPattern.text}</code>
            {hidden ? (
              <ErrorState>
                <span data-testid="grant-pattern-hidden">
                  The pattern holds invisible or direction-changing characters as themselves ({describeInvisibleCharacters(form.pattern)}); it cannot be submitted until each is written
                  as an escape (such as <code>\u200b</code>).
                </span>
              </ErrorState>
            ) : null}
          </div>
        </div>
        <div className="grant-fields">
          <div>
            <label htmlFor={`${prefix}-uses`}>Uses</label>
            <input id={`${prefix}-uses`} type="number" min={1} max={10000} required value={form.uses} onChange={set("uses")} />
          </div>
          <div>
            <label htmlFor={`${prefix}-minutes`}>Expires in (minutes)</label>
            <input id={`${prefix}-minutes`} type="number" min={1} max={129600} required value={form.minutes} onChange={set("minutes")} />
          </div>
          <div>
            <label htmlFor={`${prefix}-risk`}>Up to risk</label>
            <select id={`${prefix}-risk`} value={form.maxRisk} onChange={set("maxRisk")}>
              {["read_only", "low", "medium", "high"].map((level) => (
                <option key={level} value={level}>
                  {level}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor={`${prefix}-cwd`}>Working directory</label>
            <input id={`${prefix}-cwd`} className="code" value={form.cwd} onChange={set("cwd")} required />
          </div>
        </div>
        <dl className="grant-fixed">
          <dt>Environment</dt>
          <dd>{p.env.length === 0 ? "none (only actions without env)" : p.env.map((e) => `${e.name}=${e.value}`).join(" ")}</dd>
          <dt>Stdin</dt>
          <dd>{p.stdin === null ? "none (only actions without stdin)" : `exactly ${p.stdin.bytes} bytes, sha256 ${p.stdin.sha256.slice(0, 16)}…`}</dd>
        </dl>
        <p className="grant-consequence" data-testid="grant-consequence">
          <strong>
            With this grant, the next {usesText} on {p.host} will run with no person approving them{signed ? " and no passkey" : ""}
          </strong>{" "}
          (until {Number(form.minutes) > 0 ? `${form.minutes} minutes from now` : "it expires"}, up to {form.maxRisk} risk).
          {signed ? (
            <span data-testid="grant-passkey-note">
              {" "}
              A single {form.maxRisk} action needs your passkey; this grant is signed by it once, over its whole scope, instead of each of those runs.
            </span>
          ) : null}
        </p>
        <div className="form-row">
          <button type="submit" className="primary" disabled={pending || hidden}>
            {signed ? "Approve and sign grant with passkey" : "Approve and create grant"}
          </button>
          <button type="button" onClick={onCancel} disabled={pending}>
            Cancel
          </button>
        </div>
        {error === null ? null : <ErrorState>{error}</ErrorState>}
      </form>
      {/* The password prompt is a form of its own: outside this one. */}
      {prompt}
    </>
  );
}

export function ApprovalCard({
  item,
  nowMs,
  selected,
  onSelect,
  onMessage,
}: {
  item: HeldAction;
  nowMs: number;
  selected: boolean;
  onSelect: (on: boolean) => void;
  onMessage: (text: string) => void;
}) {
  const { approveOne, denyOne, pending, needsPasskey } = useDecisions();
  const [mode, setMode] = useState<"idle" | "deny" | "similar">("idle");
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const titleId = `approval-title-${item.approval_id}`;
  const where = `${item.operation} on ${item.host ?? "?"}`;

  const run = async (fn: () => Promise<unknown>, done: string) => {
    setError(null);
    try {
      await fn();
      onMessage(done);
    } catch (e) {
      setError(errorText(e));
    }
  };

  return (
    <article className={`card approval risk-border-${item.risk}`} id={item.approval_id} data-action-id={item.action_id} data-requested-at={item.requested_at} aria-labelledby={titleId}>
      <header className="approval-head">
        <input type="checkbox" className="approval-select" aria-label={`Select ${where}`} checked={selected} onChange={(e) => onSelect(e.target.checked)} />
        <h2 className="card-title" id={titleId}>
          {where}
        </h2>
        <RiskBadge level={item.risk} />
        <span className="approval-deadline" title={`deadline ${item.deadline}`}>
          {timeLeft(item.deadline, nowMs)}
        </span>
      </header>
      <p className="muted approval-who">
        Requested by <strong>{requesterText(item)}</strong> · {item.session} · via {item.channel} · {new Date(item.requested_at).toLocaleTimeString()}
      </p>
      {item.first_approved_at === null ? null : (
        <p className="approval-first" data-testid="approval-first">
          Approved once at {new Date(item.first_approved_at).toLocaleTimeString()}: four-eyes is on for critical actions, so a second, different approver must approve it.
        </p>
      )}
      {item.subject === null ? null : <Subject subject={item.subject} />}
      <dl className="approval-details">
        <dt>Host</dt>
        <dd>{item.host ?? "?"}</dd>
        {item.cwd === null ? null : (
          <>
            <dt>Working directory</dt>
            <dd>
              <Code>{item.cwd}</Code>
            </dd>
          </>
        )}
        {item.env === null ? null : (
          <>
            <dt>Environment</dt>
            <dd>
              {item.env.length === 0 ? (
                "none"
              ) : (
                <ul className="approval-env">
                  {item.env.map((e, i) => (
                    <li key={i}>
                      <Code>{e.name === "" ? e.value : `${e.name}=${e.value}`}</Code>
                    </li>
                  ))}
                </ul>
              )}
            </dd>
          </>
        )}
        <DataRow label="Stdin" data={item.stdin} />
        <DataRow label="Content" data={item.content} />
        <dt>Timeout</dt>
        <dd>
          {item.timeout.enforced_s === null ? "?" : `${item.timeout.enforced_s} s`}
          {item.timeout.asked_s === null ? "" : ` (asked ${item.timeout.asked_s} s)`}
          {item.network === null ? null : (
            <>
              {" "}
              · network <Code>{item.network}</Code>
            </>
          )}
        </dd>
        {item.host_paths.length === 0 ? null : (
          <>
            <dt>Host paths</dt>
            <dd>
              <ul className="approval-host-paths" data-testid="approval-host-paths">
                {item.host_paths.map((m) => (
                  <li key={m.label} className={m.mode === "rw" ? "approval-host-path-rw" : undefined}>
                    {m.text}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
        {item.other.map((o) => (
          <div key={o.name} className="contents">
            <dt>{o.name}</dt>
            <dd>
              <Code>{o.json}</Code>
            </dd>
          </div>
        ))}
        <dt>Why it was held</dt>
        <dd>
          <ul className="approval-reasons">
            {item.reasons.map((r, i) => (
              <li key={i}>
                <RiskBadge level={r.level} /> <Code>{r.rule}</Code>
                {r.line === null ? "" : ` at ${r.line}:${r.column}`}
                {r.snippet === null ? null : (
                  <>
                    {" "}
                    {/* Only reasons that raise the risk are marked, as in the command above. */}
                    {r.level === "read_only" ? (
                      <Code>
                        {r.snippet}
                        {r.snippet_cut ? "…" : ""}
                      </Code>
                    ) : (
                      <mark className="risky">
                        {r.snippet}
                        {r.snippet_cut ? "…" : ""}
                      </mark>
                    )}
                  </>
                )}{" "}
                — {r.message}
              </li>
            ))}
          </ul>
        </dd>
        <dt>Action</dt>
        <dd>
          <Code>{item.action_id}</Code>
        </dd>
        <dt>Action hash</dt>
        <dd>
          <Code>{item.action_hash}</Code>
        </dd>
      </dl>

      {mode === "deny" ? (
        <form
          className="approval-deny"
          onSubmit={(e) => {
            e.preventDefault();
            void run(() => denyOne(item, reason.trim()), `Denied ${where}.`);
          }}
        >
          <label htmlFor={`deny-reason-${item.approval_id}`}>Reason for denying (the agent receives it)</label>
          <input id={`deny-reason-${item.approval_id}`} required value={reason} onChange={(e) => setReason(e.target.value)} autoFocus />
          <div className="form-row">
            <button type="submit" className="danger" disabled={pending || reason.trim().length === 0}>
              Confirm deny
            </button>
            <button type="button" onClick={() => setMode("idle")}>
              Cancel
            </button>
          </div>
        </form>
      ) : mode === "similar" ? (
        <AllowSimilarForm item={item} onDone={onMessage} onCancel={() => setMode("idle")} />
      ) : (
        <div className="form-row approval-actions">
          <button type="button" className="primary" disabled={pending} onClick={() => void run(() => approveOne(item), `Approved ${where}.`)}>
            {needsPasskey(item) ? "Approve with passkey" : "Approve"}
          </button>
          <button type="button" className="danger" disabled={pending} onClick={() => setMode("deny")}>
            Deny…
          </button>
          {item.risk === "critical" ? (
            <span className="hint">Critical actions are never covered by a grant.</span>
          ) : (
            <button type="button" disabled={pending} onClick={() => setMode("similar")}>
              Approve and allow similar…
            </button>
          )}
        </div>
      )}
      {error === null ? null : <ErrorState>{error}</ErrorState>}
    </article>
  );
}
