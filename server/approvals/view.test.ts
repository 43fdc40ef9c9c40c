import { describe, expect, it } from "vitest";
import type { RiskReason } from "../policy/risk";
import { buildApprovalView, escapeForTerminal, markSpans, renderApproval, STDIN_PREVIEW_CHARS, type ApprovalView } from "./view";

const AWS_KEY = "AKIAIOSFODNN7EXAMPLE";
const GH_TOKEN = `ghp_${"a1B2".repeat(9)}`;

/** Any byte a terminal would act on: C0 (but LF), DEL, C1, and the invisible/bidi code points. */
// eslint-disable-next-line no-control-regex
const TERMINAL_ACTIVE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/u;

function reason(level: RiskReason["level"], rule: string, text: string, needle: string): RiskReason {
  const start = text.indexOf(needle);
  return { level, rule, message: `${rule} here`, span: { start, end: start + needle.length, line: 1, column: start + 1 } };
}

function view(args: Record<string, unknown>, reasons: RiskReason[] = []): ApprovalView {
  return {
    approvalId: "11111111-1111-4111-8111-111111111111",
    actionId: "22222222-2222-4222-8222-222222222222",
    actionHash: `sha256:${"ab".repeat(32)}`,
    state: "pending",
    reason: null,
    deadline: new Date("2026-12-01T17:05:00.000Z"),
    requestedAt: new Date("2026-12-01T17:00:00.000Z"),
    channel: "mcp",
    operation: "run_command",
    capability: "shell",
    host: "web-1",
    risk: "high",
    reasons,
    requester: { kind: "token", id: "33333333-3333-4333-8333-333333333333", name: "ci-bot" },
    sessionId: "raw-session-id-never-printed",
    prepared: { arguments: { host: "web-1", ...args }, policy: { timeout_s: 60, network: { mode: "none" } } },
  };
}

describe("approval view: terminal-safe", () => {
  it("hostile: escape sequences, OSC 52, bidi overrides, NUL and CR in caller text are shown as visible tokens, never emitted", () => {
    const hostile = "echo ok\u001b]52;c;cm0gLXJmIH4=\u0007\u202erm -rf ~\u202c\r\u0000\u009b2J\u200b";
    const shown = escapeForTerminal(hostile);
    expect(shown).not.toMatch(TERMINAL_ACTIVE);
    expect(shown).toBe("echo ok⟨ESC⟩]52;c;cm0gLXJmIH4=⟨BEL⟩⟨U+202E⟩rm -rf ~⟨U+202C⟩⟨CR⟩⟨NUL⟩⟨U+009B⟩2J⟨U+200B⟩");
    // The notation's own brackets in caller text are escaped, so they cannot fake an escape or a span.
    expect(escapeForTerminal("⟨ESC⟩ ⟦x⟧")).toBe("⟨U+27E8⟩ESC⟩ ⟨U+27E6⟩x⟨U+27E7⟩");
    // Every line of a full rendering is free of active bytes too.
    const lines = renderApproval(view({ command: hostile, cwd: "a\u001b[2Jb", env: { X: "\u001b]0;title\u0007" }, stdin: "\u001b[31mred" }));
    for (const line of lines) expect(line).not.toMatch(TERMINAL_ACTIVE);
  });

  it("invisible characters are found by Unicode property, not by a list: tags, Hangul fillers, variation selectors, Arabic letter mark", () => {
    expect(escapeForTerminal("rm\u{e0041}\u3164\u115f\ufe0f\u061c\u2028x")).toBe("rm⟨U+E0041⟩⟨U+3164⟩⟨U+115F⟩⟨U+FE0F⟩⟨U+061C⟩⟨U+2028⟩x");
    expect(escapeForTerminal("clé ✓ 日本 🙂")).toBe("clé ✓ 日本 🙂");
  });

  it("marks the risky spans of the command between ⟦ ⟧ (read-only reasons are not marked), across lines", () => {
    const text = "ls -la\nrm -rf ./build && tar -xf a.tar";
    const reasons = [reason("read_only", "command.read-only", text, "ls -la"), reason("high", "command.deletes", text, "rm -rf ./build"), reason("low", "command.writes", text, "tar -xf a.tar"), reason("high", "x.overlap", text, "./build")];
    expect(markSpans(text, reasons)).toEqual(["ls -la", "⟦rm -rf ./build⟧ && ⟦tar -xf a.tar⟧"]);
  });
});

