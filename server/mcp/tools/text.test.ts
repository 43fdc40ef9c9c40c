import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { LeaseholdError } from "../../errors";
import { shapeOutcome } from "./actions";
import { toolError, toolSuccess } from "./result";
import { ACTION_ID, completed, DISPATCHED } from "./test-fixtures";
import { actionText, approvalStatusText, artifactText, capabilitiesText, errorText, healthText, hostsText, leaseAcquireText, leaseStatusText } from "./text";

const textOf = (result: CallToolResult): string => (result.content[0] as { type: "text"; text: string }).text;
const bytes = (s: string) => Buffer.byteLength(s, "utf8");
const WAIT = `approval_wait {"action_id":"${ACTION_ID}"}`;

describe("action result text", () => {
  it("a completed echo hello leads with the exit status and stdout, then one reference line, in at most 300 bytes around the output; structuredContent is the whole result", () => {
    const structured = shapeOutcome(completed("hello\n"));
    const result = toolSuccess(structured, actionText);
    const text = textOf(result);
    expect(text.startsWith("completed: exit 0\n[stdout]\nhello\n[ref] ")).toBe(true);
    expect(text.split("\n")).toHaveLength(4);
    expect(bytes(text) - bytes("hello\n")).toBeLessThanOrEqual(300);
    const ref = text.split("\n")[3]!;
    expect(ref).toContain("auto_allow, risk low");
    expect(ref).toContain("evidence sha256:222222222222 tier A");
    expect(ref).toContain("receipt leaf 1233/1240");
    expect(ref).toContain("observe lease (/work read-only)");
    expect(ref).toContain(`rest: structuredContent, or ${WAIT}`);
    // Nothing of the bulk (proof hashes, the checkpoint, the sandbox note) is in the text.
    expect(text).not.toContain("checkpoint");
    expect(result.structuredContent).toBe(structured);
  });

  it("a failed command shows its exit code, signal, timeout and OOM, both streams, and which stream was cut and how", () => {
    const text = actionText(
      shapeOutcome(
        completed("", {
          state: "failed",
          exit: { code: null, signal: "SIGKILL", timed_out: true, oom_killed: true },
          output: { stdout: "partial", stderr: "boom\n", stdout_bytes: 5_000_000, stderr_bytes: 5, stdout_truncated: true, stderr_truncated: false },
        }),
      ),
    );
    const lines = text.split("\n");
    expect(lines[0]).toBe("failed: killed by SIGKILL, timed out, out of memory");
    expect(lines[1]).toBe("[stdout, first 7 of 5000000 bytes; truncated on the host at its output limit]");
    expect(lines[2]).toBe("partial");
    expect(lines[3]).toBe("[stderr]");
    expect(lines[4]).toBe("boom");
    expect(lines[5]).toMatch(/^\[ref\] /);
  });

  it("no output says so; an operation's own result (fs_read base64) follows the output as JSON without the sandbox report", () => {
    expect(actionText(shapeOutcome(completed(""))).split("\n").slice(0, 2)).toEqual(["completed: exit 0", "(no output)"]);
    const read = shapeOutcome(
      completed("aGVsbG8=", { structured: { path: "a.bin", offset: 0, bytes: 5, total_bytes: 5, has_more: false, terminal_controls: false, encoding: "base64" } }),
    );
    const text = actionText(read);
    expect(text).toContain('[stdout]\naGVsbG8=\n[result] {"path":"a.bin","offset":0,"bytes":5,"total_bytes":5,"has_more":false,"terminal_controls":false,"encoding":"base64"}\n[ref]');
    expect(text).not.toContain("observe lease");
  });

  it("redactions, kernel denials, terminal controls, a replay and a receipt not yet integrated are all named in the reference line", () => {
    const outcome = completed("x\n", {
      structured: { sandbox: { workspace: "read-write", terminal_controls: true } },
      receipt: null,
    });
    const evidence = { ...outcome.result!.evidence, redactions: { count: 2, kinds: ["aws_key"] }, denials: [{ kind: "connect" }], denials_dropped: 3 };
    const shaped = shapeOutcome({ ...outcome, decision: "grant", grant_id: "g", replayed: true, result: { ...outcome.result!, evidence } });
    const ref = actionText(shaped).split("\n").at(-1)!;
    expect(ref).toMatch(/^\[ref\] grant, risk low; replayed; output has terminal control sequences; evidence sha256:222222222222 tier A, 2 redacted, 4 kernel denials; receipt pending \(audit_checkpoint\); rest: /);
    expect(ref).not.toContain("observe lease");
  });

  it("a dispatched action says no result exists yet and names the call that waits for it", () => {
    const text = actionText(shapeOutcome(DISPATCHED));
    expect(text.split("\n")).toEqual([
      "run_command on local is queued for the host; no result yet (job deadline 2026-12-01T01:00:00.000Z).",
      `next: ${WAIT} waits for the result.`,
      "[ref] auto_allow, risk low; rest: structuredContent",
    ]);
  });
});

