import { LeaseholdError } from "../../errors";
import type { CommandLine, Finding, Span } from "./analyze";
import { CustomRiskRuleSchema, type CustomRiskRule } from "./types";

/**
 * Operator rules add reasons; they never remove one and never replace the
 * computed level, so the verdict is max(built-in, custom). That is the whole
 * guarantee "custom rules may only raise risk" rests on — keep it that way.
 */
export function validateCustomRules(rules: readonly CustomRiskRule[]): void {
  const seen = new Set<string>();
  for (const rule of rules) {
    const parsed = CustomRiskRuleSchema.safeParse(rule);
    if (!parsed.success) {
      throw new LeaseholdError("INVALID_ARGUMENT", `custom risk rule ${JSON.stringify((rule as { id?: unknown }).id ?? "?")} is invalid: ${parsed.error.issues[0]?.message ?? "bad shape"}`, { tier: "hub" });
    }
    if (seen.has(rule.id)) throw new LeaseholdError("INVALID_ARGUMENT", `custom risk rule id ${rule.id} is used twice`, { tier: "hub" });
    seen.add(rule.id);
  }
}

/** First match of the rule in `text`, as a range; a RegExp's global/sticky state is never reused between calls. */
function match(rule: CustomRiskRule, text: string): { start: number; end: number } | null {
  if (typeof rule.pattern === "string") {
    const at = text.indexOf(rule.pattern);
    return at === -1 ? null : { start: at, end: at + rule.pattern.length };
  }
  const re = new RegExp(rule.pattern.source, rule.pattern.flags.replace(/[gy]/g, ""));
  const m = re.exec(text);
  return m ? { start: m.index, end: m.index + Math.max(m[0].length, 1) } : null;
}

export function applyCustomRules(rules: readonly CustomRiskRule[], text: string, commands: readonly CommandLine[]): Finding[] {
  const out: Finding[] = [];
  for (const rule of rules) {
    const scope = rule.scope ?? "both";
    let matched = false;
    if (scope !== "command") {
      const m = match(rule, text);
      if (m) {
        matched = true;
        out.push({ level: rule.level, rule: `custom.${rule.id}`, message: rule.message, span: { start: m.start, end: Math.min(m.end, text.length) } });
      }
    }
    // With scope "both", the command view only adds what the raw text hid
    // (quote tricks, nested strings); one reason per rule level is enough.
    if (scope === "command" || (scope === "both" && !matched)) {
      for (const line of commands) {
        if (!match(rule, line.text)) continue;
        const span: Span = line.span;
        out.push({ level: rule.level, rule: `custom.${rule.id}`, command: line.command, message: rule.message, span });
      }
    }
  }
  return out;
}
