/**
 * The text content of tool results: what a model reads. An agent pays for
 * every byte it reads, so the text leads with what it acts on (an action's
 * exit status and output, what to call next) and points at the rest; the
 * whole result is always the result's `structuredContent` (result.ts), which
 * these functions only read. Everything here is pure and bounded except the
 * output an action returned, which is the point of the call.
 */

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string {
  return typeof value === "string" ? value : value === null || value === undefined ? "" : String(value);
}

/** At most `max` characters of a one-line rendering (reasons, messages): newlines folded, the cut marked. */
function oneLine(value: unknown, max: number): string {
  const flat = str(value).replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** How an agent continues with an action: the call to make, with its argument spelled out. */
export function waitCall(actionId: string): string {
  return `approval_wait {"action_id":"${actionId}"}`;
}

/** Lines past this many are summarised as a count (listing tools stay bounded whatever the page size). */
const MAX_LIST_LINES = 50;

function boundedLines(lines: string[], noun: string): string[] {
  if (lines.length <= MAX_LIST_LINES) return lines;
  return [...lines.slice(0, MAX_LIST_LINES), `… ${lines.length - MAX_LIST_LINES} more ${noun} in structuredContent`];
}

function pagingLine(s: Json, noun: string): string {
  const shown = Array.isArray(s[noun]) ? (s[noun] as unknown[]).length : 0;
  const offset = Number(s.offset ?? 0);
  const base = shown === 0 ? `no ${noun} at offset ${offset} (total ${str(s.total)})` : `${noun} ${offset + 1}–${offset + shown} of ${str(s.total)}`;
  return s.has_more === true ? `${base}; more with offset=${offset + shown}` : base;
}

// ---------------------------------------------------------------------------
// Actions (capability operations and approval_wait)

function exitLine(result: Json): string {
  const exit = isRecord(result.exit) ? result.exit : null;
  const parts: string[] = [];
  if (exit !== null) {
    if (exit.code !== null && exit.code !== undefined) parts.push(`exit ${str(exit.code)}`);
    if (exit.signal !== null && exit.signal !== undefined) parts.push(`killed by ${str(exit.signal)}`);
    if (exit.timed_out === true) parts.push("timed out");
    if (exit.cancelled === true) parts.push("stopped by a cancel");
    if (exit.oom_killed === true) parts.push("out of memory");
  }
  if (parts.length === 0) parts.push("no exit status");
  return `${str(result.state)}: ${parts.join(", ")}`;
}

/** One stream: its header says when what follows is not all of it. */
function streamBlock(name: "stdout" | "stderr", output: Json): string | null {
  const text = str(output[name]);
  const total = Number(output[`${name}_bytes`] ?? 0);
  const cutByHost = output[`${name}_truncated`] === true;
  if (text.length === 0 && total === 0) return null;
  const shown = Buffer.byteLength(text, "utf8");
  const notes: string[] = [];
  if (shown < total) notes.push(`first ${shown} of ${total} bytes`);
  if (cutByHost) notes.push("truncated on the host at its output limit");
  const header = notes.length === 0 ? `[${name}]` : `[${name}, ${notes.join("; ")}]`;
  return `${header}\n${text.endsWith("\n") || text.length === 0 ? text : `${text}\n`}`;
}

/**
 * The short reference line: decision, risk, where writes went, evidence,
 * receipt, and where the rest is — the action id once, inside the call that
 * replays the stored result.
 */
function referenceLine(s: Json, sandbox: Json | null): string {
  const risk = isRecord(s.risk) ? s.risk : {};
  const parts = [`${str(s.decision)}, risk ${str(risk.level)}`];
  if (s.replayed === true) parts.push("replayed");
  const lease = isRecord(s.sandbox) ? s.sandbox : null;
  // Said in words: a model must not read "allowed at once" as "judged harmless".
  if (lease?.reason === "observe_scope") parts.push("ran under observe, not judged read-only (token observe scope any; pass lease \"write\" to be judged)");
  // Auto-allowed commands run under an observe lease; a model that tried to write needs to know why nothing stuck.
  if (sandbox?.workspace === "read-only") parts.push("observe lease (/work read-only)");
  if (sandbox?.terminal_controls === true) parts.push("output has terminal control sequences");
  const evidence = isRecord(s.evidence) ? s.evidence : null;
  if (evidence !== null) {
    const redactions = isRecord(evidence.redactions) ? Number(evidence.redactions.count ?? 0) : 0;
    const denials = Array.isArray(evidence.denials) ? evidence.denials.length + Number(evidence.denials_dropped ?? 0) : 0;
    let line = `evidence ${str(evidence.digest).slice(0, 19)} tier ${str(evidence.tier) || "none"}`;
    if (redactions > 0) line += `, ${redactions} redacted`;
    if (denials > 0) line += `, ${denials} kernel denials`;
    parts.push(line);
  }
  const receipt = isRecord(s.receipt) ? s.receipt : null;
  if (s.status === "completed") parts.push(receipt === null ? "receipt pending (audit_checkpoint)" : `receipt leaf ${str(receipt.leaf_index)}/${str(receipt.tree_size)}`);
  parts.push(s.status === "completed" ? `rest: structuredContent, or ${waitCall(str(s.action_id))}` : "rest: structuredContent");
  return `[ref] ${parts.join("; ")}`;
}

/**
 * A completed action: status, output, the operation's own structured
 * result (fs_*, apk_*: it is output too), then one reference line. A
 * dispatched one says plainly that no result exists yet and what to call.
 */
export function actionText(s: Json): string {
  if ((s.status !== "completed" && s.status !== "cancelled") || !isRecord(s.result)) {
    const job = isRecord(s.job) ? s.job : {};
    return [
      `${str(s.operation)} on ${str(s.host)} is queued for the host; no result yet (job deadline ${str(job.deadline)}).`,
      `next: ${waitCall(str(s.action_id))} waits for the result.`,
      referenceLine(s, null),
    ].join("\n");
  }
  const result = s.result;
  const output = isRecord(result.output) ? result.output : {};
  const blocks = [exitLine(result)];
  const stdout = streamBlock("stdout", output);
  const stderr = streamBlock("stderr", output);
  if (stdout === null && stderr === null) blocks.push("(no output)");
  for (const block of [stdout, stderr]) if (block !== null) blocks.push(block.slice(0, -1));
  let sandbox: Json | null = null;
  if (isRecord(result.structured)) {
    const { sandbox: report, ...own } = result.structured;
    if (Object.keys(own).length > 0) blocks.push(`[result] ${JSON.stringify(own)}`);
    if (isRecord(report)) sandbox = report;
  }
  blocks.push(referenceLine(s, sandbox));
  return blocks.join("\n");
}

/** `action_cancel`: what was cancelled, and for a stopped run what ran until then. */
export function actionCancelText(s: Json): string {
  const head = `action ${str(s.action_id)}: ${str(s.state)} (${s.stage === "running" ? "it was running; its host was told to stop it" : `${str(s.stage)}: it never ran`}).`;
  if (!isRecord(s.result)) return [head, str(s.hint)].join("\n");
  const output = isRecord(s.result.output) ? s.result.output : {};
  const blocks = [head, exitLine(s.result)];
  for (const block of [streamBlock("stdout", output), streamBlock("stderr", output)]) if (block !== null) blocks.push(block.slice(0, -1));
  blocks.push(str(s.hint));
  return blocks.join("\n");
}

// ---------------------------------------------------------------------------
// Errors

function reasonsLine(reasons: unknown): string | null {
  if (!Array.isArray(reasons) || reasons.length === 0) return null;
  const shown = reasons.slice(0, 3).map((r) => (isRecord(r) ? `${str(r.rule)}${r.message ? ` (${oneLine(r.message, 60)})` : ""}` : oneLine(r, 60)));
  return `why: ${shown.join("; ")}${reasons.length > 3 ? `; +${reasons.length - 3} more` : ""}`;
}

/**
 * `CODE: message` and the hint; a held call (APPROVAL_PENDING with an
 * action id) also says what to call next, until when, and why it was held.
 */
export function errorText(s: Json): string {
  const lines = [`${str(s.code)}: ${str(s.message)}`];
  if (s.code === "APPROVAL_PENDING" && typeof s.action_id === "string") {
    // The message already names the approval deadline.
    lines.push(`next: ${waitCall(s.action_id)} waits for the decision, then returns the result`);
    const why = reasonsLine(s.reasons);
    if (why !== null) lines.push(why);
  }
  if (str(s.hint) !== "") lines.push(`hint: ${str(s.hint)}`);
  return lines.join("\n");
}

// ---------------------------------------------------------------------------
// The hub's own tools

export function healthText(s: Json): string {
  const db = isRecord(s.database) ? s.database : {};
  const migrations = isRecord(db.migrations) ? db.migrations : {};
  const ledger = isRecord(s.ledger) ? s.ledger : {};
  const head = isRecord(ledger.head) ? ledger.head : null;
  const integrator = isRecord(ledger.integrator) ? ledger.integrator : {};
  const hosts = isRecord(s.hosts) ? s.hosts : {};
  const lines = [
    `hub ${str(s.status)}, version ${str(s.version)}, up ${str(s.uptime_s)} s`,
    `database ${str(db.kind)}, migrations ${str(migrations.applied)}/${str(migrations.known)}`,
    `ledger ${head === null ? "has no checkpoint yet" : `head ${str(head.size)} (checkpoint ${str(head.checkpoint_age_s)} s old)`}, integrator ${str(integrator.state)}${integrator.detail ? ` (${oneLine(integrator.detail, 120)})` : ""}`,
    `hosts ${str(hosts.enrolled)} enrolled, ${str(hosts.online)} online`,
  ];
  const failures = Array.isArray(hosts.witness_failures) ? hosts.witness_failures.filter(isRecord) : [];
  for (const f of failures.slice(0, 5)) lines.push(`witness failure on ${str(f.host)}: ${oneLine(f.reason, 160)}`);
  lines.push("durability settings and the ledger key: structuredContent");
  return lines.join("\n");
}

export function capabilitiesText(s: Json): string {
  const items = Array.isArray(s.capabilities) ? s.capabilities.filter(isRecord) : [];
  const lines = items.map((c) => {
    const readiness = isRecord(c.readiness) ? str(c.readiness.state) : "unknown";
    const ops = Array.isArray(c.operations) ? c.operations.filter(isRecord).map((o) => `${str(o.name)}${o.mutating === true ? "*" : ""}`) : [];
    return `${str(c.id)} ${str(c.version)}: ${str(c.status)}, readiness ${readiness}; tools ${ops.join(", ") || "none"}`;
  });
  if (lines.length === 0) return pagingLine(s, "capabilities");
  return [pagingLine(s, "capabilities"), ...boundedLines(lines, "capabilities"), "(* changes things; per-host readiness and descriptions: structuredContent)"].join("\n");
}

export function hostsText(s: Json): string {
  const items = Array.isArray(s.hosts) ? s.hosts.filter(isRecord) : [];
  const lines = items.map((h) => {
    const caps = Array.isArray(h.capabilities) ? h.capabilities.filter(isRecord) : [];
    const ready = caps.filter((c) => c.state === "ready").map((c) => str(c.id));
    const other = caps.filter((c) => c.state !== "ready").map((c) => `${str(c.id)} ${str(c.state)}`);
    const paths = Array.isArray(h.host_paths) ? h.host_paths.filter(isRecord).map((p) => `${str(p.label)} ${str(p.path)} ${str(p.mode)}`) : [];
    const snapshots = Array.isArray(h.snapshots) ? h.snapshots.filter(isRecord) : [];
    const latest = snapshots[0];
    // Said only when there are some: most hosts list none, and a line per host stays short.
    const pathText = `${paths.length === 0 ? "" : `; host paths: ${paths.join(", ")}`}${latest === undefined ? "" : `; ${snapshots.length} snapshot(s), latest ${str(latest.id)} of ${str(latest.label)} at ${str(latest.created_at)}`}`;
    return `${str(h.name)}: ${h.online === true ? "online" : "offline"}, tier ${str(h.tier) || "unknown"}; ready: ${ready.join(", ") || "none"}${other.length > 0 ? `; not ready: ${other.join(", ")}` : ""}${pathText}`;
  });
  return [pagingLine(s, "hosts"), ...boundedLines(lines, "hosts")].join("\n");
}

/** A checkpoint and a proof are data to verify, not to read: a line of what it is, then the JSON itself. */
export function hostKeyText(s: Json): string {
  const ledger = s.ledger as Json | null;
  const sealed = ledger === null ? "no host/1 entry found in the log for this key" : `sealed by host/1 ${str(ledger.event)} (entry ${str(ledger.entry_id)}, leaf ${ledger.leaf_index === null ? "not yet integrated" : str(ledger.leaf_index)})`;
  return `host ${str(s.host)}${s.removed === true ? " (removed)" : ""}: evidence key ${str(s.key_id)}, ${sealed}\nthe PEM and the entry's bytes are in structuredContent; docs/verify.md checks a result with them`;
}

export function auditText(summary: string): (s: Json) => string {
  return (s) => `${summary}\n${JSON.stringify(s)}`;
}

function leaseLine(l: Json): string {
  const holder = l.mine === true ? "this session's" : `held by ${str(l.holder_id)}`;
  const label = typeof l.label === "string" ? ` (host path label ${l.label})` : "";
  return `lease ${str(l.lease_id)} on ${str(l.host)}: ${str(l.mode)}${label}, ${holder}, expires ${str(l.expires_at)} (idle ${str(l.idle_expires_at)})`;
}

export function leaseAcquireText(s: Json): string {
  return `${s.acquired === true ? "acquired" : "reused"} ${leaseLine(s)}\nrelease with lease_release {"lease_id":"${str(s.lease_id)}"}`;
}

export function leaseReleaseText(s: Json): string {
  return `released lease ${str(s.lease_id)} at ${str(s.released_at)}`;
}

export function leaseStatusText(s: Json): string {
  const leases = Array.isArray(s.leases) ? s.leases.filter(isRecord) : [];
  if (leases.length === 0) return "no active leases";
  return [`${leases.length} active lease${leases.length === 1 ? "" : "s"}`, ...boundedLines(leases.map(leaseLine), "leases")].join("\n");
}

export function artifactText(s: Json): string {
  const received = `${str(s.received)} of ${str(s.bytes)} bytes received`;
  if (s.complete === true) return `artifact complete (${received}): pass {"sha256":"${str(s.sha256)}"} as the artifact argument.`;
  if (s.expires_at === null) return `no upload of this artifact in progress (${received}): start at offset 0.`;
  return `upload: ${received}; next chunk at offset ${str(s.next_offset)} (the upload expires ${str(s.expires_at)}).`;
}

export function approvalStatusText(s: Json): string {
  const risk = isRecord(s.risk) ? s.risk : {};
  const approval = isRecord(s.approval) ? s.approval : null;
  const error = isRecord(s.error) ? s.error : null;
  const lines = [`action ${str(s.action_id)} (${str(s.operation)} on ${str(s.host)}): ${str(s.state)}, risk ${str(risk.level)}`];
  if (approval !== null) {
    lines.push(`approval ${str(approval.state)}${approval.state === "pending" ? `, deadline ${str(approval.deadline)}` : ""}${approval.reason ? `; reason: ${oneLine(approval.reason, 200)}` : ""}`);
  }
  if (error !== null) lines.push(`error ${str(error.code)}: ${oneLine(error.message, 200)}`);
  if (str(s.hint) !== "") lines.push(`next: ${str(s.hint).replace("approval_wait", waitCall(str(s.action_id)))}`);
  return lines.join("\n");
}