describe("approval view: the prepared action in full", () => {
  it("shows command, cwd, env (values scrubbed), stdin size + sha256 + scrubbed preview, timeout, requester, session label, reasons, deadline, action id and hash", () => {
    const command = "tar -xf a.tar";
    const stdin = `key ${AWS_KEY} then ${"x".repeat(400)}`;
    const lines = renderApproval(
      view({ command, cwd: "sub/dir", env: { TAR_OPTIONS: "--checkpoint-action=exec=sh", GITHUB_TOKEN: GH_TOKEN }, stdin, timeout_s: 30, idempotency_key: "k1" }, [reason("high", "env.unlisted", command, "tar")]),
      new Date("2026-12-01T17:01:00.000Z"),
    );
    const text = lines.join("\n");
    expect(lines[0]).toBe("11111111-1111-4111-8111-111111111111  run_command on web-1  risk high  pending  deadline 2026-12-01T17:05:00.000Z (in 4m 00s)");
    expect(text).toContain("action 22222222-2222-4222-8222-222222222222  (capability shell)");
    expect(text).toContain(`action_hash sha256:${"ab".repeat(32)}`);
    expect(text).toMatch(/requested by agent token "ci-bot" \(33333333-3333-4333-8333-333333333333\), session [0-9a-f]{8}, channel mcp/);
    expect(text).not.toContain("raw-session-id-never-printed");
    expect(text).toContain("│ ⟦tar⟧ -xf a.tar");
    expect(text).toContain("cwd: sub/dir");
    expect(text).toContain("TAR_OPTIONS=--checkpoint-action=exec=sh");
    expect(text).not.toContain(GH_TOKEN);
    expect(text).toContain("GITHUB_TOKEN=[REDACTED:github_token]");
    expect(text).toContain(`stdin: ${Buffer.byteLength(stdin)} bytes, sha256 `);
    expect(text).not.toContain(AWS_KEY);
    expect(text).toContain("preview (1 redacted): \"key [REDACTED:aws_access_key] then");
    const preview = lines.find((l) => l.includes("preview")) ?? "";
    expect(preview.length).toBeLessThan(STDIN_PREVIEW_CHARS + 60);
    expect(text).toContain("timeout: 60 s (asked 30 s)");
    expect(text).toContain('idempotency_key: "k1"');
    expect(text).toContain("[high] env.unlisted at 1:1 ⟦tar⟧ — env.unlisted here");
  });

  it("a secret straddling the preview cut is redacted whole, not half shown", () => {
    const stdin = `${"y".repeat(STDIN_PREVIEW_CHARS - 8)} ${AWS_KEY}`;
    const text = renderApproval(view({ command: "cat", stdin })).join("\n");
    expect(text).not.toContain(AWS_KEY.slice(0, 7));
  });
});

describe("approval view: one builder for terminal and browser", () => {
  it("buildApprovalView gives the browser structured, visible-safe data: risky segments, scrubbed env and stdin, the same facts renderApproval prints", () => {
    const command = "ls\nrm -rf ./build \u202e#";
    const v = view({ command, cwd: "x", env: { GITHUB_TOKEN: GH_TOKEN, A: "1" }, stdin: `k ${AWS_KEY}` }, [reason("high", "command.deletes", command, "rm -rf ./build")]);
    const built = buildApprovalView(v);
    expect(built.subject?.segments).toEqual([
      { text: "ls\n", risky: false },
      { text: "rm -rf ./build", risky: true },
      { text: " ⟨U+202E⟩#", risky: false },
    ]);
    expect(built.env).toEqual([
      { name: "A", value: "1" },
      { name: "GITHUB_TOKEN", value: "[REDACTED:github_token]" },
    ]);
    expect(built.stdin).toMatchObject({ preview: "k [REDACTED:aws_access_key]", redactions: 1, cut: false });
    expect(JSON.stringify(built)).not.toContain(GH_TOKEN);
    expect(JSON.stringify(built)).not.toContain(AWS_KEY);
    expect(JSON.stringify(built)).not.toMatch(TERMINAL_ACTIVE);
    expect(built.session).toMatch(/^session [0-9a-f]{8}$/);
    // The terminal lines are a formatting of the same structure.
    const text = renderApproval(v).join("\n");
    expect(text).toContain("│ ⟦rm -rf ./build⟧ ⟨U+202E⟩#");
    expect(text).toContain(`action_hash ${built.action_hash}`);
    expect(text).toContain(built.session);
  });
});

describe("approval view: egress allow-lists with names", () => {
  it("shows the compiled egress list as text, names and addresses alike, in the view and the CLI rendering", () => {
    const base = view({ command: "curl https://api.example.test/" });
    const v: ApprovalView = {
      ...base,
      operation: "run_command_net",
      capability: "egress-shell",
      prepared: { ...base.prepared, policy: { timeout_s: 60, network: { mode: "egress", egress: ["10.20.0.0/16:5432", "api.example.test:443"] } } },
    };
    const built = buildApprovalView(v);
    expect(built.network).toBe('{"mode":"egress","egress":["10.20.0.0/16:5432","api.example.test:443"]}');
    expect(renderApproval(v).join("\n")).toContain('network {"mode":"egress","egress":["10.20.0.0/16:5432","api.example.test:443"]}');
  });
});

