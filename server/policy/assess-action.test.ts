import { beforeAll, describe, expect, it } from "vitest";
import { assessActionRisk, assessActionRiskSync } from "./assess-action";
import { initShellRisk } from "./risk";
import { ACTION_CORPUS } from "./risk/corpus";

const shell = { capability: "shell", operation: { name: "run_command", mutating: true } } as const;

beforeAll(async () => {
  await initShellRisk();
});

describe("assessActionRisk: the whole prepared action (command, env, stdin, cwd)", () => {
  it.each(ACTION_CORPUS.map((c) => [JSON.stringify({ command: c.command, env: c.env, stdin: c.stdin, cwd: c.cwd }), c] as const))("%s", (_label, entry) => {
    const prepared: Record<string, unknown> = { command: entry.command, cwd: entry.cwd ?? ".", env: entry.env ?? {}, stdin: entry.stdin ?? "" };
    const verdict = assessActionRiskSync({ ...shell, prepared });
    const rules = verdict.reasons.map((r) => r.rule);
    expect({ level: verdict.level, missing: entry.rules.filter((r) => !rules.includes(r)) }, verdict.reasons.map((r) => `${r.level} ${r.rule}: ${r.message}`).join("\n")).toEqual({ level: entry.level, missing: [] });
  });

  it("the cwd is read: it appears in the verdict's reasons", () => {
    const verdict = assessActionRiskSync({ ...shell, prepared: { command: "ls", cwd: "src/lib", env: {}, stdin: "" } });
    expect(verdict.reasons.find((r) => r.rule === "action.cwd")?.message).toContain('"src/lib"');
  });

  it("the same command is read_only without env and high with an executor variable (the env is assessed, not ignored)", () => {
    expect(assessActionRiskSync({ ...shell, prepared: { command: "tar -tf a.tar", cwd: ".", env: {}, stdin: "" } }).level).toBe("read_only");
    expect(assessActionRiskSync({ ...shell, prepared: { command: "tar -tf a.tar", cwd: ".", env: { TAR_OPTIONS: "--to-command=sh" }, stdin: "" } }).level).toBe("high");
  });

  it("stdin fed to a shell is parsed as shell: the same `sh` is medium with `ls` and critical with `rm -rf /`", () => {
    expect(assessActionRiskSync({ ...shell, prepared: { command: "sh", cwd: ".", env: {}, stdin: "ls" } }).level).toBe("medium");
    expect(assessActionRiskSync({ ...shell, prepared: { command: "sh", cwd: ".", env: {}, stdin: "rm -rf /" } }).level).toBe("critical");
  });

  it("run_code in bash gets its stdin and env assessed too", async () => {
    const verdict = await assessActionRisk({ capability: "code", operation: { name: "run_code", mutating: true }, prepared: { language: "bash", code: "sh", stdin: "rm -rf /", env: { LD_PRELOAD: "/x.so" } } });
    expect(verdict.level).toBe("critical");
    expect(verdict.reasons.map((r) => r.rule)).toEqual(expect.arrayContaining(["command.destroys-system", "env.executes"]));
  });
});

