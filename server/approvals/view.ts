/**
 * What a person reads before approving (issue 12: "blind approvals" — the
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
 *    a control character. C0/C1 controls, DEL, and invisible or
 *    direction-changing code points (bidi overrides that make `rm` look like
 *    something else, zero-width characters) are shown as visible `⟨ESC⟩`,
 *    `⟨U+202E⟩` tokens. The notation's own brackets `⟨ ⟦ ⟧` are escaped when
 *    the caller's text contains them, so every `⟨` on screen starts an
 *    escape and every `⟦ … ⟧` is a risky span the hub marked.
 *  - Secrets stay out of the terminal: environment values and the stdin
 *    preview pass through the guest's scrubber (agent-guest/scrub, the same
 *    patterns as job output) before they are shown; stdin is scrubbed whole
 *    before the preview is cut, so a secret straddling the cut is not half
 *    shown. The command and code are shown unscrubbed: they are what runs,
 *    and the person approving must see exactly that.
 */
import { createHash } from "node:crypto";
import { scrubBuffer } from "../../agent-guest/scrub";
import { digestOf } from "../ledger/entry";
import type { RiskReason } from "../policy/risk";

export const STDIN_PREVIEW_CHARS = 200;

const CONTROL_NAMES: Readonly<Record<number, string>> = {
  0x00: "NUL",
  0x07: "BEL",
  0x08: "BS",
  0x09: "TAB",
  0x0a: "LF",
  0x0b: "VT",
  0x0c: "FF",
  0x0d: "CR",
  0x1b: "ESC",
  0x7f: "DEL",
};

/** Code points shown as escapes: controls, invisible and direction-changing characters, and the notation's own brackets. */
function needsEscape(cp: number): boolean {
  return (
    cp < 0x20 ||
    (cp >= 0x7f && cp <= 0x9f) ||
    cp === 0xad ||
    cp === 0x061c ||
    cp === 0x180e ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x2028 && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x206f) ||
    cp === 0xfeff ||
    (cp >= 0xfff9 && cp <= 0xfffb) ||
    (cp >= 0xd800 && cp <= 0xdfff) || // a lone surrogate (invalid UTF-16)
    cp === 0x27e8 ||
    cp === 0x27e6 ||
    cp === 0x27e7
  );
}

/**
 * Caller text made safe to print: every control or invisible code point is
 * replaced by a visible token. With `keepNewlines`, LF stays a line break
 * (for multi-line commands); everything else, CR and TAB included, is shown.
 */
export function escapeForTerminal(text: string, options: { keepNewlines?: boolean } = {}): string {
  let out = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp === 0x0a && options.keepNewlines === true) out += "\n";
    else if (needsEscape(cp)) out += `⟨${CONTROL_NAMES[cp] ?? `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`}⟩`;
    else out += ch;
  }
  return out;
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
  /** The stored prepared action (`arguments`, `policy`). */
  prepared: { arguments?: Record<string, unknown>; policy?: Record<string, unknown> };
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

function requesterText(view: ApprovalView): string {
  const name = view.requester.name === null ? "?" : JSON.stringify(escapeForTerminal(view.requester.name));
  if (view.requester.kind === "token") return `agent token ${name} (${view.requester.id ?? "?"})`;
  if (view.requester.kind === "admin") return `admin ${name}`;
  return "unknown";
}

const SHOWN_APART = new Set(["host", "command", "code", "cwd", "env", "stdin", "timeout_s", "language", "content"]);

function block(lines: string[]): string[] {
  return lines.map((line) => `    │ ${line}`);
}

function dataLines(label: string, value: string): string[] {
  const bytes = Buffer.byteLength(value, "utf8");
  const digest = createHash("sha256").update(value, "utf8").digest("hex");
  if (bytes === 0) return [`  ${label}: none`];
  const scrubbed = scrubText(value);
  const cut = [...scrubbed.text].slice(0, STDIN_PREVIEW_CHARS).join("");
  const more = [...scrubbed.text].length > STDIN_PREVIEW_CHARS ? " …" : "";
  const note = scrubbed.redactions > 0 ? ` (${scrubbed.redactions} redacted)` : "";
  return [`  ${label}: ${bytes} bytes, sha256 ${digest}`, `    preview${note}: "${escapeForTerminal(cut)}"${more}`];
}

