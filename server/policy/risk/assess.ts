import { LeaseholdError } from "../../errors";
import { ShellAnalysis, type Finding } from "./analyze";
import { applyCustomRules, validateCustomRules } from "./custom-rules";
import { compareRisk, maxRisk } from "./levels";
import { initShellParser, isShellParserReady } from "./parser";
import type { AssessOptions, RiskReason, RiskSpan, RiskVerdict } from "./types";

/** Larger texts are refused rather than analysed partially: a verdict must cover all of the text. */
export const MAX_SHELL_TEXT_LENGTH = 256 * 1024;
const MAX_REASONS = 500;

function lineIndex(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function toRiskSpan(span: { start: number; end: number }, starts: readonly number[]): RiskSpan {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= span.start) lo = mid;
    else hi = mid - 1;
  }
  return { start: span.start, end: span.end, line: lo + 1, column: span.start - starts[lo]! + 1 };
}

function validateText(text: unknown): asserts text is string {
  if (typeof text !== "string") throw new LeaseholdError("INVALID_ARGUMENT", "shell text must be a string", { tier: "hub" });
  if (text.trim() === "") {
    throw new LeaseholdError("INVALID_ARGUMENT", "shell text is empty or whitespace only; there is nothing to assess", { tier: "hub", hint: "send the command to run" });
  }
  if (text.length > MAX_SHELL_TEXT_LENGTH) {
    throw new LeaseholdError("INVALID_ARGUMENT", `shell text is longer than ${MAX_SHELL_TEXT_LENGTH} characters`, { tier: "hub", hint: "run a script file from the workspace instead" });
  }
}

function buildVerdict(text: string, findings: readonly Finding[]): RiskVerdict {
  const starts = lineIndex(text);
  const seen = new Set<string>();
  const reasons: RiskReason[] = [];
  for (const f of findings) {
    const key = `${f.rule}\u0000${f.span.start}\u0000${f.span.end}\u0000${f.level}\u0000${f.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const reason: RiskReason = { level: f.level, rule: f.rule, message: f.message, span: toRiskSpan(f.span, starts) };
    if (f.command !== undefined) reason.command = f.command;
    reasons.push(reason);
  }
  reasons.sort((a, b) => compareRisk(b.level, a.level) || a.span.start - b.span.start);
  const level = maxRisk(...reasons.map((r) => r.level));
  return { level, reasons: reasons.slice(0, MAX_REASONS) };
}

/**
 * Loads the bash grammar. Call once at start-up so the first request does not
 * pay for it; `assessShellRisk` calls it anyway.
 */
export function initShellRisk(): Promise<void> {
  return initShellParser();
}

/**
 * Synchronous assessment; the parser must already be initialised
 * (`await initShellRisk()`), otherwise this throws a plain Error.
 *
 * Invalid input (not a string, empty or whitespace only, longer than
 * MAX_SHELL_TEXT_LENGTH, or a malformed custom rule) throws a LeaseholdError
 * with code INVALID_ARGUMENT: there is no verdict for text that cannot run.
 */
export function assessShellRiskSync(text: string, options: AssessOptions = {}): RiskVerdict {
  validateText(text);
  const rules = options.customRules ?? [];
  validateCustomRules(rules);
  if (!isShellParserReady()) throw new Error("shell risk parser not initialised: await initShellRisk() first");
  const analysis = new ShellAnalysis(text, undefined, options.stdin);
  analysis.run();
  const findings = [...analysis.findings, ...applyCustomRules(rules, text, analysis.commandLines)];
  return buildVerdict(text, findings);
}

/** Assesses shell text; see assessShellRiskSync for the error contract. */
export async function assessShellRisk(text: string, options: AssessOptions = {}): Promise<RiskVerdict> {
  validateText(text);
  await initShellParser();
  return assessShellRiskSync(text, options);
}