describe("error text", () => {
  it("a held call: CODE: message, the call to make next, why it was held (bounded), and the hint", () => {
    const reasons = Array.from({ length: 5 }, (_, i) => ({ level: "high", rule: `command.r${i}`, message: `reason ${i} ${"x".repeat(200)}`, span: { start: 0, end: 1 } }));
    const result = toolError(
      new LeaseholdError("APPROVAL_PENDING", "run_command on this host is held for a person's approval (risk high) until 2026-12-01T00:05:00.000Z", {
        retryable: true,
        hint: "wait with approval_wait",
        details: { action_id: ACTION_ID, approval_id: "b", risk: "high", reasons, deadline: "2026-12-01T00:05:00.000Z" },
      }),
    );
    const lines = textOf(result).split("\n");
    expect(lines[0]).toBe("APPROVAL_PENDING: run_command on this host is held for a person's approval (risk high) until 2026-12-01T00:05:00.000Z");
    expect(lines[1]).toBe(`next: ${WAIT} waits for the decision, then returns the result`);
    expect(lines[2]).toMatch(/^why: command\.r0 \(reason 0 x+…\); command\.r1 .*; command\.r2 .*; \+2 more$/);
    expect(bytes(lines[2]!)).toBeLessThan(260);
    expect(lines[3]).toBe("hint: wait with approval_wait");
    expect(result.structuredContent).toMatchObject({ code: "APPROVAL_PENDING", action_id: ACTION_ID });
  });

  it("other errors are CODE: message plus the hint (the default hint when the error has none)", () => {
    expect(textOf(toolError(new LeaseholdError("HOST_BUSY", "h1 is leased", { retryable: true, hint: "retry after it ends", details: { lease_id: "l" } })))).toBe(
      "HOST_BUSY: h1 is leased\nhint: retry after it ends",
    );
    expect(textOf(toolError(new LeaseholdError("NOT_FOUND", "no such thing")))).toMatch(/^NOT_FOUND: no such thing\nhint: check the name/);
    expect(errorText({ code: "X", message: "m", hint: "" })).toBe("X: m");
  });
});

describe("listing text stays bounded", () => {
  it("hosts_list: one line per host with readiness, the page position, at most 50 host lines", () => {
    const hosts = Array.from({ length: 200 }, (_, i) => ({
      name: `h${i}`,
      online: i % 2 === 0,
      tier: "A",
      last_report_at: null,
      capabilities: [
        { id: "shell", state: "ready", reasons: [], worker_digest: null },
        { id: "apk-static", state: "installed", reasons: ["self-test failed"], worker_digest: null },
      ],
    }));
    const text = hostsText({ hosts, offset: 0, limit: 200, total: 450, has_more: true });
    const lines = text.split("\n");
    expect(lines[0]).toBe("hosts 1–200 of 450; more with offset=200");
    expect(lines[1]).toBe("h0: online, tier A; ready: shell; not ready: apk-static installed");
    expect(lines[2]).toMatch(/^h1: offline/);
    expect(lines).toHaveLength(52);
    expect(lines[51]).toBe("… 150 more hosts in structuredContent");
    expect(hostsText({ hosts: [], offset: 0, limit: 50, total: 0, has_more: false })).toBe("no hosts at offset 0 (total 0)");
  });

  it("list_capabilities: id, version, status, readiness and tool names (mutating ones starred)", () => {
    const text = capabilitiesText({
      capabilities: [
        { id: "shell", version: "1.0.0", status: "active", readiness: { state: "ready" }, operations: [{ name: "run_command", mutating: true }, { name: "host_inspect", mutating: false }] },
      ],
      offset: 0,
      limit: 1,
      total: 5,
      has_more: true,
    });
    expect(text.split("\n").slice(0, 2)).toEqual(["capabilities 1–1 of 5; more with offset=1", "shell 1.0.0: active, readiness ready; tools run_command*, host_inspect"]);
  });

  it("health, leases, artifacts and approval_status read as short sentences naming what to call next", () => {
    const health = healthText({
      status: "degraded",
      version: "0.1.0",
      uptime_s: 12,
      database: { kind: "pglite", migrations: { applied: 9, known: 9 } },
      ledger: { head: null, integrator: { state: "running", detail: null } },
      hosts: { enrolled: 1, online: 0, witness_failures: [{ host: "h1", reason: "checkpoint went backwards" }] },
    });
    expect(health).toContain("hub degraded, version 0.1.0, up 12 s\ndatabase pglite, migrations 9/9\nledger has no checkpoint yet, integrator running\nhosts 1 enrolled, 0 online\nwitness failure on h1: checkpoint went backwards");
    const lease = { lease_id: "L", host: "h1", mode: "exclusive", holder_id: "o", mine: true, expires_at: "E", idle_expires_at: "I", acquired: true };
    expect(leaseAcquireText(lease)).toBe('acquired lease L on h1: exclusive, this session\'s, expires E (idle I)\nrelease with lease_release {"lease_id":"L"}');
    expect(leaseStatusText({ leases: [] })).toBe("no active leases");
    expect(artifactText({ sha256: "ab", bytes: 10, received: 4, next_offset: 4, complete: false, expires_at: "T" })).toBe("upload: 4 of 10 bytes received; next chunk at offset 4 (the upload expires T).");
    expect(artifactText({ sha256: "ab", bytes: 10, received: 10, next_offset: 10, complete: true, expires_at: null })).toBe('artifact complete (10 of 10 bytes received): pass {"sha256":"ab"} as the artifact argument.');
    const status = approvalStatusText({
      action_id: ACTION_ID,
      operation: "fs_write",
      host: "h1",
      state: "held",
      risk: { level: "high", reasons: [] },
      approval: { approval_id: "a", state: "pending", deadline: "D", decided_at: null, reason: null },
      error: null,
      hint: "a person must approve or deny it; approval_wait waits for the decision",
    });
    expect(status).toBe(`action ${ACTION_ID} (fs_write on h1): held, risk high\napproval pending, deadline D\nnext: a person must approve or deny it; ${WAIT} waits for the decision`);
  });
});
