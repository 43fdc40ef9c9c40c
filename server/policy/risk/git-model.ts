import type { RiskLevel } from "./levels";
import { readOptions, type ArgValue, type OptionTable } from "./options";
import { writeTarget, type ProgramFinding } from "./programs";

/**
 * git's reading subcommands. Small ones are modelled by their real option
 * table (from git's own `OPT_*` declarations): an option outside it is
 * unknown, and a long option is resolved the way parse-options resolves it —
 * exact, or the one option it is an unambiguous prefix of (`--up=` is
 * `--upload-pack=`, `--e` is ls-remote's hidden `--exec`). The log and diff
 * families take hundreds of options, so they are checked against their
 * hazards instead: any prefix of a hazard counts as the hazard (git refuses
 * an ambiguous one, so a false alarm there costs nothing).
 */

function finding(level: RiskLevel, rule: string, message: string, arg?: number): ProgramFinding {
  return arg === undefined ? { kind: "finding", level, rule, message } : { kind: "finding", level, rule, message, arg };
}

interface Hazard {
  level: RiskLevel;
  rule: string;
  message: string;
  /** The value is a file the option writes. */
  writes?: boolean;
}

const OUTPUT: Hazard = { level: "low", rule: "command.writes", message: "writes its output to a file", writes: true };
const EXT_DIFF: Hazard = { level: "medium", rule: "dynamic.git-config", message: "runs the external diff program that configuration or GIT_EXTERNAL_DIFF names" };
const RUNS: (what: string) => Hazard = (what) => ({ level: "high", rule: "dynamic.interpreter-code", message: `runs ${what}` });

/** Long hazards of the log/diff family; short letters are listed per subcommand where git has one. */
const LOG_DIFF_HAZARDS: Readonly<Record<string, Hazard>> = { output: OUTPUT, "ext-diff": EXT_DIFF, textconv: { level: "medium", rule: "dynamic.git-config", message: "runs the textconv filters that configuration names" } };

interface HazardModel {
  longs: Readonly<Record<string, Hazard>>;
  /** Short letters that are hazards (`grep -O`): the value, if any, is attached. */
  shorts?: Readonly<Record<string, Hazard>>;
  /** Short letters that take a value, so a hazard letter after them is part of the value (`-eO`). */
  values?: string;
}

const HAZARD_MODELS: Readonly<Record<string, HazardModel>> = {
  log: { longs: LOG_DIFF_HAZARDS, values: "nLGSOlUMCB" },
  show: { longs: LOG_DIFF_HAZARDS, values: "nLGSOlUMCB" },
  diff: { longs: LOG_DIFF_HAZARDS, values: "GSOlUMCB" },
  whatchanged: { longs: LOG_DIFF_HAZARDS, values: "nLGSOlUMCB" },
  "range-diff": { longs: LOG_DIFF_HAZARDS },
  shortlog: { longs: { output: OUTPUT } },
  blame: { longs: { "ext-diff": EXT_DIFF, textconv: LOG_DIFF_HAZARDS.textconv!, contents: { level: "read_only", rule: "command.read-only", message: "reads the named file" } } },
  grep: { longs: { "open-files-in-pager": RUNS("the named pager on the matching files"), "ext-grep": RUNS("an external grep"), textconv: LOG_DIFF_HAZARDS.textconv! }, shorts: { O: RUNS("the named pager on the matching files") }, values: "ABCefm" },
  "cat-file": { longs: { textconv: LOG_DIFF_HAZARDS.textconv!, filters: { level: "medium", rule: "dynamic.git-config", message: "runs the clean/smudge filters that configuration names" } } },
  fsck: { longs: { "lost-found": { level: "low", rule: "command.writes", message: "writes objects into .git/lost-found" } } },
};