/** The lines a person reads for one held action. `now` for the time left. */
export function renderApproval(view: ApprovalView, now = new Date()): string[] {
  const args = view.prepared.arguments ?? {};
  const policy = view.prepared.policy ?? {};
  const lines: string[] = [];
  // First line: the approval id first, then what and where (scripts find a host's approval by " on HOST ").
  const state = `${view.state}${view.reason === null ? "" : ` (${escapeForTerminal(view.reason)})`}`;
  const left = view.state === "pending" ? ` (${until(view.deadline, now)})` : "";
  lines.push(`${view.approvalId}  ${view.operation} on ${escapeForTerminal(view.host ?? "?")}  risk ${view.risk}  ${state}  deadline ${view.deadline.toISOString()}${left}`);
  lines.push(`  action ${view.actionId}  (capability ${view.capability})`);
  lines.push(`  action_hash ${view.actionHash}`);
  lines.push(`  requested by ${requesterText(view)}, ${sessionLabel(view.sessionId)}, channel ${view.channel}, at ${view.requestedAt.toISOString()}`);

  const subjectName = typeof args["command"] === "string" ? "command" : typeof args["code"] === "string" ? "code" : null;
  if (subjectName !== null) {
    const text = args[subjectName] as string;
    const language = typeof args["language"] === "string" ? ` (${escapeForTerminal(args["language"])})` : "";
    lines.push(`  ${subjectName}${language}, risky spans between ⟦ ⟧:`);
    lines.push(...block(markSpans(text, view.reasons)));
  }
  if ("cwd" in args) lines.push(`  cwd: ${escapeForTerminal(String(args["cwd"]))}`);
  if ("env" in args) {
    const env = Object.entries((args["env"] ?? {}) as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (env.length === 0) lines.push("  env: none");
    else {
      lines.push(`  env (${env.length}; values scrubbed):`);
      for (const [name, value] of env) lines.push(`    ${escapeForTerminal(scrubText(`${name}=${String(value)}`).text)}`);
    }
  }
  if ("stdin" in args) lines.push(...dataLines("stdin", typeof args["stdin"] === "string" ? args["stdin"] : JSON.stringify(args["stdin"])));
  if ("content" in args) lines.push(...dataLines("content", typeof args["content"] === "string" ? args["content"] : JSON.stringify(args["content"])));
  const timeout = typeof policy["timeout_s"] === "number" ? `${policy["timeout_s"]} s` : "?";
  const network = policy["network"] === undefined ? "" : `  network ${escapeForTerminal(JSON.stringify(policy["network"]))}`;
  lines.push(`  timeout: ${timeout}${typeof args["timeout_s"] === "number" ? ` (asked ${args["timeout_s"]} s)` : ""}${network}`);
  for (const [name, value] of Object.entries(args)) {
    if (SHOWN_APART.has(name)) continue;
    lines.push(`  ${escapeForTerminal(name)}: ${escapeForTerminal(JSON.stringify(value) ?? "undefined")}`);
  }
  const source = subjectName === null ? "" : (args[subjectName] as string);
  lines.push(`  reasons (${view.reasons.length}):`);
  for (const reason of view.reasons) {
    const at = reason.span.end > reason.span.start ? ` at ${reason.span.line}:${reason.span.column}` : "";
    const snippet = reason.span.end > reason.span.start && source.length >= reason.span.end ? ` ⟦${escapeForTerminal(source.slice(reason.span.start, Math.min(reason.span.end, reason.span.start + 80)))}${reason.span.end - reason.span.start > 80 ? "…" : ""}⟧` : "";
    lines.push(`    [${reason.level}] ${escapeForTerminal(reason.rule)}${at}${snippet} — ${escapeForTerminal(reason.message)}`);
  }
  return lines;
}
