/**
 * A model of Gemini CLI's auto-allow for `run_shell_command` under its
 * default policies, interactive, in a trusted folder, on Linux.
 *
 * Read from google-gemini/gemini-cli at commit
 * 5411f113cafae26161b4969b0237b8e1e024e2c2:
 *   packages/core/src/policy/policies/write.toml (run_shell_command is
 *     `ask_user` by default; read-only.toml allows no shell command)
 *   packages/core/src/policy/policy-engine.ts (`applyShellHeuristics`,
 *     `checkShellCommand`, `check`)
 *   packages/core/src/sandbox/utils/commandSafety.ts (`isKnownSafeCommand`,
 *     `isSafeToCallWithExec`, `findGitSubcommand`, `gitBranchIsReadOnly`)
 *   packages/core/src/services/sandboxManager.ts (NoopSandboxManager, the
 *     manager without a sandbox, uses commandSafety.ts's list on Linux)
 *   packages/core/src/utils/shell-utils.ts (`parseCommandDetails`,
 *     `hasRedirection`)
 *
 * What it does, in our words: the heuristics turn `ask_user` into `allow`
 * when the whole text, split into words by shell-quote, is a known-safe
 * argv. `checkShellCommand` then re-checks every command the parser finds
 * that is not the whole text (pipeline stages, `&&` parts, commands inside
 * `$( )`, subshells, heredoc-fed commands) with the heuristics switched
 * off, so each of those is `ask_user`: in effect only a single simple
 * command with no redirection is ever allowed. The known-safe argv list:
 * cat, cd, cut, echo, expr, false, grep, head, id, ls, nl, paste, pwd, rev,
 * seq, stat, tail, tr, true, uname, uniq, wc, which, whoami, numfmt, tac;
 * base64 without an output option; find without exec/delete/fprint
 * primaries; rg only when named by an absolute path in a trusted system
 * directory (a bare `rg` is not allowed); git status/log/diff/show/branch
 * as in Codex; `sed -n Np`. shell-quote replaces `$VAR` with the empty
 * string (no environment is passed), which this model copies.
 */
import type { Node } from "web-tree-sitter";
import { basename, commandWords, descendants, withTree } from "./syntax";

const SAFE = new Set(["cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl", "paste", "pwd", "rev", "seq", "stat", "tail", "tr", "true", "uname", "uniq", "wc", "which", "whoami", "numfmt", "tac"]);
const FIND_UNSAFE = new Set(["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf"]);
const GIT_UNSAFE = new Set(["--output", "--ext-diff", "--textconv", "--exec", "--paginate"]);
const GIT_BRANCH_LISTING = new Set(["--list", "-l", "--show-current", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose"]);
const GIT_GLOBAL_WITH_VALUE = new Set(["-C", "-c", "--config-env", "--exec-path", "--git-dir", "--namespace", "--super-prefix", "--work-tree"]);
const GIT_GLOBAL_INLINE = ["--config-env=", "--exec-path=", "--git-dir=", "--namespace=", "--super-prefix=", "--work-tree="];
/** Node types `parseCommandDetails` reports as commands (the rest it names are redirections and substitutions). */
const COMMAND_DETAILS = new Set(["command", "declaration_command", "unset_command", "test_command"]);
const REDIRECTS = new Set(["redirected_statement", "file_redirect", "heredoc_redirect", "herestring_redirect"]);
const TRUSTED_BIN = /^\/(usr\/)?(local\/)?s?bin\//;

function gitSafe(args: readonly string[]): boolean {
  if (args.some((a) => a === "-c" || a === "--config-env" || (a.startsWith("-c") && a.length > 2) || a.startsWith("--config-env="))) return false;
  let skipNext = false;
  for (let i = 1; i < args.length; i++) {
    if (skipNext) {
      skipNext = false;
      continue;
    }
    const a = args[i]!;
    if (GIT_GLOBAL_INLINE.some((p) => a.startsWith(p)) || ((a.startsWith("-C") || a.startsWith("-c")) && a.length > 2)) continue;
    if (GIT_GLOBAL_WITH_VALUE.has(a)) {
      skipNext = true;
      continue;
    }
    if (a === "--" || a.startsWith("-")) continue;
    if (!["status", "log", "diff", "show", "branch"].includes(a)) return false;
    const rest = args.slice(i + 1);
    const readOnly = !rest.some((r) => GIT_UNSAFE.has(r) || r.startsWith("--output=") || r.startsWith("--exec="));
    if (a !== "branch") return readOnly;
    if (rest.length === 0) return readOnly;
    let sawListing = false;
    for (const r of rest) {
      if (GIT_BRANCH_LISTING.has(r) || r.startsWith("--format=")) sawListing = true;
      else return false;
    }
    return readOnly && sawListing;
  }
  return false;
}

export function geminiSafeArgv(args: readonly string[]): boolean {
  const cmd = args[0];
  if (cmd === undefined) return false;
  if (SAFE.has(cmd)) return true;
  if (cmd === "base64") return !args.slice(1).some((a) => a === "-o" || a === "--output" || a.startsWith("--output=") || (a.startsWith("-o") && a !== "-o"));
  if (cmd === "find") return !args.some((a) => FIND_UNSAFE.has(a));
  if (basename(cmd) === "rg") {
    if (!TRUSTED_BIN.test(cmd)) return false;
    return !args.some((a) => a === "--search-zip" || a === "-z" || ["--pre", "--hostname-bin"].some((o) => a === o || a.startsWith(`${o}=`)));
  }
  if (cmd === "git") return gitSafe(args);
  if (cmd === "sed") return args.length <= 4 && args[1] === "-n" && /^(\d+,)?\d+p$/.test(args[2] ?? "");
  return false;
}

function decide(root: Node, text: string): boolean {
  if (root.hasError) return false;
  const nodes = descendants(root);
  if (nodes.some((n) => REDIRECTS.has(n.type))) return false;
  const details = nodes.filter((n) => COMMAND_DETAILS.has(n.type));
  if (details.length !== 1) return false;
  const only = details[0]!;
  if (only.text.trim() !== text.trim()) return false;
  if (only.type !== "command") return false;
  const words = commandWords(only, { variable: "" });
  if (words === null) return false;
  // A shell wrapper is re-checked without the heuristics, so it is asked.
  if (["bash", "sh", "zsh"].includes(words[0] ?? "") && ["-c", "-lc"].includes(words[1] ?? "")) return false;
  return geminiSafeArgv(words);
}

export function geminiAllows(text: string): boolean {
  return withTree(text, (root) => decide(root, text));
}