function hazardScan(sub: string, model: HazardModel, rest: readonly ArgValue[], offset: number, out: ProgramFinding[]): void {
  const values = new Set(model.values ?? "");
  for (let k = 0; k < rest.length; k++) {
    const a = rest[k];
    const at = offset + k;
    if (a === null || a === undefined) {
      out.push(finding("medium", "option.dynamic", `git ${sub}: a word only known at run time may be an option that writes or runs something`, at));
      continue;
    }
    if (a === "--") break;
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const typed = eq === -1 ? a.slice(2) : a.slice(2, eq);
      for (const [long, hz] of Object.entries(model.longs)) {
        if (typed === "" || !long.startsWith(typed) || hz.level === "read_only") continue;
        out.push(finding(hz.level, hz.rule, `git ${sub} --${long}: ${hz.message}`, at));
        if (hz.writes) {
          const value = eq !== -1 ? a.slice(eq + 1) : (rest[k + 1] ?? null);
          out.push(...writeTarget(value, eq !== -1 ? at : at + 1, "git writes"));
        }
      }
      continue;
    }
    if (!a.startsWith("-") || a.length < 2) continue;
    for (let j = 1; j < a.length; j++) {
      const hz = model.shorts?.[a[j]!];
      if (hz) {
        out.push(finding(hz.level, hz.rule, `git ${sub} -${a[j]}: ${hz.message}`, at));
        break;
      }
      if (values.has(a[j]!)) break;
    }
  }
}

/** Subcommands (and sub-verbs) that are read-only with exactly these options. */
const TABLES: Readonly<Record<string, OptionTable & { hazards?: Readonly<Record<string, Hazard>>; maxOperands?: number }>> = {
  "ls-remote": {
    flags: "qhtb",
    values: "ou",
    longs: ["quiet", "heads", "branches", "tags", "refs", "upload-pack=", "exec=", "get-url", "sort=", "symref", "server-option=", "exit-code", "no-quiet", "no-heads", "no-tags", "no-refs", "no-symref", "no-exit-code"],
    abbreviate: true,
    hazards: { "--upload-pack": RUNS("the named program as git-upload-pack (a shell command line)"), "--exec": RUNS("the named program as git-upload-pack (a shell command line)"), "-u": RUNS("the named program as git-upload-pack (a shell command line)") },
  },
  "branch-list": {
    flags: "arvlqi",
    longs: ["all", "remotes", "verbose", "list", "quiet", "ignore-case", "show-current", "contains=", "no-contains=", "merged=", "no-merged=", "points-at=", "sort=", "format=", "color?", "no-color", "column?", "no-column", "abbrev?", "no-abbrev", "omit-empty"],
    abbreviate: true,
  },
  "config-read": {
    flags: "lz",
    values: "f",
    longs: ["get", "get-all", "get-regexp", "get-urlmatch", "get-color", "get-colorbool", "list", "global", "system", "local", "worktree", "file=", "blob=", "type=", "bool", "int", "bool-or-int", "path", "expiry-date", "null", "name-only", "show-origin", "show-scope", "includes", "no-includes", "default=", "fixed-value"],
    abbreviate: true,
    maxOperands: 2,
  },
  "worktree-list": { flags: "vz", longs: ["porcelain", "verbose", "expire=", "z"], abbreviate: true, maxOperands: 0 },
  "submodule-status": { flags: "q", longs: ["quiet", "cached", "recursive"], abbreviate: false },
};

/** Reads `rest` against a table: findings, or [] when every word is a known reading option or operand. */
function tableScan(sub: string, key: string, rest: readonly ArgValue[], offset: number, out: ProgramFinding[]): number[] {
  const table = TABLES[key]!;
  const read = readOptions(rest, table);
  for (const i of read.unknown) out.push(finding("medium", "option.unknown", `git ${sub} ${rest[i]}: not one of its reading options (an unknown or ambiguous option)`, offset + i));
  for (const i of read.dynamic) out.push(finding("medium", "option.dynamic", `git ${sub}: a word only known at run time may be an option that writes or runs something`, offset + i));
  for (const o of read.options) {
    const hz = table.hazards?.[o.name];
    if (hz) out.push(finding(hz.level, hz.rule, `git ${sub} ${o.name}: ${hz.message}`, offset + o.index));
  }
  if (table.maxOperands !== undefined && read.operands.length > table.maxOperands) out.push(finding("medium", "command.writes", `git ${sub}: more operands than its query takes, so it sets or changes something`, offset + read.operands[table.maxOperands]!));
  return read.operands.filter((i) => !read.dynamic.includes(i));
}

