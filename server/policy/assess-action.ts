/**
 * Step 5 of "The life of one action": the risk of a prepared action.
 *
 * The verdict comes from the prepared arguments only — the caller's or the
 * model's own risk claim is never read. Which analysis applies is data: a
 * table from capability id to an assessor, so the pipeline has no branch on
 * operation names. Floors from DESIGN.md and issue 4:
 * - an operation the manifest declares non-mutating is `read_only`;
 * - shell text (`command`) is parsed by `assessShellRisk` (custom rules may
 *   only raise it); environment names that change how programs load are high;
 * - `egress-shell` is at least `medium` (it reaches the network);
 * - `run_code` is at least `medium`; bash code is also parsed as shell;
 * - `fs_write` (any mutating workspace operation) is at least `low`;
 * - a mutating operation of a capability with no assessor is `high`.
 */
import type { OperationDeclaration } from "../capabilities";
import { assessShellRiskSync, compareRisk, initShellRisk, maxRisk, type CustomRiskRule, type RiskLevel, type RiskReason, type RiskVerdict } from "./risk";

export interface ActionRiskInput {
  capability: string;
  operation: Pick<OperationDeclaration, "name" | "mutating">;
  prepared: Record<string, unknown>;
  customRules?: readonly CustomRiskRule[];
}

type Assessor = (input: ActionRiskInput) => RiskReason[];

const NO_SPAN = { start: 0, end: 0, line: 1, column: 1 } as const;

function floor(level: RiskLevel, rule: string, message: string): RiskReason {
  return { level, rule, message, span: { ...NO_SPAN } };
}

/** Variables that change which code a program loads or runs. */
const LOADER_ENV = new Set(["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PATH", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT"]);

function envReasons(prepared: Record<string, unknown>): RiskReason[] {
  const env = prepared["env"];
  if (env === null || typeof env !== "object") return [];
  return Object.keys(env)
    .filter((name) => LOADER_ENV.has(name))
    .map((name) => floor("high", "env.loader", `environment variable ${name} changes which code programs load or run`));
}

function shellText(text: unknown, customRules: readonly CustomRiskRule[] | undefined): RiskReason[] {
  if (typeof text !== "string") return [floor("high", "shell.missing", "no shell text to assess")];
  return assessShellRiskSync(text, { customRules: customRules ?? [] }).reasons;
}

const shell: Assessor = (input) => [...shellText(input.prepared["command"], input.customRules), ...envReasons(input.prepared)];

const ASSESSORS: Readonly<Record<string, Assessor>> = {
  shell,
  "egress-shell": (input) => [...shell(input), floor("medium", "network.egress", "the command may reach the network (egress allow-list)")],
  code: (input) => {
    const reasons = [floor("medium", "code.run", "runs caller-supplied code")];
    // Shell code is shell text: parse it like run_command.
    if (input.prepared["language"] === "bash") reasons.push(...shellText(input.prepared["code"], input.customRules));
    return reasons;
  },
  workspace: () => [floor("low", "workspace.write", "writes a file in the host workspace")],
};

export async function assessActionRisk(input: ActionRiskInput): Promise<RiskVerdict> {
  await initShellRisk();
  return assessActionRiskSync(input);
}

/**
 * The same verdict, synchronously: the shell parser must be loaded
 * (`initShellRisk`), otherwise a plain Error is thrown. Invalid shell text
 * throws INVALID_ARGUMENT as in `assessShellRiskSync`.
 */
export function assessActionRiskSync(input: ActionRiskInput): RiskVerdict {
  if (!input.operation.mutating) {
    return { level: "read_only", reasons: [floor("read_only", "operation.read-only", `${input.operation.name} is declared read-only by its manifest`)] };
  }
  const assessor = ASSESSORS[input.capability];
  const reasons = assessor === undefined ? [floor("high", "capability.unassessed", `no risk analysis for capability ${input.capability}; mutating operations default to high`)] : assessor(input);
  const level = reasons.reduce<RiskLevel>((acc, reason) => maxRisk(acc, reason.level), "read_only");
  return { level, reasons: [...reasons].sort((a, b) => compareRisk(b.level, a.level) || a.span.start - b.span.start) };
}
