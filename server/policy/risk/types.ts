import { z } from "zod";
import { RiskLevelSchema, type RiskLevel } from "./levels";

/**
 * Where a reason points in the text the caller submitted. `start`/`end` are
 * JavaScript string indices (UTF-16 code units, end exclusive) so the approval
 * UI can slice the original string directly; `line` and `column` are 1-based
 * for people. Reasons found inside a nested shell string (`sh -c '...'`) point
 * at the exact inner text when it appears verbatim in the original, and at
 * the whole enclosing argument when quote removal changed it.
 */
export interface RiskSpan {
  start: number;
  end: number;
  line: number;
  column: number;
}

export interface RiskReason {
  level: RiskLevel;
  /** Stable identifier (e.g. `command.deletes`); UIs and grants may key on it, so ids are never reused. */
  rule: string;
  /** The command as resolved after quote removal (`r''m` → `rm`), when the reason is about one. */
  command?: string;
  message: string;
  span: RiskSpan;
}

export interface RiskVerdict {
  level: RiskLevel;
  reasons: RiskReason[];
}

/**
 * An operator-supplied pattern. It can only add a reason, so it can raise the
 * verdict but never lower it. A string pattern is matched literally (not as a
 * regular expression) so a pasted path with dots cannot surprise anyone.
 */
export interface CustomRiskRule {
  id: string;
  pattern: RegExp | string;
  level: RiskLevel;
  message: string;
  /** `text`: the raw submitted text; `command`: each command line after quote removal, nested ones included. Default `both`. */
  scope?: "text" | "command" | "both";
}

export const CustomRiskRuleSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/),
    pattern: z.union([z.instanceof(RegExp), z.string().min(1).max(1000)]),
    level: RiskLevelSchema,
    message: z.string().min(1).max(500),
    scope: z.enum(["text", "command", "both"]).optional(),
  })
  .strict();

export interface AssessOptions {
  customRules?: readonly CustomRiskRule[];
  /**
   * What the action feeds the command's stdin, when known. A shell reading
   * stdin (`sh`, `bash -s`) runs it: it is parsed as shell text like `sh -c`;
   * another interpreter reading it is rated as running code we do not parse.
   * Absent: stdin is unknown, and a program reading its code from it is high.
   */
  stdin?: string;
}