export const GIT_READ = new Set(["status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree", "ls-remote", "describe", "shortlog", "grep", "reflog", "cat-file", "rev-list", "name-rev", "merge-base", "for-each-ref", "show-ref", "count-objects", "fsck", "whatchanged", "version", "help", "var", "check-ignore", "cherry", "range-diff", "verify-commit", "verify-tag"]);

/**
 * Findings for a git subcommand that may only read; null when `sub` has no
 * reading form here (the caller rates it as a change). An empty array means
 * read-only.
 */
export function gitReadFindings(sub: string, rest: readonly ArgValue[], offset: number): ProgramFinding[] | null {
  const out: ProgramFinding[] = [];
  if (sub === "ls-remote") {
    tableScan(sub, "ls-remote", rest, offset, out);
    return out;
  }
  if (GIT_READ.has(sub)) {
    const model = HAZARD_MODELS[sub];
    if (model) hazardScan(sub, model, rest, offset, out);
    else hazardScan(sub, { longs: {} }, rest, offset, out);
    if (sub === "help") {
      for (let k = 0; k < rest.length; k++) {
        const a = rest[k];
        if (a && (/^-[a-zA-Z]*[wmi]/.test(a) || /^--(w|we|web|m|ma|man|i|in|inf|info)$/.test(a))) out.push(finding("medium", "dynamic.git-config", "git help opens a viewer program", offset + k));
      }
    }
    if (sub === "reflog" && (rest[0] === "expire" || rest[0] === "delete")) out.push(finding("high", "command.deletes", `git reflog ${rest[0]} removes reflog entries (recovery points)`, offset));
    else if (sub === "reflog" && rest[0] && !rest[0].startsWith("-") && !["show", "list", "exists"].includes(rest[0]) && !/^[A-Za-z0-9_./@{}~^-]+$/.test(rest[0])) out.push(finding("medium", "option.unknown", `git reflog ${rest[0]} is not a known reading subcommand`, offset));
    return out;
  }
  switch (sub) {
    case "stash": {
      // `stash list` takes log options and `stash show` diff options, including --output and --ext-diff.
      if (rest[0] === "list") hazardScan("stash list", HAZARD_MODELS.log!, rest.slice(1), offset + 1, out);
      else if (rest[0] === "show") hazardScan("stash show", HAZARD_MODELS.diff!, rest.slice(1), offset + 1, out);
      else return null;
      return out;
    }
    case "branch": {
      const operands = tableScan(sub, "branch-list", rest, offset, out);
      // An option outside the listing table (--set-upstream-to, --edit-description, -m) changes a branch.
      if (out.some((f) => f.rule === "option.unknown")) return null;
      const listing = rest.some((a) => a === "-l" || a === "--list" || (a !== null && /^-[a-z]*l/.test(a) && !a.startsWith("--")));
      if (operands.length > 0 && !listing) return null;
      return out;
    }
    case "config": {
      // git 2.46 spells queries as sub-verbs too; any other sub-verb writes.
      if (rest[0] === "list" || rest[0] === "get") {
        tableScan(sub, "config-read", rest.slice(1), offset + 1, out);
        return out;
      }
      const operands = tableScan(sub, "config-read", rest, offset, out);
      const query = rest.some((a) => a !== null && /^--(get|list)/.test(a)) || rest.some((a) => a !== null && /^-[a-z]*l/.test(a) && !a.startsWith("--"));
      if (!query && operands.length !== 1) return null;
      if (!query && rest[operands[0]!] !== null && ["set", "unset", "rename-section", "remove-section", "edit"].includes(rest[operands[0]!]!)) return null;
      return out.some((f) => f.rule === "command.writes" || f.rule === "option.unknown") ? null : out;
    }
    case "worktree": {
      if (rest[0] !== "list") return null;
      tableScan("worktree list", "worktree-list", rest.slice(1), offset + 1, out);
      return out;
    }
    case "submodule": {
      // `git submodule` alone and `git submodule status` report; every other sub-verb changes or fetches.
      const first = rest.findIndex((a) => a === null || !a.startsWith("-"));
      const verb = first === -1 ? "status" : rest[first];
      if (verb !== "status") return null;
      tableScan("submodule status", "submodule-status", rest.filter((_, i) => i !== first), offset, out);
      return out;
    }
    default:
      return null;
  }
}
