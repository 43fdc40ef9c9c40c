"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent as ReactKeyboardEvent } from "react";
import { needsReauth, useReauth } from "../../_components/reauth-prompt";
import { useTRPC } from "../../_components/trpc";
import { Code, ErrorState, Loading, RiskBadge } from "../../_components/ui";
import { errorText } from "../../_lib/errors";
import { describeInvisibleCharacters, hasInvisibleCharacters, neutraliseOneLine } from "~/server/text/terminal";
import { useDecisions } from "./decide";
import { ReachLine } from "./reach-line";
import { CONFIRM_RISKS, commandLabel, commandPreview, livenessWords, oneLine, requesterText, timeLeft } from "./summary";
import type { HeldAction } from "./types";

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
      {/* Focusable, so a command taller than its box scrolls from the keyboard too. */}
      <pre
        className={`code-block approval-command${collapsed ? " collapsed" : ""}`}
        data-testid="approval-command"
        role="group"
        tabIndex={0}
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

// eslint-disable-next-line max-lines-per-function -- the grant form's fields, its preview of what it covers and the passkey step share one draft
function AllowSimilarForm({ item, onDone, onCancel }: { item: HeldAction; onDone: (text: string, state: string) => void; onCancel: () => void }) {
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
        `Approved ${commandLabel(item)} and created grant ${result.grant.id.slice(0, 8)}${result.grant.passkeySigned ? ", signed with your passkey" : ""}: the next ${result.grant.usesRemaining} similar run${result.grant.usesRemaining === 1 ? "" : "s"} on ${p.host} will skip a person (until ${new Date(result.grant.expiresAt).toLocaleTimeString()}).`,
        result.approval.state,
      );
    } catch (e) {
      // A grant needs a fresh password proof; nothing was approved yet, so ask and send the same again.
      if (needsReauth(e)) ask(() => void submit());
      else setError(e instanceof Error && e.name === "NotAllowedError" ? "The browser or authenticator cancelled the passkey signature; nothing was approved." : errorText(e));
    }
  };
  return (
    <>
      <form
        className="grant-form"
        onSubmit={(e) => void submit(e)}
        aria-label="Proposed grant"
        onKeyDown={(e) => {
          if (e.key === "Escape" && !pending) {
            e.stopPropagation();
            onCancel();
          }
        }}
      >
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

/**
 * Which form an item has open: none, the deny reason, the grant proposal, or
 * the keyboard's second step for high and critical; `approve` asks the item
 * to approve now (the keyboard's `a` below high).
 */
export type ItemMode = "idle" | "deny" | "similar" | "confirm" | "approve";

/** What a decision made here led to, for the row that stays in place of the held action. */
export interface Decided {
  decision: "approved" | "denied";
  text: string;
}

function Reasons({ reasons }: { reasons: HeldAction["reasons"] }) {
  const shown = reasons.filter((r) => r.raises_risk);
  const folded = reasons.filter((r) => !r.raises_risk);
  const line = (r: HeldAction["reasons"][number], i: number) => (
    <li key={i}>
      <RiskBadge level={r.level} /> <Code>{r.rule}</Code>
      {r.line === null ? "" : ` at ${r.line}:${r.column}`}
      {r.snippet === null ? null : (
        <>
          {" "}
          {/* Only reasons that raise the risk are marked, as in the command above. */}
          {r.raises_risk ? (
            <mark className="risky">
              {r.snippet}
              {r.snippet_cut ? "…" : ""}
            </mark>
          ) : (
            <Code>
              {r.snippet}
              {r.snippet_cut ? "…" : ""}
            </Code>
          )}
        </>
      )}{" "}
      — {r.message}
    </li>
  );
  return (
    <>
      <ul className="approval-reasons">{shown.map(line)}</ul>
      {folded.length === 0 ? null : (
        <details className="approval-folded">
          <summary>
            {folded.length} more seen, none of {folded.length === 1 ? "it" : "them"} above read-only
          </summary>
          <ul className="approval-reasons">{folded.map(line)}</ul>
        </details>
      )}
    </>
  );
}

/**
 * One held action in the dense queue: a row (risk, command's first ~80
 * characters with risky spans marked, host, requester, deadline) that
 * expands in place to the whole prepared action, its reach and the decision
 * buttons. Every name a control or heading carries includes the command.
 */
// eslint-disable-next-line max-lines-per-function -- one held action's row and card: the decision buttons, keyboard handling and outcome share the item's state
export function ApprovalItem({
  item,
  nowMs,
  selected,
  onSelect,
  expanded,
  onToggle,
  mode,
  setMode,
  onDecided,
  onMessage,
}: {
  item: HeldAction;
  nowMs: number;
  selected: boolean;
  onSelect: (on: boolean) => void;
  expanded: boolean;
  onToggle: (open: boolean) => void;
  mode: ItemMode;
  setMode: (mode: ItemMode) => void;
  /** A decision was recorded: the parent keeps the row and moves focus on. */
  onDecided: (decided: Decided) => void;
  onMessage: (text: string) => void;
}) {
  const { approveOne, denyOne, pending, needsPasskey } = useDecisions();
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const label = commandLabel(item);
  const titleId = `approval-title-${item.approval_id}`;
  const bodyId = `approval-body-${item.approval_id}`;
  const preview = commandPreview(item);
  const passkey = needsPasskey(item);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const waitingForSecond = item.first_approved_by_you;
  const livenessId = `approval-liveness-${item.approval_id}`;
  const orphaned = item.liveness?.state === "orphaned";

  useEffect(() => {
    if (mode === "confirm") confirmRef.current?.focus();
    if (mode === "approve") {
      setMode("idle");
      if (!waitingForSecond) void approve();
    }
  }, [mode]);

  const approve = async () => {
    setError(null);
    try {
      const result = await approveOne(item);
      setMode("idle");
      if (result.state === "pending") {
        // Four-eyes: this was the first of two approvals; the item stays held for a second approver.
        onMessage(`First approval recorded for ${label}: a second, different approver must approve it.`);
        return;
      }
      onDecided({ decision: "approved", text: `Approved ${label}.` });
    } catch (e) {
      setError(e instanceof Error && e.name === "NotAllowedError" ? "The browser or authenticator cancelled the passkey signature; nothing was approved." : errorText(e));
    }
  };
  const deny = async () => {
    setError(null);
    try {
      await denyOne(item, reason.trim());
      setMode("idle");
      onDecided({ decision: "denied", text: `Denied ${label}.` });
    } catch (e) {
      setError(errorText(e));
    }
  };
  const closeOnEscape = (e: ReactKeyboardEvent) => {
    if (e.key !== "Escape" || pending) return;
    e.stopPropagation();
    setMode("idle");
    document.getElementById(titleId)?.focus();
  };

  return (
    <article
      className={`approval risk-border-${item.risk}${expanded ? " expanded" : ""}${orphaned ? " approval-orphaned" : ""}`}
      id={item.approval_id}
      data-action-id={item.action_id}
      data-requested-at={item.requested_at}
      data-risk={item.risk}
      data-liveness={item.liveness?.state ?? "unknown"}
      aria-labelledby={titleId}
      aria-describedby={livenessId}
    >
      <div className="approval-row">
        <h2 className="approval-heading">
          <button type="button" className="approval-toggle" id={titleId} aria-expanded={expanded} aria-controls={bodyId} onClick={() => onToggle(!expanded)}>
            <RiskBadge level={item.risk} />
            <span className="approval-preview">
              {item.subject === null ? (
                item.operation
              ) : (
                <code className="code">
                  {preview.pieces.map((p, i) =>
                    p.risky ? (
                      <mark key={i} className="risky">
                        {p.text}
                      </mark>
                    ) : (
                      <span key={i}>{p.text}</span>
                    ),
                  )}
                  {preview.cut ? "…" : ""}
                </code>
              )}
            </span>
            <span className="approval-host">on {item.host ?? "?"}</span>
          </button>
        </h2>
        <span className="approval-requester">{requesterText(item)}</span>
        <span className="approval-deadline" title={`deadline ${item.deadline}`}>
          {timeLeft(item.deadline, nowMs)}
        </span>
        <input type="checkbox" className="approval-select" aria-label={`Select ${label}`} checked={selected} onChange={(e) => onSelect(e.target.checked)} />
      </div>
      <p className={`approval-liveness${orphaned ? " orphaned" : ""}`} id={livenessId} data-testid="approval-liveness">
        {item.liveness === null ? "whether a client is waiting is unknown" : livenessWords(item.liveness, nowMs)}
      </p>
      {item.first_approved_at === null ? null : (
        <p className="approval-first" data-testid="approval-first">
          First approval recorded at {new Date(item.first_approved_at).toLocaleTimeString()}
          {waitingForSecond ? " (yours)" : ""}: four-eyes is on for critical actions, so a second, different approver must approve it.
        </p>
      )}
      {!expanded ? null : (
        <div className="approval-body" id={bodyId}>
          <p className="muted approval-who">
            Requested by <strong>{requesterText(item)}</strong> · {item.session} · via {item.channel} · {new Date(item.requested_at).toLocaleTimeString()}
          </p>
          {item.agent_reason === null ? null : (
            <p className="approval-agent-reason" data-testid="approval-agent-reason">
              <span className="muted">The agent&apos;s reason: </span>
              {oneLine(item.agent_reason)}
            </p>
          )}
          <ReachLine items={item.reach} />
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
                          {e.name !== "" && item.risky_env.includes(e.name) ? (
                            <mark className="risky code">{`${e.name}=${e.value}`}</mark>
                          ) : (
                            <Code>{e.name === "" ? e.value : `${e.name}=${e.value}`}</Code>
                          )}
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
              <Reasons reasons={item.reasons} />
            </dd>
          </dl>
          <details className="approval-folded">
            <summary>Action id, hash{item.folded.length === 0 ? "" : " and request key"}</summary>
            <dl className="approval-details">
              <dt>Action</dt>
              <dd>
                <Code>{item.action_id}</Code>
              </dd>
              <dt>Action hash</dt>
              <dd>
                <Code>{item.action_hash}</Code>
              </dd>
              {item.folded.map((o) => (
                <div key={o.name} className="contents">
                  <dt>{o.name}</dt>
                  <dd>
                    <Code>{o.json}</Code>
                  </dd>
                </div>
              ))}
            </dl>
          </details>

          {mode === "deny" ? (
            <form
              className="approval-deny"
              onKeyDown={closeOnEscape}
              onSubmit={(e) => {
                e.preventDefault();
                void deny();
              }}
            >
              <label htmlFor={`deny-reason-${item.approval_id}`}>Reason for denying {label} (the agent receives it)</label>
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
            <AllowSimilarForm
              item={item}
              onDone={(text, state) => {
                setMode("idle");
                if (state === "pending") onMessage(text);
                else onDecided({ decision: "approved", text });
              }}
              onCancel={() => {
                setMode("idle");
                document.getElementById(titleId)?.focus();
              }}
            />
          ) : mode === "confirm" ? (
            <div className="approval-confirm approval-actions" role="group" aria-labelledby={`confirm-${item.approval_id}`} onKeyDown={closeOnEscape} data-testid="approval-confirm">
              <p id={`confirm-${item.approval_id}`}>
                <strong>
                  Approve {label} at {item.risk} risk?
                </strong>
              </p>
              <div className="form-row">
                <button ref={confirmRef} type="button" className="danger" disabled={pending} onClick={() => void approve()}>
                  Yes, approve{passkey ? " with passkey" : ""}
                </button>
                <button type="button" onClick={() => setMode("idle")}>
                  Back
                </button>
              </div>
            </div>
          ) : (
            <div className="form-row approval-actions">
              <button
                type="button"
                className="primary"
                disabled={pending || waitingForSecond}
                aria-label={waitingForSecond ? `First approval recorded: ${label} waits for a second approver` : passkey ? `Approve with passkey: ${label}` : `Approve ${label}`}
                onClick={() => void approve()}
              >
                {waitingForSecond ? "First approval recorded" : passkey ? "Approve with passkey" : "Approve"}
              </button>
              <button type="button" className="danger" disabled={pending} aria-label={`Deny ${label}…`} onClick={() => setMode("deny")}>
                Deny…
              </button>
              {item.risk === "critical" ? (
                <span className="hint">Critical actions are never covered by a grant.</span>
              ) : (
                <button type="button" disabled={pending} aria-label={`Approve and allow similar: ${label}…`} onClick={() => setMode("similar")}>
                  Approve and allow similar…
                </button>
              )}
            </div>
          )}
          {error === null ? null : <ErrorState>{error}</ErrorState>}
        </div>
      )}
    </article>
  );
}

/** Asks the keyboard's second step for high and critical items; approves the rest at once. */
export function approveNeedsConfirmation(item: Pick<HeldAction, "risk">): boolean {
  return CONFIRM_RISKS.has(item.risk);
}
