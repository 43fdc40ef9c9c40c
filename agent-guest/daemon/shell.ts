/**
 * The one shell that runs agent shell text (`run_command`, `run_command_net`).
 *
 * The hub's risk gate parses that text with tree-sitter-bash, so the text
 * must run under bash and nothing else: under dash `((id))` runs `id` (a
 * subshell in a subshell) while the gate reads arithmetic, and `((sh))` with
 * stdin runs any script the gate never saw. Hence:
 *
 * - always `/bin/bash --norc --noprofile -c TEXT` — never `/bin/sh`, never a
 *   fallback: a host without bash refuses `UNENFORCEABLE` and reports its
 *   shell capabilities not ready (`health.ts`);
 * - no start-up code and no parsing switches from the environment: bash
 *   sources `BASH_ENV` for `-c` (and `ENV` in POSIX mode) before the text,
 *   and `SHELLOPTS`, `BASHOPTS`, `POSIXLY_CORRECT` and `BASH_COMPAT` change
 *   how the text is parsed or expanded (`extglob`, POSIX mode, compatibility
 *   levels). An action's `env` naming any of them is refused
 *   (`INVALID_ARGUMENT` naming the variable) — not stripped, so the caller
 *   learns that what it asked for does not run. The hub's input schema
 *   refuses them first; this is the guest's own check. The sandbox starts
 *   the workload with exactly the policy's environment (native helper), so
 *   nothing else can put them there.
 */
import fs from "node:fs";
import { LeaseholdError } from "../../server/trust";

export const AGENT_SHELL = "/bin/bash";

/** Variables that run code before the text or change how bash parses it. */
export const SHELL_START_UP_VARIABLES: readonly string[] = ["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "BASH_COMPAT"];

export function agentShellArgv(text: string): string[] {
  return [AGENT_SHELL, "--norc", "--noprofile", "-c", text];
}

/** The action's `env` for the workload; refuses a variable that bash reads at start-up. */
export function agentShellEnv(env: unknown): Record<string, string> {
  if (env === undefined || env === null) return {};
  if (typeof env !== "object" || Array.isArray(env)) throw new LeaseholdError("INVALID_ARGUMENT", "env must be an object of strings", { tier: "guest", details: { field: "env" } });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env as Record<string, unknown>)) {
    if (SHELL_START_UP_VARIABLES.includes(name)) {
      throw new LeaseholdError("INVALID_ARGUMENT", `env ${name} is refused: bash reads it at start-up (start-up code or parsing switches), so the text would not run as the hub assessed it`, {
        tier: "guest",
        details: { field: `env.${name}` },
      });
    }
    if (typeof value !== "string") throw new LeaseholdError("INVALID_ARGUMENT", `env ${name} must be a string`, { tier: "guest", details: { field: `env.${name}` } });
    out[name] = value;
  }
  return out;
}

/**
 * Why this host cannot run agent shell text, or null when it can. The
 * sandbox's root is the host's own /usr (and /bin) read-only, so the host's
 * file is what runs inside; it must be a regular file everyone may execute
 * (the workload runs as an unprivileged lease uid).
 */
export function agentShellProblem(path = AGENT_SHELL): string | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    return `${path} is not available on this host (${code}); agent shell text runs only under bash, the dialect the hub's risk gate parses, never under /bin/sh — install bash`;
  }
  if (!st.isFile()) return `${path} is not a regular file; agent shell text runs only under bash, the dialect the hub's risk gate parses`;
  if ((st.mode & 0o001) === 0) return `${path} is not executable by other users (mode ${(st.mode & 0o7777).toString(8)}); the sandboxed workload runs as an unprivileged uid`;
  return null;
}

/** Refuses (UNENFORCEABLE) when this host cannot run agent shell text as bash. */
export function requireAgentShell(path = AGENT_SHELL): void {
  const problem = agentShellProblem(path);
  if (problem !== null) throw new LeaseholdError("UNENFORCEABLE", problem, { tier: "guest", details: { shell: path } });
}