describe("approval view: reach, folded arguments, risky env entries", () => {
  it("says as whom and with what reach from the compiled policy: lease user, workspace mode, network in words, limits", () => {
    const base = view({ command: "make" });
    const policy = { timeout_s: 300, memory_bytes: 2 ** 30, pids_limit: 512, network: { mode: "none" } };
    const built = buildApprovalView({ ...base, prepared: { ...base.prepared, mutating: true, policy } });
    expect(built.reach.map((r) => r.text)).toEqual(["runs as an unprivileged lease user", "workspace read-write", "no network", "1 GiB / 512 procs / 300 s"]);
    const net = buildApprovalView({ ...base, prepared: { ...base.prepared, mutating: false, policy: { ...policy, memory_bytes: 512 * 2 ** 20, network: { mode: "egress", egress: ["api.example.test:443", "10.0.0.0/8:5432"] } } } });
    expect(net.reach.map((r) => r.text)).toEqual(["runs as an unprivileged lease user", "workspace read-only", "network only to api.example.test:443, 10.0.0.0/8:5432", "512 MiB / 512 procs / 300 s"]);
  });

  it("a rollback's reach names the host path label it restores (and its path), never the workspace; the card and the CLI say the same", () => {
    const base = view({ label: "app", snapshot_id: "s1" });
    const rollback: ApprovalView = { ...base, operation: "rollback", capability: "workspace", prepared: { ...base.prepared, mutating: true, policy: { timeout_s: 60, network: { mode: "none" }, mounts: [{ label: "app", path: "/srv/app", mode: "rw" }] } } };
    const built = buildApprovalView(rollback);
    expect(built.reach).toEqual([
      { key: "user", text: "the guest restores it itself; nothing is launched" },
      { key: "host_path", text: "host path label app (/srv/app) restored; the workspace is not touched" },
    ]);
    expect(built.reach.map((r) => r.text).join(" ")).not.toMatch(/workspace read-(write|only)/);
    expect(renderApproval(rollback)).toContain("  reach: the guest restores it itself; nothing is launched · host path label app (/srv/app) restored; the workspace is not touched");
    // A normal job's reach is unchanged, and the CLI prints it too.
    const job: ApprovalView = { ...base, prepared: { ...base.prepared, mutating: true, policy: { network: { mode: "none" } } } };
    expect(renderApproval(job)).toContain("  reach: runs as an unprivileged lease user · workspace read-write · no network");
  });

  it("hostile: a rollback whose label or path carries control characters is shown escaped in its reach", () => {
    const base = view({ label: "a\u001b[2Jb", snapshot_id: "s1" });
    const built = buildApprovalView({ ...base, operation: "rollback", prepared: { ...base.prepared, policy: { mounts: [{ label: "a\u001b[2Jb", path: "/srv/\u202eppa", mode: "rw" }] } } });
    const text = built.reach.find((r) => r.key === "host_path")?.text ?? "";
    expect(text.includes("\u001b") || text.includes("\u202e")).toBe(false);
    expect(text).toContain("(/srv/⟨U+202E⟩ppa)");
  });

  it("hostile: an egress rule or unknown network shape with control characters is shown escaped, never as words it does not say", () => {
    const base = view({ command: "x" });
    const odd = buildApprovalView({ ...base, prepared: { ...base.prepared, policy: { network: { mode: "egress", egress: ["a\u202eb:443"] } } } });
    expect(odd.reach.find((r) => r.key === "network")?.text).toBe("network only to a⟨U+202E⟩b:443");
    const unknown = buildApprovalView({ ...base, prepared: { ...base.prepared, policy: { network: { mode: "open" } } } });
    expect(unknown.reach.find((r) => r.key === "network")?.text).toBe('network {"mode":"open"}');
  });

  it("folds idempotency_key away from the other arguments (the CLI still prints it) and flags reasons below the hold threshold", () => {
    const command = "rm -rf ./build; ls";
    const built = buildApprovalView(view({ command, idempotency_key: "k1", depth: 2 }, [reason("high", "command.deletes", command, "rm -rf ./build"), reason("read_only", "command.reads", command, "ls")]));
    expect(built.other).toEqual([{ name: "depth", json: "2" }]);
    expect(built.folded).toEqual([{ name: "idempotency_key", json: '"k1"' }]);
    expect(built.reasons.map((r) => [r.rule, r.raises_risk])).toEqual([["command.deletes", true], ["command.reads", false]]);
  });

  it("names the env entries a risk-raising reason is about, not a read-only one nor a name that only starts the same", () => {
    const env = { LD_PRELOAD: "/tmp/x.so", LD_PRELOAD_EXTRA: "1", LANG: "C" };
    const reasons: RiskReason[] = [
      { level: "high", rule: "env.executes", message: "environment variable LD_PRELOAD: loads code into every program", span: { start: 0, end: 0, line: 1, column: 1 } },
      { level: "read_only", rule: "env.presentational", message: "environment variable LANG only sets the locale", span: { start: 0, end: 0, line: 1, column: 1 } },
    ];
    expect(buildApprovalView(view({ command: "ls", env }, reasons)).risky_env).toEqual(["LD_PRELOAD"]);
  });
});
