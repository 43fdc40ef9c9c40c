/**
 * What a person reads before approving ("blind approvals" — the
 * list showed operation, host, risk and hash, but not the command, its
 * environment, stdin, working directory or who asked).
 *
 * `renderApproval` turns one held action into lines for a terminal: the
 * prepared action in full (command or code with the risky spans marked, cwd,
 * environment, stdin, timeout, every other argument), who asked (token name,
 * MCP session), the risk reasons with their positions, the deadline, the
 * action id and the action hash an approval is bound to.
 *
 * Two guarantees, each proved in view.test.ts:
 *  - Terminal-safe: no byte of caller-supplied text reaches the terminal as
 *    a control character. C0/C1 controls, DEL, and invisible,
 *    direction-changing, private-use or unassigned code points, chosen by
 *    Unicode property in server/text (bidi overrides that make `rm` look like
 *    something else, zero-width characters, tag characters, Hangul fillers,
 *    variation selectors) are shown as visible `⟨ESC⟩`,
 *    `⟨U+202E⟩` tokens. The notation's own brackets `⟨ ⟦ ⟧` are escaped when
 *    the caller's text contains them, so every `⟨` on screen starts an
 *    escape and every `⟦ … ⟧` is a risky span the hub marked.
 *  - Secrets stay out of the terminal: environment values and the stdin
 *    preview pass through the contract's scrubber (server/trust/scrub, the one
 *    the guest runs over job output) before they are shown; stdin is scrubbed whole
 *    before the preview is cut, so a secret straddling the cut is not half
 *    shown. The command and code are shown unscrubbed: they are what runs,
 *    and the person approving must see exactly that.
 */
import { createHash } from "node:crypto";
import { scrubBuffer } from "../trust/scrub";
import { digestOf } from "../ledger/entry";
import { escapeInvisible } from "../text";
import type { RiskReason } from "../policy/risk";
import type { ApprovalListing } from "./approvals";
import { livenessText, type Liveness } from "./liveness";
import { ROLLBACK_OPERATION, type HostPathEntry } from "../trust/host-paths";

export const STDIN_PREVIEW_CHARS = 200;

/**
 * Caller text made safe to print: server/text's one escaping function in its
 * named notation — every control, invisible, direction-changing, private-use
 * or unassigned code point (by Unicode property) and the notation's own
 * brackets `⟨ ⟦ ⟧` become visible tokens. With `keepNewlines`, LF stays a
 * line break (for multi-line commands); everything else, CR and TAB
 * included, is shown.
 */
export function escapeForTerminal(text: string, options: { keepNewlines?: boolean } = {}): string {
  return escapeInvisible(text, { keep: options.keepNewlines === true ? "lf" : "none", notation: "named" }).text;
}

/** Text through the guest's scrubber (the same patterns as job output). */
export function scrubText(text: string): { text: string; redactions: number } {
  const { output, report } = scrubBuffer(Buffer.from(text, "utf8"));
  return { text: output.toString("utf8"), redactions: report.count };
}

