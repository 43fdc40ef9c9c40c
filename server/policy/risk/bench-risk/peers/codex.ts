/**
 * A model of Codex's auto-allow rule, `is_known_safe_command`, for a shell
 * text the agent runs as `bash -lc TEXT` on Linux.
 *
 * Read from openai/codex:
 *   codex-rs/shell-command/src/command_safety/is_safe_command.rs
 *     (blob at commit 55dfa3cf21334eaff76491c6eb5f4d2939c7e6ad)
 *   codex-rs/shell-command/src/bash.rs, `parse_shell_lc_plain_commands`
 *     (commit 4935b35404794c14b4aa267ccb48adee9981153d)
 *   codex-rs/shell-command/src/command_safety/is_dangerous_command.rs,
 *     `find_git_subcommand` (commit 52344a5d24847fa407a9fa49d61bd298b5f6ff8a)
 *
 * What it does, in our words: the text must parse without error and contain
 * only plain commands — words, quoted strings without expansions, numbers —
 * joined by `&&`, `||`, `;` and `|` (no redirection, substitution, variable,
 * subshell, assignment or control flow). Every command must then be on a
 * fixed list (cat, cd, cut, echo, expr, false, grep, head, id, ls, nl,
 * paste, pwd, rev, seq, stat, tail, tr, true, uname, uniq, wc, which,
 * whoami; numfmt and tac on Linux) or pass a per-program check: base64
 * without an output option, find without -exec/-execdir/-ok/-okdir/-delete/
 * -fls/-fprint*, rg without --pre/--hostname-bin/--search-zip/-z, git
 * status/log/diff/show/branch (listing forms only) without -c/--config-env
 * and without --output/--ext-diff/--textconv/--exec/--paginate, and
 * `sed -n Np` / `sed -n M,Np` with at most one file. The Windows list does
 * not apply on Linux and is not modelled.
 */
import type { Node } from "web-tree-sitter";
import { basename, descendants, namedChildren, readWord, withTree } from "./syntax";

const ALLOWED_KINDS = new Set(["program", "list", "pipeline", "command", "command_name", "word", "string", "string_content", "raw_string", "number", "concatenation"]);
const ALLOWED_PUNCTUATION = new Set(["&&", "||", ";", "|", '"', "'"]);

const ALWAYS_SAFE = new Set(["cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl", "paste", "pwd", "rev", "seq", "stat", "tail", "tr", "true", "uname", "uniq", "wc", "which", "whoami", "numfmt", "tac"]);
const FIND_UNSAFE = new Set(["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf"]);
const GIT_UNSAFE = new Set(["--output", "--ext-diff", "--textconv", "--exec", "--paginate"]);
const GIT_BRANCH_LISTING = new Set(["--list", "-l", "--show-current", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose"]);
const GIT_GLOBAL_WITH_VALUE = new Set(["-C", "-c", "--config-env", "--exec-path", "--git-dir", "--namespace", "--super-prefix", "--work-tree"]);
const GIT_GLOBAL_INLINE = ["--config-env=", "--exec-path=", "--git-dir=", "--namespace=", "--super-prefix=", "--work-tree="];

/** Plain word-only commands, or null when the text holds anything else. */
function plainCommands(root: Node): string[][] | null {
  if (root.hasError) return null;
  const commands: Node[] = [];
  for (const node of descendants(root)) {
    if (node.isNamed) {
      if (!ALLOWED_KINDS.has(node.type)) return null;
      if (node.type === "command") commands.push(node);
    } else if (!ALLOWED_PUNCTUATION.has(node.type) && node.type.trim() !== "") {
      return null;
    }
  }
  commands.sort((a, b) => a.startIndex - b.startIndex);
  const out: string[][] = [];
  for (const command of commands) {
    const words: string[] = [];
    for (const child of namedChildren(command)) {
      const node = child.type === "command_name" ? child.namedChild(0) : child;
      if (!node || (child.type === "command_name" && node.type !== "word")) return null;
      // Codex keeps an unquoted word's text as written (no backslash removal).
      const word = node.type === "word" || node.type === "number" ? node.text : readWord(node, { variable: null });
      if (word === null) return null;
      words.push(word);
    }
    out.push(words);
  }
  return out;
}

function findGitSubcommand(args: readonly string[], wanted: readonly string[]): number | null {
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
    return wanted.includes(a) ? i : null;
  }
  return null;
}

const gitArgsReadOnly = (args: readonly string[]): boolean => !args.some((a) => GIT_UNSAFE.has(a) || a.startsWith("--output=") || a.startsWith("--exec="));

function gitBranchListing(args: readonly string[]): boolean {
  if (args.length === 0) return true;
  let sawListing = false;
  for (const a of args) {
    if (GIT_BRANCH_LISTING.has(a) || a.startsWith("--format=")) sawListing = true;
    else return false;
  }
  return sawListing;
}

const SED_PRINT = /^(\d+,)?\d+p$/;

export function codexSafeArgv(args: readonly string[]): boolean {
  const first = args[0];
  if (first === undefined) return false;
  const name = basename(first);
  if (ALWAYS_SAFE.has(name)) return true;
  const rest = args.slice(1);
  switch (name) {
    case "base64":
      return !rest.some((a) => a === "-o" || a === "--output" || a.startsWith("--output=") || (a.startsWith("-o") && a !== "-o"));
    case "find":
      return !args.some((a) => FIND_UNSAFE.has(a));
    case "rg":
      return !args.some((a) => a === "--search-zip" || a === "-z" || ["--pre", "--hostname-bin"].some((o) => a === o || a.startsWith(`${o}=`)));
    case "git": {
      if (args.some((a) => a === "-c" || a === "--config-env" || (a.startsWith("-c") && a.length > 2) || a.startsWith("--config-env="))) return false;
      const at = findGitSubcommand(args, ["status", "log", "diff", "show", "branch"]);
      if (at === null) return false;
      const sub = args.slice(at + 1);
      return args[at] === "branch" ? gitArgsReadOnly(sub) && gitBranchListing(sub) : gitArgsReadOnly(sub);
    }
    case "sed":
      return args.length <= 4 && args[1] === "-n" && SED_PRINT.test(args[2] ?? "");
    default:
      return false;
  }
}

export function codexAllows(text: string): boolean {
  const commands = withTree(text, (root) => plainCommands(root));
  return commands !== null && commands.length > 0 && commands.every(codexSafeArgv);
}
