/**
 * Step 5 of "The life of one action": the risk of a prepared action.
 *
 * The verdict comes from the prepared arguments only — the caller's or the
 * model's own risk claim is never read. Which analysis applies is data: a
 * table from capability id to an assessor, so the pipeline has no branch on
 * operation names. Floors from docs/design.md#risk:
 * - an operation the manifest declares non-mutating is `read_only`;
 * - shell text (`command`) is parsed by `assessShellRisk` (custom rules may
 *   only raise it); the whole prepared action is assessed, not only the text:
 *   `env` (a variable off the presentational allow-list is medium, one that
 *   makes programs run or load code is high — environment.ts), `stdin` (a
 *   shell reading it runs it, so it is parsed as shell; another interpreter
 *   reading it is dynamic execution) and `cwd` (read and named in a reason);
 * - `egress-shell` is at least `medium` (it reaches the network);
 * - `run_code` is at least `medium`; bash code is also parsed as shell;
 * - `fs_write` (any mutating workspace operation) is at least `low`;
 * - a mutating operation of a capability with no assessor is `high`;
 * - every host path the policy mounts is named in a reason (docs/design.md#host-paths):
 *   a `rw` label raises the action to at least `medium`, naming the host path
 *   that becomes writable; `rollback` is always `high` (it replaces the
 *   label's tree) and is held for a person (server/policy/decide.ts).
 */
import type { CompiledMount, OperationDeclaration } from "../capabilities";
import { ROLLBACK_OPERATION } from "../trust/host-paths";
import { ROLLBACK_RULE } from "./risk/host-paths";
import { assessShellRiskSync, compareRisk, initShellRisk, maxRisk, type CustomRiskRule, type RiskLevel, type RiskReason, type RiskVerdict } from "./risk";
import { envFindings } from "./risk/environment";
import { invisibleCharacterReasons } from "./risk/invisible";

export interface ActionRiskInput {
  capability: string;
  operation: Pick<OperationDeclaration, "name" | "mutating">;
  prepared: Record<string, unknown>;
  customRules?: readonly CustomRiskRule[];
  /** The host paths the compiled policy binds (policy `mounts`). */
  mounts?: readonly CompiledMount[];
}

type Assessor = (input: ActionRiskInput) => RiskReason[];

const NO_SPAN = { start: 0, end: 0, line: 1, column: 1 } as const;

function floor(level: RiskLevel, rule: string, message: string): RiskReason {
  return { level, rule, message, span: { ...NO_SPAN } };
}

function envReasons(prepared: Record<string, unknown>): RiskReason[] {
  return envFindings(prepared["env"]).map((f) => floor(f.level, f.rule, f.message));
}

/** The working directory is read and shown: relative paths in the command resolve there. It is not harmful by itself. */
function cwdReasons(prepared: Record<string, unknown>): RiskReason[] {
  const cwd = prepared["cwd"];
  if (cwd === undefined) return [];
  if (typeof cwd !== "string") return [floor("high", "action.cwd", "the working directory is not a path; it cannot be assessed")];
  return [floor("read_only", "action.cwd", `runs in the workspace directory ${JSON.stringify(cwd)}; relative paths in the command resolve there`)];
}

function stdinOf(prepared: Record<string, unknown>): string | undefined {
  const stdin = prepared["stdin"];
  return typeof stdin === "string" ? stdin : undefined;
}

function stdinReasons(prepared: Record<string, unknown>): RiskReason[] {
  const stdin = prepared["stdin"];
  if (stdin === undefined || stdin === "") return [];
  if (typeof stdin !== "string") return [floor("high", "action.stdin", "stdin is not text; it cannot be assessed")];
  return [floor("read_only", "action.stdin", `feeds ${stdin.length} characters to the command's stdin; a shell or interpreter reading stdin runs them, and the text is assessed as such`)];
}

function shellText(text: unknown, customRules: readonly CustomRiskRule[] | undefined, stdin?: string): RiskReason[] {
  if (typeof text !== "string") return [floor("high", "shell.missing", "no shell text to assess")];
  return assessShellRiskSync(text, stdin === undefined ? { customRules: customRules ?? [] } : { customRules: customRules ?? [], stdin }).reasons;
}

const shell: Assessor = (input) => [
  ...shellText(input.prepared["command"], input.customRules, stdinOf(input.prepared)),
  ...envReasons(input.prepared),
  ...stdinReasons(input.prepared),
  ...cwdReasons(input.prepared),
];


/** One reason per mounted host path: what becomes readable, or writable (at least medium). */
function mountReasons(mounts: readonly CompiledMount[] | undefined): RiskReason[] {
  return (mounts ?? []).map((mount) =>
    mount.mode === "rw"
      ? floor("medium", "host_path.rw", `host path ${mount.path} (label ${mount.label}) becomes writable; the guest snapshots it before the job runs`)
      : floor("read_only", "host_path.ro", `host path ${mount.path} (label ${mount.label}) becomes readable`),
  );
}

function workspaceReasons(input: ActionRiskInput): RiskReason[] {
  if (input.operation.name === ROLLBACK_OPERATION) {
    const mount = input.mounts?.[0];
    const where = mount === undefined ? `label ${String(input.prepared["label"])}` : `host path ${mount.path} (label ${mount.label})`;
    return [floor("high", ROLLBACK_RULE, `restores ${where} to snapshot ${String(input.prepared["snapshot_id"])}: everything written there since is replaced`)];
  }
  const path = input.prepared["path"];
  const label = typeof path === "string" && /^[a-z][a-z0-9_-]{0,31}:/.test(path) ? path.slice(0, path.indexOf(":")) : null;
  return [floor("low", "workspace.write", label === null ? "writes a file in the host workspace" : `writes a file under host path label ${label}`)];
}

const ASSESSORS: Readonly<Record<string, Assessor>> = {
  shell,
  "egress-shell": (input) => [...shell(input), floor("medium", "network.egress", "the command may reach the network (egress allow-list)")],
  code: (input) => {
    const reasons = [floor("medium", "code.run", "runs caller-supplied code")];
    // Shell code is shell text: parse it like run_command.
    if (input.prepared["language"] === "bash") reasons.push(...shellText(input.prepared["code"], input.customRules, stdinOf(input.prepared)));
    reasons.push(...envReasons(input.prepared), ...stdinReasons(input.prepared), ...cwdReasons(input.prepared));
    return reasons;
  },
  workspace: workspaceReasons,
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
    // A read-only operation never gets a rw label (compileMounts refuses it), so its mounts only add what becomes readable.
    return { level: "read_only", reasons: [floor("read_only", "operation.read-only", `${input.operation.name} is declared read-only by its manifest`), ...mountReasons(input.mounts)] };
  }
  const assessor = ASSESSORS[input.capability];
  const reasons = assessor === undefined ? [floor("high", "capability.unassessed", `no risk analysis for capability ${input.capability}; mutating operations default to high`)] : assessor(input);
  // A rollback's one rw mount is the label it restores, already named by its own reason.
  if (input.operation.name !== ROLLBACK_OPERATION) reasons.push(...mountReasons(input.mounts));
  reasons.push(...invisibleCharacterReasons(input.prepared));
  const level = reasons.reduce<RiskLevel>((acc, reason) => maxRisk(acc, reason.level), "read_only");
  return { level, reasons: [...reasons].sort((a, b) => compareRisk(b.level, a.level) || a.span.start - b.span.start) };
}
