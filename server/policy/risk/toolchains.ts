import type { RiskLevel } from "./levels";
import type { ArgValue } from "./options";
import type { ProgramFinding } from "./programs";

/**
 * Read-only forms of tools that otherwise build, run or change things:
 * a compiler or runtime asked only for its version, the GitHub CLI's
 * viewing verbs, and `fd` without `--exec`. Everything else they do is
 * rated by what it is (compiling writes, a runtime runs code, `gh` changes
 * GitHub), never read-only.
 */

function finding(level: RiskLevel, rule: string, message: string, arg?: number): ProgramFinding {
  return arg === undefined ? { kind: "finding", level, rule, message } : { kind: "finding", level, rule, message, arg };
}
const readOnly = (message: string): ProgramFinding => finding("read_only", "command.read-only", message);

const VERSION_WORDS = new Set(["--version", "-version", "--help", "-help", "-V", "-dumpversion", "-dumpfullversion", "-dumpmachine", "--print-sysroot"]);

/** Compilers: the sole argument prints the version; anything else compiles (writes) and may load plugins. */
export const COMPILERS = ["gcc", "g++", "cc", "c++", "clang", "clang++", "rustc", "javac", "tsc", "swiftc", "kotlinc", "zig", "nasm", "as", "ld"];
/** Runtimes: the sole argument prints the version; anything else runs code. */
export const RUNTIMES = ["java", "dotnet-script", "erl", "elixir", "scala", "julia", "ghc", "ocaml"];

export function toolchainFindings(name: string, args: readonly ArgValue[]): ProgramFinding[] {
  if (args.length === 1 && args[0] !== null && VERSION_WORDS.has(args[0]!)) return [readOnly(`${name} prints its version`)];
  if (RUNTIMES.includes(name)) return [finding("high", "dynamic.script-file", `${name} runs a program, whose code is not visible here`)];
  return [finding("medium", "command.writes", `${name} compiles (writes its output; plugins and build scripts can run code)`)];
}

/** gh: command group → verbs that only read from GitHub. */
const GH_READ: Readonly<Record<string, readonly string[]>> = {
  pr: ["view", "list", "status", "diff", "checks"],
  issue: ["view", "list", "status"],
  repo: ["view", "list"],
  release: ["view", "list"],
  run: ["view", "list"],
  workflow: ["view", "list"],
  gist: ["view", "list"],
  label: ["list"],
  search: ["repos", "issues", "prs", "commits", "code"],
  auth: ["status"],
  cache: ["list"],
  variable: ["list"],
  ruleset: ["view", "list", "check"],
};
/** Options that open a browser (a program the host chooses) or print a secret. */
const GH_HAZARDS = /^(-w|--web|--show-token|-t)$|^-[a-zA-Z]*w$/;

export function ghFindings(args: readonly ArgValue[]): ProgramFinding[] {
  if (args.length === 1 && (args[0] === "--version" || args[0] === "version" || args[0] === "--help")) return [readOnly("gh prints its version or help")];
  const group = args[0];
  const verb = args[1];
  const verbs = group ? GH_READ[group] : undefined;
  if (group === null || verb === null) return [finding("high", "command.dynamic-subcommand", "the gh command is only known at run time")];
  if (!verbs || verb === undefined || !verbs.includes(verb)) return [{ kind: "finding", level: "high", rule: "network.upload", message: `gh ${group ?? ""} ${verb ?? ""} may change GitHub or the checkout (only viewing verbs are read-only)`.replace(/ +/g, " ") }];
  const out: ProgramFinding[] = [];
  args.slice(2).forEach((a, k) => {
    if (a === null) out.push(finding("medium", "option.dynamic", "gh: a word only known at run time may be an option such as --web", k + 2));
    else if (GH_HAZARDS.test(a)) out.push(finding("medium", "option.unknown", `gh ${group} ${verb} ${a}: opens a browser or prints a token`, k + 2));
  });
  return out.length ? out : [readOnly(`gh ${group} ${verb} only reads from GitHub`)];
}

/** fd: `-x`/`--exec` and `-X`/`--exec-batch` run a command on the matches (the rest of the line). */
export function fdExecIndex(args: readonly ArgValue[]): number | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === null || a === undefined) return i;
    if (a === "--") return null;
    if (a === "--exec" || a === "--exec-batch" || (/^-[a-zA-Z]+$/.test(a) && /[xX]/.test(a))) return i;
  }
  return null;
}