describe("text.invisible-characters: what a person cannot see is never auto-allowed", () => {
  const rulesOf = (prepared: Record<string, unknown>) => assessActionRiskSync({ ...shell, prepared }).reasons.filter((r) => r.rule === "text.invisible-characters");

  it.each([
    ["zero-width space", "echo r\u200bm", 6],
    ["right-to-left override", "ls \u202efdp.exe", 3],
    ["tag character (not in any hand-made list)", "echo hi\u{e0041}", 7],
    ["Hangul filler (default-ignorable, a letter by category)", "echo \u3164", 5],
    ["bare carriage return", "echo ok\rls", 7],
  ])("%s in the command: at least low, the reason points at the character", (_name, command, at) => {
    expect(assessActionRiskSync({ ...shell, prepared: { command: command.replace(/\r/, "\n").replace(/[^\n -~]/gu, "x"), cwd: ".", env: {}, stdin: "" } }).level).toBe("read_only");
    const verdict = assessActionRiskSync({ ...shell, prepared: { command, cwd: ".", env: {}, stdin: "" } });
    expect(["low", "medium", "high", "critical"]).toContain(verdict.level);
    const found = verdict.reasons.filter((r) => r.rule === "text.invisible-characters");
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ level: "low", span: { start: at, line: 1, column: at + 1 } });
  });

  it("env values, env names, stdin and cwd are looked at too; ordinary text, TAB, LF and CRLF are not reasons", () => {
    expect(rulesOf({ command: "ls", cwd: ".", env: { LANG: "C\u2066" }, stdin: "" })[0]?.message).toContain("U+2066");
    expect(rulesOf({ command: "cat", cwd: ".", env: {}, stdin: "hello\u200d" })[0]?.message).toContain("U+200D");
    expect(rulesOf({ command: "ls", cwd: "src\u061c", env: {}, stdin: "" })).toHaveLength(1);
    expect(assessActionRiskSync({ ...shell, prepared: { command: "cat", cwd: ".", env: {}, stdin: "a\u2028b" } }).level).not.toBe("read_only");
    expect(rulesOf({ command: "ls -la\nls\t.\r\nls é 日本", cwd: ".", env: { LANG: "C.UTF-8" }, stdin: "x\ny" })).toEqual([]);
  });

  it("run_code is covered: the code's characters are marked", () => {
    const verdict = assessActionRiskSync({ capability: "code", operation: { name: "run_code", mutating: true }, prepared: { language: "python", code: "print('a')\u202e" } });
    expect(verdict.reasons.find((r) => r.rule === "text.invisible-characters")?.span.start).toBe(10);
  });
});

describe("host paths in the verdict", () => {
  beforeAll(async () => {
    await initShellRisk();
  });
  const shell = { name: "run_command", mutating: true };
  const app = { label: "app", path: "/srv/app", mode: "rw" as const };
  const logs = { label: "logs", path: "/var/log", mode: "ro" as const };

  it("a rw label raises a read-only command to medium naming the host path; a ro label only names what becomes readable", () => {
    const plain = assessActionRiskSync({ capability: "shell", operation: shell, prepared: { command: "ls" }, mounts: [logs] });
    expect(plain.level).toBe("read_only");
    expect(plain.reasons.map((r) => r.message)).toContain("host path /var/log (label logs) becomes readable");
    const rw = assessActionRiskSync({ capability: "shell", operation: shell, prepared: { command: "ls" }, mounts: [app, logs] });
    expect(rw.level).toBe("medium");
    expect(rw.reasons[0]).toMatchObject({ level: "medium", rule: "host_path.rw", message: "host path /srv/app (label app) becomes writable; the guest snapshots it before the job runs" });
    // Only raises: a critical command stays critical.
    expect(assessActionRiskSync({ capability: "shell", operation: shell, prepared: { command: "rm -rf / --no-preserve-root" }, mounts: [app] }).level).toBe("critical");
  });

  it("rollback is high whatever it restores, naming the path and snapshot", () => {
    const verdict = assessActionRiskSync({ capability: "workspace", operation: { name: "rollback", mutating: true }, prepared: { label: "app", snapshot_id: "snap-1" }, mounts: [app] });
    expect(verdict.level).toBe("high");
    expect(verdict.reasons).toEqual([expect.objectContaining({ rule: "host_path.rollback", message: "restores host path /srv/app (label app) to snapshot snap-1: everything written there since is replaced" })]);
  });

  it("fs_write to a label path says it writes under that label, and the rw mount raises it to medium", () => {
    const verdict = assessActionRiskSync({ capability: "workspace", operation: { name: "fs_write", mutating: true }, prepared: { path: "app:index.html", content: "x" }, mounts: [app] });
    expect(verdict.level).toBe("medium");
    expect(verdict.reasons.map((r) => r.message)).toContain("writes a file under host path label app");
  });
});
