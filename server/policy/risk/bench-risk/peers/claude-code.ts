/**
 * A model of Claude Code's read-only auto-allow for the Bash tool, written
 * ONLY from what Anthropic documents publicly: Claude Code's source is not
 * published (github.com/anthropics/claude-code holds documentation,
 * plugins and the changelog; the npm package ships a bundled build), so the
 * real rules cannot be read. The source used is
 * anthropics/claude-code CHANGELOG.md at commit
 * 5cfc0a1905ce0c0a9bd81d8a90fe6b62ff614357; the entries each rule rests on
 * are quoted by their subject below.
 *
 * Because only what is documented is allowed, this model allows LESS than
 * the real product: its false-hold rate is an upper bound, its wrong
 * allows a lower bound. A command the changelog never names (cat, head,
 * echo, jq…) is held here although the product very likely allows it.
 *
 * Documented allowances modelled:
 * - programs added to "the bash auto-approval allowlist": lsof, pgrep,
 *   tput, ss, fd, fdfind; fmt, comm, cmp, numfmt, expr, test, printf,
 *   getconf, seq, tsort, pr;
 * - programs named as read-only or fixed from false prompts: grep, ls
 *   ("a failing read-only command (grep, git diff, ls)"), cut, paste,
 *   column, `awk '{print $1}' file`; `file` except with -m/--magic-file or
 *   -f/--files-from; grep/rg except `-f FILE` outside the working
 *   directory; git diff, log, show (extra log/show flags "in read-only
 *   mode") and status (read-only git runs with --no-optional-locks);
 * - glob patterns in read-only commands (`ls *.ts`); a leading
 *   `cd <project-dir> &&` (a directory inside the project); env-var
 *   prefixes only when known-safe (LANG, TZ, NO_COLOR: modelled as LANG,
 *   LC_*, TZ, NO_COLOR); compound commands split at `&&`, `||`, `;`, `|`
 *   with each part checked; an output redirect to /dev/null.
 * Not documented, so held: substitutions and variables outside sandbox
 * mode, other redirects, subshells, loops, heredocs, and the options of
 * allowed programs that write or run (`git --output`, `rg --pre`,
 * `fd --exec`), which the real product surely refuses too.
 */
import type { Node } from "web-tree-sitter";
import { basename, descendants, namedChildren, readWord, withTree } from "./syntax";

const ANY_ARGS = new Set(["lsof", "pgrep", "tput", "ss", "fd", "fdfind", "fmt", "comm", "cmp", "numfmt", "expr", "test", "printf", "getconf", "seq", "tsort", "pr", "grep", "ls", "cut", "paste", "column", "rg", "file", "awk", "git"]);
const STRUCTURE = new Set(["program", "list", "pipeline", "command", "command_name", "word", "string", "string_content", "raw_string", "number", "concatenation", "variable_assignment", "variable_name", "redirected_statement", "file_redirect", "file_descriptor", "comment"]);
const SAFE_ENV = /^(LANG|LC_[A-Z]+|TZ|NO_COLOR)$/;
const AWK_PRINT_FIELDS = /^\{\s*print(\s+\$\d+(\s*,\s*\$\d+)*)?\s*\}$/;

const outsideProject = (path: string): boolean => path.startsWith("/") || path.startsWith("~") || path === ".." || path.startsWith("../") || path.includes("/../");

function programAllowed(args: readonly string[]): boolean {
  const name = basename(args[0] ?? "");
  const rest = args.slice(1);
  if (!ANY_ARGS.has(name)) return false;
  switch (name) {
    case "file":
      return !rest.some((a) => /^(-[a-zA-Z]*[mf]|--magic-file|--files-from)/.test(a));
    case "grep":
    case "rg": {
      const i = rest.findIndex((a) => a === "-f" || a === "--file");
      if (i >= 0 && outsideProject(rest[i + 1] ?? "/")) return false;
      return !rest.some((a) => /^(--pre|--hostname-bin|--search-zip|-z)/.test(a));
    }
    case "fd":
    case "fdfind":
      return !rest.some((a) => /^(--exec|--exec-batch|-[a-zA-Z]*[xX])/.test(a));
    case "awk": {
      const program = rest.find((a) => !a.startsWith("-"));
      return program !== undefined && AWK_PRINT_FIELDS.test(program.trim()) && !rest.some((a) => a.startsWith("-") && !/^-F./.test(a));
    }
    case "git": {
      const sub = rest.find((a) => !a.startsWith("-"));
      if (rest[0] !== sub && rest[0] !== "--no-pager") return false;
      if (!["diff", "log", "show", "status"].includes(sub ?? "")) return false;
      return !rest.some((a) => /^(--output|--ext-diff|--textconv|--exec|-c)/.test(a));
    }
    default:
      return true;
  }
}

function decide(root: Node): boolean {
  if (root.hasError) return false;
  const commands: Node[] = [];
  for (const node of descendants(root)) {
    if (node.isNamed && !STRUCTURE.has(node.type)) return false;
    if (!node.isNamed && ["&", "(", ")", "<", "<<", "<<<", ">>", "&>", "`", "$(", "${"].includes(node.type)) return false;
    if (node.type === "file_redirect") {
      const target = node.childForFieldName("destination");
      if (!target || target.text !== "/dev/null") return false;
    }
    if (node.type === "command") commands.push(node);
  }
  commands.sort((a, b) => a.startIndex - b.startIndex);
  if (commands.length === 0) return false;
  return commands.every((command, index) => {
    const words: string[] = [];
    for (const child of namedChildren(command)) {
      if (child.type === "variable_assignment") {
        const name = child.childForFieldName("name")?.text ?? "";
        const value = child.childForFieldName("value");
        if (!SAFE_ENV.test(name) || (value && readWord(value, { variable: null }) === null)) return false;
        continue;
      }
      if (child.type === "file_redirect") continue;
      const node = child.type === "command_name" ? child.namedChild(0) : child;
      const word = node ? readWord(node, { variable: null }) : null;
      if (word === null) return false;
      words.push(word);
    }
    if (words[0] === "cd") return index === 0 && words.length === 2 && !outsideProject(words[1]!);
    return programAllowed(words);
  });
}

export function claudeCodeAllows(text: string): boolean {
  return withTree(text, (root) => decide(root));
}