/** Reasons that raise the risk (read-only ones only list what was seen) and point at text. */
function riskySpans(reasons: readonly RiskReason[], length: number): Array<[number, number]> {
  const spans = reasons
    .filter((r) => r.level !== "read_only" && r.span.end > r.span.start && r.span.start >= 0 && r.span.end <= length)
    .map((r): [number, number] => [r.span.start, r.span.end])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged: Array<[number, number]> = [];
  for (const [start, end] of spans) {
    const last = merged[merged.length - 1];
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

/** The text with each risky span between ⟦ ⟧, escaped, one string per line. */
export function markSpans(text: string, reasons: readonly RiskReason[]): string[] {
  let out = "";
  let at = 0;
  for (const [start, end] of riskySpans(reasons, text.length)) {
    out += escapeForTerminal(text.slice(at, start), { keepNewlines: true });
    out += `⟦${escapeForTerminal(text.slice(start, end), { keepNewlines: true })}⟧`;
    at = end;
  }
  out += escapeForTerminal(text.slice(at), { keepNewlines: true });
  return out.split("\n");
}

export interface ApprovalView {
  approvalId: string;
  actionId: string;
  actionHash: string;
  state: string;
  reason: string | null;
  /** Four-eyes for critical: when the first of two approvers approved (absent/null until then). */
  firstApprovedAt?: Date | null;
  deadline: Date;
  requestedAt: Date;
  channel: string;
  operation: string;
  capability: string;
  host: string | null;
  risk: string;
  reasons: RiskReason[];
  requester: { kind: "token" | "admin" | "unknown"; id: string | null; name: string | null };
  sessionId: string | null;
  /** The stored prepared action (`arguments`, `policy`, whether the operation is `mutating`, the agent's `reason`). */
  prepared: { arguments?: Record<string, unknown>; policy?: Record<string, unknown>; mutating?: unknown; reason?: unknown };
  /** The host paths the host last reported: who a rw label's files belong to. Absent or null: unknown. */
  hostPaths?: readonly HostPathEntry[] | null;
  /** Whether a client is still waiting on it (liveness.ts); absent for a view built without it. */
  liveness?: Liveness;
}

/** Stdin (or fs_write content) as a person sees it: size, digest, and a scrubbed preview. */
export interface DataPreview {
  bytes: number;
  sha256: string;
  /** Scrubbed whole, then cut to STDIN_PREVIEW_CHARS, then made visible (escapeForTerminal). */
  preview: string;
  /** More text follows the preview. */
  cut: boolean;
  /** How many secrets the scrubber replaced (in the whole text). */
  redactions: number;
}

/**
 * The prepared action a person reads before deciding, as structured data:
 * the ONE builder behind the terminal view (`renderApproval`, the CLI) and
 * the browser's approvals page (tRPC `approvals.list`). Every string that
 * came from a caller is already visible-safe (`escapeForTerminal`: control,
 * invisible and bidi code points as tokens), env values and stdin are
 * scrubbed; the command/code is not scrubbed (it is what runs).
 */
export interface PreparedActionView {
  approval_id: string;
  action_id: string;
  action_hash: string;
  state: string;
  /** Visible-safe decision reason (an admin's, or "token revoked"). */
  reason: string | null;
  deadline: string;
  requested_at: string;
  /** Four-eyes for critical: when the first approver approved; a second, different one must still approve. */
  first_approved_at: string | null;
  channel: string;
  operation: string;
  capability: string;
  host: string | null;
  risk: string;
  /** Who asked; `name` is visible-safe. */
  requester: { kind: "token" | "admin" | "unknown"; id: string | null; name: string | null };
  /** A short label of the MCP session (never the session id). */
  session: string;
  /** Whether a client is still waiting on it; null when unknown. */
  liveness: Liveness | null;
  /** The agent's own words for why it asks (visible-safe), or null when it gave none. */
  agent_reason: string | null;
  /** The command or code with the risky spans (every reason above read_only, merged) flagged. */
  subject: { name: "command" | "code"; language: string | null; segments: Array<{ text: string; risky: boolean }> } | null;
  cwd: string | null;
  /** Null when the action carries no env argument; values scrubbed (the `NAME=value` pair goes through the scrubber). */
  env: Array<{ name: string; value: string }> | null;
  /** Null when absent; `bytes: 0` when empty. */
  stdin: DataPreview | null;
  content: DataPreview | null;
  /** The timeout the sandbox policy enforces, and what the caller asked. */
  timeout: { enforced_s: number | null; asked_s: number | null };
  /** The compiled network policy as JSON (visible-safe), or null. */
  network: string | null;
  /**
   * What each host path the policy mounts becomes for the job, one sentence
   * each ("/srv/app becomes writable as uid 1000, gid 1000 (label app)"),
   * sorted by label; empty when none.
   */
  host_paths: Array<{ label: string; path: string; mode: string; text: string }>;
  /** Every other prepared argument as JSON (visible-safe). */
  other: Array<{ name: string; json: string }>;
  /** Arguments that change nothing the workload does (`idempotency_key`), as JSON: a browser folds them away. */
  folded: Array<{ name: string; json: string }>;
  /**
   * As whom and with what reach the action runs, one short phrase per fact,
   * from the compiled policy: the lease user, the workspace mode, the network
   * in words, the cgroup limits and timeout. A list so that more facts (host
   * paths) join as items.
   */
  reach: Array<{ key: string; text: string }>;
  /** Names of env entries a reason that raises the risk is about (shown highlighted like risky command spans). */
  risky_env: string[];
  /** `raises_risk`: the reason is at or above the hold threshold (anything above read_only is held); the rest only list what was seen. */
  reasons: Array<{ level: string; rule: string; message: string; line: number | null; column: number | null; snippet: string | null; snippet_cut: boolean; raises_risk: boolean }>;
}

function until(deadline: Date, now: Date): string {
  const ms = deadline.getTime() - now.getTime();
  if (ms <= 0) return "passed";
  const s = Math.ceil(ms / 1000);
  return `in ${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
}

/** A short, stable name for an MCP session (the same digest prefix HOST_BUSY shows); never the id itself. */
export function sessionLabel(sessionId: string | null): string {
  return sessionId === null ? "no session" : `session ${digestOf(sessionId).slice(7, 15)}`;
}

const SHOWN_APART = new Set(["host", "command", "code", "cwd", "env", "stdin", "timeout_s", "language", "content", "mounts"]);
/** Arguments that only name the request (a retry continues the same action): nothing a person weighs. */
const FOLDED = new Set(["idempotency_key"]);

/** 1 GiB, 512 MiB, 300 KiB: binary units, as the ceiling file writes them. */
export function bytesInWords(bytes: number): string {
  const units: Array<[string, number]> = [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]];
  for (const [unit, size] of units) {
    if (bytes >= size) {
      const value = bytes / size;
      return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
    }
  }
  return `${bytes} B`;
}

/** The compiled network policy in words: "no network", or where the workload may connect. */
export function networkInWords(network: unknown): string {
  const n = network as { mode?: unknown; egress?: unknown } | null | undefined;
  if (n === null || n === undefined || n.mode === "none") return "no network";
  if (n.mode === "egress" && Array.isArray(n.egress)) {
    const rules = n.egress.filter((r): r is string => typeof r === "string").map((r) => escapeForTerminal(r));
    if (rules.length === 0) return "no network";
    const shown = rules.slice(0, 4).join(", ");
    return `network only to ${shown}${rules.length > 4 ? ` and ${rules.length - 4} more` : ""}`;
  }
  // An unknown shape is shown as it is, never guessed into words.
  return `network ${escapeForTerminal(JSON.stringify(network))}`;
}

/** A rollback's reach: the host path label it restores (its one mount), not the workspace, which it never touches. */
function rollbackReach(prepared: { arguments?: Record<string, unknown>; policy?: Record<string, unknown> }): Array<{ key: string; text: string }> {
  const label = prepared.arguments?.["label"];
  const mounts = Array.isArray(prepared.policy?.["mounts"]) ? (prepared.policy["mounts"] as Array<{ label?: unknown; path?: unknown }>) : [];
  const mount = mounts.find((m) => m.label === label);
  const where = mount === undefined ? "" : ` (${escapeForTerminal(String(mount.path))})`;
  return [
    { key: "user", text: "the guest restores it itself; nothing is launched" },
    { key: "host_path", text: `host path label ${escapeForTerminal(String(label))}${where} restored; the workspace is not touched` },
  ];
}

/**
 * As whom and with what reach: every held action runs in the sandbox as the
 * lease's own unprivileged uid (docs/design.md#enforcement); a mutating operation
 * holds the host's write lease (workspace read-write), anything else an
 * observe lease (read-only). A rollback launches nothing: it names the host
 * path label it restores.
 */
export function reachOf(prepared: { arguments?: Record<string, unknown>; mutating?: unknown; policy?: Record<string, unknown> }, operation?: string): Array<{ key: string; text: string }> {
  const policy = prepared.policy ?? {};
  const num = (key: string): number | null => (typeof policy[key] === "number" ? (policy[key] as number) : null);
  if (operation === ROLLBACK_OPERATION) return rollbackReach(prepared);
  const items: Array<{ key: string; text: string }> = [{ key: "user", text: "runs as an unprivileged lease user" }];
  if (typeof prepared.mutating === "boolean") items.push({ key: "workspace", text: prepared.mutating ? "workspace read-write" : "workspace read-only" });
  items.push({ key: "network", text: networkInWords(policy["network"]) });
  const memory = num("memory_bytes");
  const pids = num("pids_limit");
  const timeout = num("timeout_s");
  const limits = [memory === null ? null : bytesInWords(memory), pids === null ? null : `${pids} procs`, timeout === null ? null : `${timeout} s`].filter((x): x is string => x !== null);
  if (limits.length > 0) items.push({ key: "limits", text: limits.join(" / ") });
  return items;
}

/** Env entries named by a reason that raises the risk (server/policy/risk/environment.ts: "environment variable NAME …"). */
function riskyEnvNames(env: Record<string, unknown>, reasons: readonly RiskReason[]): string[] {
  return Object.keys(env)
    .filter((name) => reasons.some((r) => r.level !== "read_only" && r.rule.startsWith("env.") && (r.message.startsWith(`environment variable ${name} `) || r.message.startsWith(`environment variable ${name}:`))))
    .sort()
    .map((name) => escapeForTerminal(name));
}

/**
 * The policy's mounts as sentences. A rw label's files belong on the host to
 * the label's owner from the host's report (or the directory's own owner
 * when it names none); a rollback says which snapshot replaces the tree.
 */
export function hostPathLines(operation: string, args: Record<string, unknown>, policy: Record<string, unknown>, reported: readonly HostPathEntry[] | null | undefined): PreparedActionView["host_paths"] {
  const mounts = Array.isArray(policy["mounts"]) ? (policy["mounts"] as Array<{ label?: unknown; path?: unknown; mode?: unknown }>) : [];
  return mounts.map((mount) => {
    const label = escapeForTerminal(String(mount.label));
    const path = escapeForTerminal(String(mount.path));
    const mode = mount.mode === "rw" ? "rw" : "ro";
    const entry = reported?.find((candidate) => candidate.label === mount.label);
    const owner = entry?.owner === undefined ? "as the directory's owner on the host" : `as uid ${entry.owner.uid}, gid ${entry.owner.gid}`;
    const budget = entry?.max_bytes === undefined ? "" : `, snapshot budget ${entry.max_bytes} bytes`;
    const text =
      operation === ROLLBACK_OPERATION
        ? `${path} is restored to snapshot ${escapeForTerminal(String(args["snapshot_id"]))}, replacing everything written since (label ${label})`
        : mode === "rw"
          ? `${path} becomes writable ${owner} (label ${label}; snapshotted before the job runs${budget})`
          : `${path} becomes readable (label ${label})`;
    return { label, path, mode, text };
  });
}

function dataPreview(value: string): DataPreview {
  const bytes = Buffer.byteLength(value, "utf8");
  const sha256 = createHash("sha256").update(value, "utf8").digest("hex");
  if (bytes === 0) return { bytes, sha256, preview: "", cut: false, redactions: 0 };
  const scrubbed = scrubText(value);
  const chars = [...scrubbed.text];
  return { bytes, sha256, preview: escapeForTerminal(chars.slice(0, STDIN_PREVIEW_CHARS).join("")), cut: chars.length > STDIN_PREVIEW_CHARS, redactions: scrubbed.redactions };
}

/** The text split at the risky spans, each piece visible-safe (newlines kept). */
export function riskySegments(text: string, reasons: readonly RiskReason[]): Array<{ text: string; risky: boolean }> {
  const segments: Array<{ text: string; risky: boolean }> = [];
  let at = 0;
  const push = (piece: string, risky: boolean): void => {
    if (piece.length > 0) segments.push({ text: escapeForTerminal(piece, { keepNewlines: true }), risky });
  };
  for (const [start, end] of riskySpans(reasons, text.length)) {
    push(text.slice(at, start), false);
    push(text.slice(start, end), true);
    at = end;
  }
  push(text.slice(at), false);
  return segments;
}

/** Builds what a person reads for one held action (terminal and browser alike). */
export function buildApprovalView(view: ApprovalView): PreparedActionView {
  const args = view.prepared.arguments ?? {};
  const policy = view.prepared.policy ?? {};
  const subjectName = typeof args["command"] === "string" ? "command" : typeof args["code"] === "string" ? "code" : null;
  const source = subjectName === null ? "" : (args[subjectName] as string);
  const asText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));
  let env: PreparedActionView["env"] = null;
  if ("env" in args) {
    env = Object.entries((args["env"] ?? {}) as Record<string, unknown>)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, value]) => {
        // The pair is scrubbed whole: some patterns key on the name (GITHUB_TOKEN=…).
        const pair = scrubText(`${name}=${String(value)}`).text;
        const shown = pair.startsWith(`${name}=`) ? { name, value: pair.slice(name.length + 1) } : { name: "", value: pair };
        return { name: escapeForTerminal(shown.name), value: escapeForTerminal(shown.value) };
      });
  }
  return {
    approval_id: view.approvalId,
    action_id: view.actionId,
    action_hash: view.actionHash,
    state: view.state,
    reason: view.reason === null ? null : escapeForTerminal(view.reason),
    deadline: view.deadline.toISOString(),
    requested_at: view.requestedAt.toISOString(),
    first_approved_at: view.firstApprovedAt == null ? null : view.firstApprovedAt.toISOString(),
    channel: view.channel,
    operation: view.operation,
    capability: view.capability,
    host: view.host === null ? null : escapeForTerminal(view.host),
    risk: view.risk,
    requester: { ...view.requester, name: view.requester.name === null ? null : escapeForTerminal(view.requester.name) },
    session: sessionLabel(view.sessionId),
    liveness: view.liveness ?? null,
    agent_reason: typeof view.prepared.reason === "string" ? escapeForTerminal(view.prepared.reason) : null,
    subject:
      subjectName === null
        ? null
        : { name: subjectName, language: typeof args["language"] === "string" ? escapeForTerminal(args["language"]) : null, segments: riskySegments(source, view.reasons) },
    cwd: "cwd" in args ? escapeForTerminal(String(args["cwd"])) : null,
    env,
    stdin: "stdin" in args ? dataPreview(asText(args["stdin"])) : null,
    content: "content" in args ? dataPreview(asText(args["content"])) : null,
    timeout: { enforced_s: typeof policy["timeout_s"] === "number" ? policy["timeout_s"] : null, asked_s: typeof args["timeout_s"] === "number" ? args["timeout_s"] : null },
    network: policy["network"] === undefined ? null : escapeForTerminal(JSON.stringify(policy["network"])),
    host_paths: hostPathLines(view.operation, args, policy, view.hostPaths),
    other: Object.entries(args)
      .filter(([name]) => !SHOWN_APART.has(name) && !FOLDED.has(name))
      .map(([name, value]) => ({ name: escapeForTerminal(name), json: escapeForTerminal(JSON.stringify(value) ?? "undefined") })),
    folded: Object.entries(args)
      .filter(([name]) => FOLDED.has(name))
      .map(([name, value]) => ({ name: escapeForTerminal(name), json: escapeForTerminal(JSON.stringify(value) ?? "undefined") })),
    reach: reachOf(view.prepared, view.operation),
    risky_env: "env" in args ? riskyEnvNames((args["env"] ?? {}) as Record<string, unknown>, view.reasons) : [],
    reasons: view.reasons.map((reason) => {
      const spanned = reason.span.end > reason.span.start;
      const inside = spanned && source.length >= reason.span.end;
      return {
        level: reason.level,
        rule: escapeForTerminal(reason.rule),
        message: escapeForTerminal(reason.message),
        line: spanned ? reason.span.line : null,
        column: spanned ? reason.span.column : null,
        snippet: inside ? escapeForTerminal(source.slice(reason.span.start, Math.min(reason.span.end, reason.span.start + 80))) : null,
        snippet_cut: inside && reason.span.end - reason.span.start > 80,
        raises_risk: reason.level !== "read_only",
      };
    }),
  };
}

function requesterText(view: PreparedActionView): string {
  const name = view.requester.name === null ? "?" : JSON.stringify(view.requester.name);
  if (view.requester.kind === "token") return `agent token ${name} (${view.requester.id ?? "?"})`;
  if (view.requester.kind === "admin") return `admin ${name}`;
  return "unknown";
}

function block(lines: string[]): string[] {
  return lines.map((line) => `    │ ${line}`);
}

function dataLines(label: string, data: DataPreview): string[] {
  if (data.bytes === 0) return [`  ${label}: none`];
  const note = data.redactions > 0 ? ` (${data.redactions} redacted)` : "";
  return [`  ${label}: ${data.bytes} bytes, sha256 ${data.sha256}`, `    preview${note}: "${data.preview}"${data.cut ? " …" : ""}`];
}

/** The lines a person reads for one held action. `now` for the time left. */
export function renderApproval(input: ApprovalView, now = new Date()): string[] {
  const view = buildApprovalView(input);
  const lines: string[] = [];
  // First line: the approval id first, then what and where (scripts find a host's approval by " on HOST ").
  const state = `${view.state}${view.reason === null ? "" : ` (${view.reason})`}`;
  const left = view.state === "pending" ? ` (${until(input.deadline, now)})` : "";
  lines.push(`${view.approval_id}  ${view.operation} on ${view.host ?? "?"}  risk ${view.risk}  ${state}  deadline ${view.deadline}${left}`);
  lines.push(`  action ${view.action_id}  (capability ${view.capability})`);
  lines.push(`  action_hash ${view.action_hash}`);
  lines.push(`  requested by ${requesterText(view)}, ${view.session}, channel ${view.channel}, at ${view.requested_at}`);
  if (view.agent_reason !== null) lines.push(`  agent's reason: ${view.agent_reason}`);
  if (view.liveness !== null && view.state === "pending") lines.push(`  ${livenessText(view.liveness, (iso) => `${iso.slice(11, 19)} UTC`)}`);
  if (view.first_approved_at !== null) lines.push(`  approved once at ${view.first_approved_at}; four-eyes: a second, different approver must approve`);
  if (view.subject !== null) {
    const language = view.subject.language === null ? "" : ` (${view.subject.language})`;
    lines.push(`  ${view.subject.name}${language}, risky spans between ⟦ ⟧:`);
    lines.push(...block(view.subject.segments.map((s) => (s.risky ? `⟦${s.text}⟧` : s.text)).join("").split("\n")));
  }
  if (view.cwd !== null) lines.push(`  cwd: ${view.cwd}`);
  if (view.env !== null) {
    if (view.env.length === 0) lines.push("  env: none");
    else {
      lines.push(`  env (${view.env.length}; values scrubbed):`);
      for (const { name, value } of view.env) lines.push(`    ${name === "" ? value : `${name}=${value}`}`);
    }
  }
  if (view.stdin !== null) lines.push(...dataLines("stdin", view.stdin));
  if (view.content !== null) lines.push(...dataLines("content", view.content));
  lines.push(`  reach: ${view.reach.map((item) => item.text).join(" · ")}`);
  const timeout = view.timeout.enforced_s === null ? "?" : `${view.timeout.enforced_s} s`;
  const network = view.network === null ? "" : `  network ${view.network}`;
  lines.push(`  timeout: ${timeout}${view.timeout.asked_s === null ? "" : ` (asked ${view.timeout.asked_s} s)`}${network}`);
  if (view.host_paths.length > 0) {
    lines.push(`  host paths (${view.host_paths.length}):`);
    for (const mount of view.host_paths) lines.push(`    ${mount.text}`);
  }
  for (const { name, json } of [...view.other, ...view.folded]) lines.push(`  ${name}: ${json}`);
  lines.push(`  reasons (${view.reasons.length}):`);
  for (const reason of view.reasons) {
    const at = reason.line === null ? "" : ` at ${reason.line}:${reason.column}`;
    const snippet = reason.snippet === null ? "" : ` ⟦${reason.snippet}${reason.snippet_cut ? "…" : ""}⟧`;
    lines.push(`    [${reason.level}] ${reason.rule}${at}${snippet} — ${reason.message}`);
  }
  return lines;
}

/** A listing from `pageApprovals` / `showApproval` as the builder's input. */
export function approvalViewOf(a: ApprovalListing): ApprovalView {
  return {
    approvalId: a.id,
    actionId: a.action_id,
    actionHash: a.action_hash,
    state: a.state,
    reason: a.reason,
    deadline: new Date(a.deadline),
    requestedAt: new Date(a.requested_at),
    firstApprovedAt: a.first_approved_at === null ? null : new Date(a.first_approved_at),
    channel: a.channel,
    operation: a.operation,
    capability: a.capability,
    host: a.host,
    risk: a.risk,
    reasons: Array.isArray(a.reasons) ? (a.reasons as RiskReason[]) : [],
    requester: a.requester,
    sessionId: a.session_id,
    prepared: a.prepared,
    hostPaths: a.host_paths,
    liveness: a.liveness,
  };
}
