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
