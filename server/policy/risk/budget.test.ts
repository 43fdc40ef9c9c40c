import { beforeAll, describe, expect, it } from "vitest";
import { assessActionRisk } from "../assess-action";
import { ShellAnalysis } from "./analyze";
import { assessShellRiskSync, initShellRisk } from "./assess";

/**
 * An assessment that runs out of depth, commands or time ends in a `high`
 * verdict that says why (held for a person, docs/design.md#decision) — never an exception,
 * which the pipeline would turn into INTERNAL with nothing sealed.
 */

const rules = (text: string): string[] => assessShellRiskSync(text).reasons.map((r) => r.rule);

beforeAll(async () => {
  await initShellRisk();
});

describe("risk assessment bounds", () => {
  it("8,001 `true`s joined by && (64 KiB) are high with analysis.budget, not a stack overflow", async () => {
    const text = Array(8001).fill("true").join(" && ");
    expect(text.length).toBe(64_004);
    const verdict = assessShellRiskSync(text);
    expect(verdict.level).toBe("high");
    expect(verdict.reasons.find((r) => r.rule === "analysis.budget")?.message).toMatch(/more than 5000 commands/);
    const action = await assessActionRisk({ capability: "shell", operation: { name: "run_command", mutating: true }, prepared: { command: text, cwd: ".", env: {}, stdin: "" } });
    expect(action.level).toBe("high");
  });

  it("a long && chain under the command budget is walked completely (flattened, not recursed)", () => {
    const text = [...Array(3000).fill("true"), "rm -rf /"].join(" && ");
    expect(assessShellRiskSync(text).level).toBe("critical");
  });

  it.each([
    ["subshells 5,000 deep", "(".repeat(5000) + "true" + ")".repeat(5000)],
    ["$( $( ... ) ) 5,000 deep", "echo " + "$(".repeat(5000) + "true" + ")".repeat(5000)],
    ["`{ }` groups 5,000 deep", "{ ".repeat(5000) + "true; " + "}; ".repeat(4999) + "}"],
    ["if inside if 3,000 deep", "if true; then ".repeat(3000) + "true; " + "fi; ".repeat(2999) + "fi"],
  ])("%s: high with parse.too-deep", (_name, text) => {
    const verdict = assessShellRiskSync(text);
    expect(verdict.level).toBe("high");
    expect(verdict.reasons.map((r) => r.rule)).toContain("parse.too-deep");
  });

  it("${x:-${x:-...}} 5,000 deep: high, never an exception", () => {
    const text = "echo " + "${x:-".repeat(5000) + "a" + "}".repeat(5000);
    const verdict = assessShellRiskSync(text);
    expect(verdict.level).toMatch(/^(high|critical)$/);
    expect(verdict.reasons.map((r) => r.rule).some((r) => ["parse.too-deep", "analysis.budget", "parse.error"].includes(r))).toBe(true);
  });

  it("what follows a too-deep part is still analysed", () => {
    const text = "(".repeat(300) + "true" + ")".repeat(300) + "; rm -rf /";
    expect(rules(text)).toEqual(expect.arrayContaining(["parse.too-deep", "command.destroys-system"]));
    expect(assessShellRiskSync(text).level).toBe("critical");
  });

  it("beyond the time budget the walk stops with analysis.budget (high)", () => {
    const analysis = new ShellAnalysis(Array(2000).fill("ls").join("; "), -1);
    analysis.run();
    const budget = analysis.findings.find((f) => f.rule === "analysis.budget");
    expect(budget?.level).toBe("high");
    expect(budget?.message).toMatch(/longer than/);
  });
});
