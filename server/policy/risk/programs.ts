import type { RiskLevel } from "./levels";
import type { ArgValue } from "./options";
import { classifyPath, isSecretRead } from "./paths";

/**
 * Option models for programs that are read-only by default. docs/design.md#risk: a
 * command is `read_only` only when its program AND every option AND every
 * operand are known to only read. So a read-only program is modelled by the
 * options it is known to take harmlessly; an option outside that list
 * (`option.unknown`), an option whose value only exists at run time
 * (`option.dynamic`) or an operand beyond the inputs the program reads (an
 * output file: `uniq IN OUT`, `xxd IN OUT`) raises the verdict. Options known
 * to write or run something are hazards with their own rule.
 *
 * GNU getopt_long and git's parse-options accept any unambiguous prefix of a
 * long option (`sort --compress=sh`, `git log --out=x`): a long option that
 * is a prefix of a hazard is that hazard, and one that is not an exact known
 * option is unknown. Abbreviations of harmless options are therefore held
 * too — a false alarm, never a silent pass.
 */

/** The same shape as catalogue.ts's Effect "finding" (kept here to avoid an import cycle). */
export interface ProgramFinding {
  kind: "finding";
  level: RiskLevel;
  rule: string;
  message: string;
  arg?: number;
}

function finding(level: RiskLevel, rule: string, message: string, arg?: number): ProgramFinding {
  return arg === undefined ? { kind: "finding", level, rule, message } : { kind: "finding", level, rule, message, arg };
}

export interface Hazard {
  level: RiskLevel;
  rule: string;
  message: string;
  /** The option takes a value (next word or `=value` / attached). */
  value?: boolean;
  /** The value is a file the option writes: judged like any write target. */
  writes?: boolean;
}

export interface ReadModel {
  /** Audited: no option of this program writes, runs or changes anything; every option is accepted. */
  any?: boolean;
  /** Short option letters that only change what is read or printed. */
  flags?: string;
  /** Short option letters that take a value (attached or the next word). */
  withArg?: string;
  /** Long options without dashes; a trailing `=` means it takes a value. */
  longs?: readonly string[];
  /** `-5`, `-n5`-style numeric options (head, tail, uniq -1). */
  digits?: boolean;
  /** `+N` / `+/pattern` operands are positions, not files (tail, more). */
  plusOperands?: boolean;
  /** Keyed `-o` / `--output`. */
  hazards?: Readonly<Record<string, Hazard>>;
  /** Operands past this many are where the program writes (`uniq IN OUT`). */
  inputs?: number;
  /** Message for an operand past `inputs`. */
  outputMessage?: string;
}

export interface ScanResult {
  findings: ProgramFinding[];
  operands: number[];
  /** Long options and short letters seen (for programs with extra rules). */
  seen: Set<string>;
}

const writeHazard = (message: string): Hazard => ({ level: "low", rule: "command.writes", message, value: true, writes: true });
const execHazard = (message: string, value = true): Hazard => ({ level: "high", rule: "dynamic.interpreter-code", message, value });

/** Findings for a file a program writes, graded like redirections (mirrors catalogue.writeTargetFindings). */
export function writeTarget(path: ArgValue, index: number | undefined, verb: string): ProgramFinding[] {
  switch (classifyPath(path)) {
    case "discard":
      return [];
    case "device":
      return [finding("critical", "path.write-device", `${verb} a raw device (${path})`, index)];
    case "root":
    case "system":
    case "user-secret":
      return [finding("high", "path.write-sensitive", `${verb} a system, credential or start-up path (${path})`, index)];
    case "outside":
      return [finding("medium", "path.write-outside", `${verb} outside the working directory (${path})`, index)];
    case "dynamic":
      return [finding("medium", "path.write-dynamic", `${verb} a path only known at run time`, index)];
    default:
      return [];
  }
}

function hazardFindings(name: string, opt: string, hazard: Hazard, value: ArgValue | undefined, index: number): ProgramFinding[] {
  const out = [finding(hazard.level, hazard.rule, `${name} ${opt}: ${hazard.message}`, index)];
  if (hazard.writes) out.push(...writeTarget(value ?? null, index, `${name} ${opt} writes`));
  return out;
}

/** Reads `args` against a model. Never throws; every word is accounted for. */
// eslint-disable-next-line max-lines-per-function -- one getopt-style pass: short clusters, long options with abbreviations, values and operands share the position state
export function scanOptions(name: string, args: readonly ArgValue[], model: ReadModel): ScanResult {
  const flags = new Set(model.flags ?? "");
  const withArg = new Set(model.withArg ?? "");
  const longFlags = new Set<string>();
  const longValues = new Set<string>();
  for (const l of model.longs ?? []) (l.endsWith("=") ? longValues : longFlags).add(l.replace(/=$/, ""));
  const hazards = model.hazards ?? {};
  const hazardLongs = Object.keys(hazards).filter((k) => k.startsWith("--"));
  const out: ScanResult = { findings: [], operands: [], seen: new Set() };
  const unknown = (a: string, i: number): void => {
    out.findings.push(finding("medium", "option.unknown", `${name} ${a}: an option the catalogue does not know for ${name}; it may write or run something`, i));
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === null || a === undefined) {
      // Harmless only when no option of the program is a hazard (`rg $OPTS x` may be `rg --pre=sh x`).
      if (!model.any || Object.keys(hazards).length > 0) out.findings.push(finding("medium", "option.dynamic", `${name}: an argument only known at run time may be an option that writes or runs something`, i));
      out.operands.push(i);
      continue;
    }
    if (a === "--") {
      for (let j = i + 1; j < args.length; j++) out.operands.push(j);
      break;
    }
    if (a === "-" || !a.startsWith("-") || (model.plusOperands && a.startsWith("+"))) {
      out.operands.push(i);
      continue;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const long = eq === -1 ? a.slice(2) : a.slice(2, eq);
      out.seen.add("--" + long);
      const inline = eq === -1 ? undefined : a.slice(eq + 1);
      const exactHazard = hazards["--" + long];
      const prefixHazard = exactHazard ? "--" + long : longFlags.has(long) || longValues.has(long) ? undefined : hazardLongs.find((h) => long.length > 0 && h.slice(2).startsWith(long));
      if (prefixHazard) {
        const hz = hazards[prefixHazard]!;
        let valueIndex = i;
        let value: ArgValue | undefined = inline;
        if (hz.value && inline === undefined && i + 1 < args.length) {
          valueIndex = ++i;
          value = args[valueIndex];
        }
        out.findings.push(...hazardFindings(name, prefixHazard, hz, value, valueIndex));
        continue;
      }
      if (longValues.has(long)) {
        if (inline === undefined) i++;
        continue;
      }
      if (longFlags.has(long) || model.any) continue;
      unknown(a, i);
      continue;
    }
    // A cluster of short options: `-la`, `-n5`, `-o out`.
    for (let k = 1; k < a.length; k++) {
      const letter = a[k]!;
      out.seen.add("-" + letter);
      const hz = hazards["-" + letter];
      if (hz) {
        let valueIndex = i;
        let value: ArgValue | undefined;
        if (hz.value) {
          if (k + 1 < a.length) value = a.slice(k + 1);
          else if (i + 1 < args.length) {
            valueIndex = ++i;
            value = args[valueIndex];
          }
        }
        out.findings.push(...hazardFindings(name, "-" + letter, hz, value, valueIndex));
        if (hz.value) break;
        continue;
      }
      if (model.digits && /[0-9]/.test(letter)) continue;
      if (withArg.has(letter)) {
        if (k + 1 === a.length) i++;
        break;
      }
      if (flags.has(letter) || model.any) continue;
      unknown(a, i);
      break;
    }
  }
  if (model.inputs !== undefined && out.operands.length > model.inputs) {
    for (const i of out.operands.slice(model.inputs)) {
      out.findings.push(finding("low", "command.writes", `${name}: ${model.outputMessage ?? "an extra operand may be an output file"} (${args[i] ?? "dynamic"})`, i));
      out.findings.push(...writeTarget(args[i] ?? null, i, `${name} writes`));
    }
  }
  return out;
}

export function secretReads(args: readonly ArgValue[]): ProgramFinding[] {
  const out: ProgramFinding[] = [];
  args.forEach((a, i) => {
    if (isSecretRead(a)) out.push(finding("medium", "path.read-secret", `reads a credential file (${a})`, i));
  });
  return out;
}

// ---------------------------------------------------------------------------
// The models. `any: true` is an audit claim (GNU coreutils, procps, util-linux
// and bash builtins as shipped by Debian/Ubuntu): the program has no option
// that writes a file, runs a program or changes state.

const BINUTILS_PLUGIN: Hazard = { level: "high", rule: "dynamic.interpreter-code", message: "loads a plugin (a shared library) into the program", value: true };

const ANY: ReadModel = { any: true };
const PAGER_HAZARDS: Record<string, Hazard> = {
  "-o": writeHazard("copies its input to a log file"),
  "-O": writeHazard("copies its input to a log file"),
  "--log-file": writeHazard("copies its input to a log file"),
  "--LOG-FILE": writeHazard("copies its input to a log file"),
  "-k": execHazard("reads a lesskey file, which can set LESSOPEN (a command less runs)"),
  "--lesskey-file": execHazard("reads a lesskey file, which can set LESSOPEN (a command less runs)"),
  "--lesskey-src": execHazard("reads a lesskey source, which can set LESSOPEN (a command less runs)"),
  "--lesskey-content": execHazard("lesskey content can set LESSOPEN (a command less runs)"),
  "-t": { level: "medium", rule: "option.unknown", message: "follows a tags file, whose entries can name commands", value: true },
  "--tag": { level: "medium", rule: "option.unknown", message: "follows a tags file, whose entries can name commands", value: true },
};
const PAGER: ReadModel = {
  flags: "aABcCdeEfFgGiIJKLmMnNqQrRsSuUVwWX~",
  withArg: "bhjpPxyz#",
  longs: ["quit-at-eof", "QUIT-AT-EOF", "quit-if-one-screen", "RAW-CONTROL-CHARS", "raw-control-chars", "chop-long-lines", "LINE-NUMBERS", "line-numbers", "ignore-case", "IGNORE-CASE", "no-init", "squeeze-blank-lines", "silent", "quiet", "follow-name", "mouse", "help", "version", "pattern=", "prompt=", "tabs=", "shift=", "use-color", "no-lessopen"],
  plusOperands: true,
  hazards: PAGER_HAZARDS,
};
const LS: ReadModel = { any: true };

export const READ_MODELS: Readonly<Record<string, ReadModel>> = {
  // Files and text: every option only selects or formats what is read.
  ls: LS, dir: LS, vdir: LS, ll: LS,
  cat: ANY, tac: ANY, nl: ANY, head: ANY, tail: { any: true, plusOperands: true }, wc: ANY, cut: ANY, tr: ANY, paste: ANY,
  join: ANY, comm: ANY, cmp: ANY, column: ANY, fold: ANY, fmt: ANY, expand: ANY, unexpand: ANY, rev: ANY, od: ANY, hexdump: ANY,
  stat: ANY, readlink: ANY, realpath: ANY, basename: ANY, dirname: ANY, pwd: ANY, true: ANY, false: ANY, test: ANY, "[": ANY,
  grep: ANY, egrep: ANY, fgrep: ANY, zgrep: ANY, look: ANY, tsort: ANY, pr: ANY, numfmt: ANY, factor: ANY, seq: ANY, yes: ANY, sleep: ANY,
  md5sum: ANY, sha1sum: ANY, sha224sum: ANY, sha256sum: ANY, sha384sum: ANY, sha512sum: ANY, b2sum: ANY, cksum: ANY, sum: ANY, jq: ANY,
  expr: ANY, bc: ANY, envsubst: ANY, cal: ANY, ncal: ANY, which: ANY, whereis: ANY, type: ANY, locate: ANY, mlocate: ANY, plocate: ANY,
  nm: { any: true, hazards: { "--plugin": BINUTILS_PLUGIN } }, objdump: { any: true, hazards: { "--plugin": BINUTILS_PLUGIN } }, readelf: ANY,
  size: { any: true, hazards: { "--plugin": BINUTILS_PLUGIN } }, strings: { any: true, hazards: { "--plugin": BINUTILS_PLUGIN } }, namei: ANY, getcap: ANY, lsattr: ANY,
  diff: { any: true, hazards: {} },
  // Processes and the host: options filter or format the report.
  whoami: ANY, id: ANY, groups: ANY, who: ANY, w: ANY, last: ANY, users: ANY, uname: ANY, uptime: ANY, df: ANY, du: ANY, free: ANY, ps: ANY,
  pgrep: ANY, pidof: ANY, top: ANY, htop: ANY, lsof: ANY, lsblk: ANY, lscpu: ANY, lsusb: ANY, lspci: ANY, lsmod: ANY, lsns: ANY, lsipc: ANY,
  lslocks: ANY, nproc: ANY, getconf: ANY, locale: ANY, tty: ANY, vmstat: ANY, iostat: ANY, mpstat: ANY, pidstat: { any: true, hazards: { "-e": execHazard("runs a program to monitor it", false) } }, getent: ANY,
  netstat: ANY, printenv: ANY, pstree: ANY, acpi: ANY, lsb_release: ANY, findmnt: ANY, hostid: ANY, arch: ANY, logname: ANY, blkid: ANY,
  lscgroup: ANY, "systemd-analyze": ANY, tput: ANY, clear: ANY, reset: ANY,
  // Shell builtins that only read or change the shell's own state.
  cd: ANY, pushd: ANY, popd: ANY, dirs: ANY, ":": ANY, read: ANY, mapfile: ANY, readarray: ANY, let: ANY, shift: ANY, set: ANY, shopt: ANY,
  getopts: ANY, ulimit: ANY, return: ANY, exit: ANY, break: ANY, continue: ANY, unalias: ANY, fg: ANY, bg: ANY, disown: ANY, times: ANY,
  caller: ANY, jobs: ANY, help: ANY, wait: ANY, apropos: ANY, whatis: ANY,
  // Programs with options that write or run something.
  less: PAGER, more: PAGER, most: PAGER, zless: PAGER, zmore: PAGER,
  man: {
    flags: "afkwWKiIuhVlLZtT7aDS",
    withArg: "MmSsePRrLCEp",
    longs: ["all", "apropos", "whatis", "where", "path", "location", "location-cat", "local-file", "regex", "wildcard", "names-only", "no-subpages", "ignore-case", "match-case", "help", "usage", "version", "sections=", "manpath=", "locale=", "systems=", "encoding=", "ascii", "no-hyphenation", "no-justification", "nh", "nj", "update", "debug", "default", "warnings"],
    hazards: {
      "-P": execHazard("runs the named pager"), "--pager": execHazard("runs the named pager"),
      "-H": execHazard("runs the named browser"), "--html": execHazard("runs the named browser"),
      "-C": execHazard("reads a configuration file, which can name the pager and preprocessors"), "--config-file": execHazard("reads a configuration file, which can name the pager and preprocessors"),
      "-p": { level: "medium", rule: "option.unknown", message: "chooses preprocessors to run", value: true }, "--preprocessor": { level: "medium", rule: "option.unknown", message: "chooses preprocessors to run", value: true },
      "-X": execHazard("runs gxditview", false), "--gxditview": execHazard("runs gxditview", false),
      "-t": { level: "medium", rule: "option.unknown", message: "runs groff to typeset", value: false }, "-T": { level: "medium", rule: "option.unknown", message: "runs groff for a device", value: true },
    },
  },
  info: {
    flags: "akwhv",
    withArg: "dn",
    longs: ["all", "apropos=", "directory=", "node=", "show-options", "usage", "where", "location", "help", "version", "subnodes", "index-search=", "file="],
    hazards: { "-o": writeHazard("writes the node to a file"), "--output": writeHazard("writes the node to a file"), "--dribble": writeHazard("records keystrokes to a file"), "--restore": execHazard("replays keystrokes from a file") },
  },
  uniq: {
    flags: "cdDiuzf s w".replace(/ /g, ""),
    withArg: "fsw",
    digits: true,
    longs: ["count", "repeated", "all-repeated", "all-repeated=", "skip-fields=", "ignore-case", "skip-chars=", "unique", "zero-terminated", "check-chars=", "group", "group=", "help", "version"],
    inputs: 1,
    outputMessage: "uniq's second operand is the file it writes",
  },
  shuf: {
    flags: "eirz",
    withArg: "inZ",
    longs: ["echo", "input-range=", "head-count=", "random-source=", "repeat", "zero-terminated", "help", "version"],
    hazards: { "-o": writeHazard("writes its output to a file"), "--output": writeHazard("writes its output to a file") },
  },
  iconv: {
    flags: "lcs",
    withArg: "ft",
    longs: ["from-code=", "to-code=", "list", "silent", "verbose", "help", "usage", "version"],
    hazards: { "-o": writeHazard("writes its output to a file"), "--output": writeHazard("writes its output to a file") },
  },
  sdiff: {
    flags: "abBdEHiIlstWZ",
    withArg: "wI",
    longs: ["expand-tabs", "ignore-all-space", "ignore-blank-lines", "ignore-case", "ignore-matching-lines=", "ignore-space-change", "ignore-tab-expansion", "ignore-trailing-space", "left-column", "minimal", "speed-large-files", "strip-trailing-cr", "suppress-common-lines", "tabsize=", "text", "width=", "help", "version"],
    hazards: { "-o": writeHazard("writes the merged result to a file"), "--output": writeHazard("writes the merged result to a file"), "--diff-program": execHazard("runs the named program instead of diff") },
  },
  diff3: {
    flags: "aAeEiImTxX3",
    withArg: "L",
    longs: ["text", "show-all", "ed", "show-overlap", "overlap-only", "easy-only", "initial-tab", "merge", "label=", "strip-trailing-cr", "help", "version"],
    hazards: { "--diff-program": execHazard("runs the named program instead of diff") },
  },
  xxd: {
    flags: "abCEeipruhvd",
    withArg: "cglnosR",
    longs: ["autoskip", "bits", "capitalize", "EBCDIC", "include", "help", "postscript", "plain", "ps", "revert", "uppercase", "version", "cols", "groupsize", "len", "seek", "name"],
    inputs: 1,
    outputMessage: "xxd's second operand is the file it writes",
  },
  file: {
    flags: "bcdEhiklLNnprsSvz0",
    withArg: "eFfmP",
    longs: ["brief", "checking-printout", "exclude=", "exclude-quiet=", "extension", "files-from=", "separator=", "no-dereference", "dereference", "mime", "mime-type", "mime-encoding", "keep-going", "list", "magic-file=", "no-pad", "no-buffer", "preserve-date", "parameter=", "raw", "special-files", "no-sandbox", "uncompress", "uncompress-noreport", "print0", "help", "version", "apple"],
    hazards: { "-C": writeHazard("compiles a magic file into a new file"), "--compile": writeHazard("compiles a magic file into a new file") },
  },
  tree: {
    any: true,
    hazards: { "-o": writeHazard("writes the listing to a file"), "--output": writeHazard("writes the listing to a file") },
  },
  rg: {
    any: true,
    hazards: { "--pre": execHazard("runs a preprocessor command on every file") },
  },
  ag: { any: true, hazards: { "--pager": execHazard("runs the named pager") } },
  ack: { any: true, hazards: { "--pager": execHazard("runs the named pager"), "--output": execHazard("evaluates a Perl expression for every match"), "--ackrc": execHazard("reads an ackrc, which can set --pager or --output") } },
  yq: {
    any: true,
    hazards: { "-i": writeHazard("edits files in place"), "--inplace": writeHazard("edits files in place"), "--in-place": writeHazard("edits files in place") },
  },
  xmllint: {
    any: true,
    hazards: { "--output": writeHazard("writes the result to a file"), "-o": writeHazard("writes the result to a file"), "--shell": execHazard("opens an interactive shell that can save files", false) },
  },
  ptx: { any: true, hazards: { "-G": { level: "low", rule: "command.writes", message: "traditional mode: a second operand is the output file", value: false }, "--traditional": { level: "low", rule: "command.writes", message: "traditional mode: a second operand is the output file", value: false } } },
  lastlog: { any: true, hazards: { "-C": { level: "medium", rule: "command.writes", message: "clears lastlog records" }, "--clear": { level: "medium", rule: "command.writes", message: "clears lastlog records" }, "-S": { level: "medium", rule: "command.writes", message: "sets lastlog records" }, "--set": { level: "medium", rule: "command.writes", message: "sets lastlog records" } } },
  dmidecode: { any: true, hazards: { "--dump-bin": writeHazard("writes the raw table to a file") } },
  sar: { any: true, hazards: { "-o": writeHazard("writes samples to a file") } },
  ss: { any: true, hazards: { "-K": { level: "high", rule: "command.process-control", message: "closes the sockets it matches" }, "--kill": { level: "high", rule: "command.process-control", message: "closes the sockets it matches" }, "-D": writeHazard("dumps raw socket data to a file"), "--diag": writeHazard("dumps raw socket data to a file") } },
  fuser: { any: true, hazards: { "-k": { level: "high", rule: "command.process-control", message: "kills the processes using the files" }, "--kill": { level: "high", rule: "command.process-control", message: "kills the processes using the files" } } },
  sensors: { any: true, hazards: { "-s": { level: "high", rule: "command.system", message: "writes chip settings" }, "--set": { level: "high", rule: "command.system", message: "writes chip settings" } } },
  hash: { any: true, hazards: { "-p": { level: "high", rule: "name.rebind", message: "makes a command name run another file", value: true } } },
  compgen: { any: true, hazards: { "-C": execHazard("runs a command to generate completions"), "-F": execHazard("runs a function to generate completions") } },
  complete: { any: true, hazards: { "-C": { level: "medium", rule: "dynamic.shell-code", message: "registers a command that completion will run", value: true }, "-F": { level: "medium", rule: "dynamic.shell-code", message: "registers a function that completion will run", value: true } } },
  stty: { flags: "aAg", longs: ["all", "save", "help", "version"], withArg: "F" },
  loginctl: { any: true },
  ldd: { flags: "vudr", longs: ["version", "verbose", "unused", "data-relocs", "function-relocs", "help"] },
};

const LOGINCTL_READ = new Set(["list-sessions", "session-status", "show-session", "list-users", "user-status", "show-user", "list-seats", "seat-status", "show-seat", "help"]);

/**
 * Builtins that evaluate their arguments as arithmetic or as variable names:
 * bash expands an array subscript there, so a quoted `'a[$(id)]'` runs `id`
 * even though quoting made it look like data.
 */
const SUBSCRIPT_BUILTINS = new Set(["let", "test", "[", "read", "unset", "shift", "return", "exit", "wait", "getopts", "mapfile", "readarray", "ulimit", "declare", "typeset", "export", "local", "readonly", "printf"]);

export function subscriptInjection(args: readonly ArgValue[]): ProgramFinding[] {
  const out: ProgramFinding[] = [];
  args.forEach((a, i) => {
    if (a !== null && /\[[^\]]*(\$\(|`)/.test(a)) out.push(finding("high", "dynamic.shell-code", "bash expands this array subscript, and the command substitution inside it runs", i));
  });
  return out;
}

/**
 * A string argument a bash builtin evaluates as shell code although the word
 * itself is quoted data: `mapfile -C CALLBACK` / `readarray -C` evaluate
 * `CALLBACK INDEX LINE` every quantum of lines, and `compgen -W WORDLIST`
 * expands each word of its list (`$( )`, backquotes and `${ }` run).
 * `value` is the code (null: only known at run time); `arg` the word it is in.
 */
export interface EvaluatedArgument {
  arg: number;
  value: string | null;
  as: "callback" | "words";
  what: string;
}

/** Options with a value, per builtin, and which of them is evaluated. */
const EVALUATING_BUILTINS: Readonly<Record<string, { withArg: string; evaluated: string; as: EvaluatedArgument["as"] }>> = {
  mapfile: { withArg: "dnOsuCc", evaluated: "C", as: "callback" },
  readarray: { withArg: "dnOsuCc", evaluated: "C", as: "callback" },
  compgen: { withArg: "oAGWFCXPSV", evaluated: "W", as: "words" },
};

export function evaluatedArguments(name: string, args: readonly ArgValue[]): EvaluatedArgument[] {
  const model = EVALUATING_BUILTINS[name];
  if (!model) return [];
  const out: EvaluatedArgument[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    // Unquoted, a run-time argument may split into the evaluated option and its code (`mapfile $opts arr`).
    if (a === null || a === undefined) {
      out.push({ arg: i, value: null, as: model.as, what: `${name} with an argument only known at run time (it may be -${model.evaluated})` });
      continue;
    }
    if (a === "--" || !a.startsWith("-") || a === "-") break;
    for (let k = 1; k < a.length; k++) {
      const letter = a[k]!;
      if (!model.withArg.includes(letter)) continue;
      const attached = k + 1 < a.length;
      const index = attached ? i : i + 1;
      const value = attached ? a.slice(k + 1) : (args[i + 1] ?? null);
      if (!attached) i++;
      if (letter === model.evaluated && index < args.length) out.push({ arg: index, value, as: model.as, what: `${name} -${letter}` });
      break;
    }
  }
  return out;
}

/** Effects a read-model command produces (the caller adds the read-only finding when nothing raised). */
export function readModelFindings(name: string, args: readonly ArgValue[]): ProgramFinding[] | null {
  const model = READ_MODELS[name];
  if (!model) return null;
  const scan = scanOptions(name, args, model);
  const out = [...scan.findings];
  if (SUBSCRIPT_BUILTINS.has(name)) out.push(...subscriptInjection(args));
  if (name === "systemd-analyze") {
    const sub = scan.operands.length ? (args[scan.operands[0]!] ?? null) : null;
    if (sub === null ? scan.operands.length > 0 : ["set-log-level", "set-log-target", "log-level", "log-target", "service-watchdogs"].includes(sub) && scan.operands.length > 1) out.push(finding("high", "command.system", `systemd-analyze ${sub ?? "(dynamic)"} changes the service manager`, scan.operands[0]));
  }
  if (name === "ptx" && (scan.seen.has("-G") || scan.seen.has("--traditional"))) {
    for (const i of scan.operands.slice(1)) out.push(finding("low", "command.writes", "ptx -G writes its second operand", i), ...writeTarget(args[i] ?? null, i, "ptx writes"));
  }
  if (name === "ldd") out.push(finding("medium", "dynamic.interpreter-code", "ldd may run the program's own loader to list its libraries; for an untrusted file that runs its code"));
  if (name === "loginctl") {
    const sub = scan.operands.length ? (args[scan.operands[0]!] ?? null) : "list-sessions";
    if (sub === null || !LOGINCTL_READ.has(sub)) out.push(finding("high", "command.system", `loginctl ${sub ?? "(dynamic)"} changes sessions, users or seats`, scan.operands[0]));
  }
  if (name === "stty" && scan.operands.length > 0) out.push(finding("low", "command.system", "changes terminal settings"));
  if (["less", "more", "most", "zless", "zmore"].includes(name)) {
    for (const i of scan.operands) {
      const a = args[i];
      // `+cmd` runs a pager command at start; `+!cmd` runs a shell command.
      // Movement (`+G`, `+F`, `+50`, `+50%`) and searches (`+/x`) are reading; anything else (`!`, `|`, `s`, `v`, `-o`) may run or write.
      if (a !== null && a !== undefined && a.startsWith("+") && !/^\+[0-9]*[GgFpPjkeydubfwzNnR%]?$/.test(a) && !/^\+\/[^!]*$/.test(a)) out.push(finding("high", "dynamic.interpreter-code", `${name} ${a}: a start-up pager command (\`!\` runs a shell)`, i));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// sed: the script is parsed command by command (GNU sed 4.8 grammar).

export interface SedScriptFacts {
  executes: boolean;
  writes: string[];
  reads: string[];
  /** The script could not be read completely: something we do not understand. */
  unparsed: boolean;
}

function readFilename(script: string, i: number): { name: string; end: number } {
  // A filename runs to the end of the line (GNU: `w file` takes the rest of the line, `;` included).
  let j = i;
  while (j < script.length && (script[j] === " " || script[j] === "\t")) j++;
  let end = script.indexOf("\n", j);
  if (end === -1) end = script.length;
  return { name: script.slice(j, end), end };
}

function skipDelimited(script: string, i: number, delim: string): number {
  // Returns the index just after the closing delimiter, or -1.
  for (let j = i; j < script.length; j++) {
    const ch = script[j];
    if (ch === "\\") {
      j++;
      continue;
    }
    if (ch === "\n" && delim !== "\n") return -1;
    if (ch === delim) return j + 1;
  }
  return -1;
}

function skipAddress(script: string, i: number): number {
  let j = i;
  const one = (): boolean => {
    if (j >= script.length) return false;
    const ch = script[j]!;
    if (/[0-9]/.test(ch)) {
      while (j < script.length && /[0-9~]/.test(script[j]!)) j++;
      return true;
    }
    if (ch === "$") {
      j++;
      return true;
    }
    if (ch === "/" || ch === "\\") {
      const delim = ch === "/" ? "/" : script[j + 1];
      if (delim === undefined) return false;
      const end = skipDelimited(script, ch === "/" ? j + 1 : j + 2, delim);
      if (end === -1) return false;
      j = end;
      while (j < script.length && /[IM]/.test(script[j]!)) j++;
      return true;
    }
    return false;
  };
  if (!one()) return j;
  while (j < script.length && script[j] === " ") j++;
  if (script[j] === ",") {
    j++;
    while (j < script.length && script[j] === " ") j++;
    if (script[j] === "+" || script[j] === "~") {
      j++;
      while (j < script.length && /[0-9]/.test(script[j]!)) j++;
    } else one();
  }
  return j;
}

// eslint-disable-next-line max-lines-per-function -- a sed script parser: one loop with a branch per command letter, which must share the position state
export function sedScriptFacts(script: string): SedScriptFacts {
  const facts: SedScriptFacts = { executes: false, writes: [], reads: [], unparsed: false };
  let i = 0;
  const n = script.length;
  while (i < n) {
    const ch0 = script[i]!;
    if (/[\s;}]/.test(ch0)) {
      i++;
      continue;
    }
    if (ch0 === "#") {
      const nl = script.indexOf("\n", i);
      i = nl === -1 ? n : nl + 1;
      continue;
    }
    i = skipAddress(script, i);
    while (i < n && /[ \t!]/.test(script[i]!)) i++;
    if (i >= n) break;
    const cmd = script[i]!;
    i++;
    switch (cmd) {
      case "{":
      case "=":
      case "d":
      case "D":
      case "g":
      case "G":
      case "h":
      case "H":
      case "n":
      case "N":
      case "p":
      case "P":
      case "x":
      case "z":
      case "F":
        break;
      case "l":
      case "q":
      case "Q":
      case "L":
        while (i < n && /[ \t0-9]/.test(script[i]!)) i++;
        break;
      case ":":
      case "b":
      case "t":
      case "T":
      case "v": {
        while (i < n && script[i] !== ";" && script[i] !== "\n" && !(cmd !== ":" && script[i] === "}")) i++;
        break;
      }
      case "a":
      case "i":
      case "c": {
        // Text to the end of the line; `\` continues it on the next line.
        while (i < n && script[i] !== "\n") i += script[i] === "\\" ? 2 : 1;
        break;
      }
      case "e": {
        facts.executes = true;
        const f = readFilename(script, i);
        i = f.end;
        break;
      }
      case "r":
      case "R":
      case "w":
      case "W": {
        const f = readFilename(script, i);
        (cmd === "w" || cmd === "W" ? facts.writes : facts.reads).push(f.name);
        i = f.end;
        break;
      }
      case "s": {
        const delim = script[i];
        if (delim === undefined || delim === "\n" || delim === "\\") {
          facts.unparsed = true;
          return facts;
        }
        const afterRegex = skipDelimited(script, i + 1, delim);
        const afterRepl = afterRegex === -1 ? -1 : skipDelimited(script, afterRegex, delim);
        if (afterRepl === -1) {
          facts.unparsed = true;
          return facts;
        }
        i = afterRepl;
        while (i < n && /[gpiImMe0-9w]/.test(script[i]!)) {
          const flag = script[i]!;
          i++;
          if (flag === "e") facts.executes = true;
          if (flag === "w") {
            const f = readFilename(script, i);
            facts.writes.push(f.name);
            i = f.end;
            break;
          }
        }
        break;
      }
      case "y": {
        const delim = script[i];
        const a = delim === undefined ? -1 : skipDelimited(script, i + 1, delim);
        const b = a === -1 || delim === undefined ? -1 : skipDelimited(script, a, delim);
        if (b === -1) {
          facts.unparsed = true;
          return facts;
        }
        i = b;
        break;
      }
      default:
        facts.unparsed = true;
        return facts;
    }
  }
  return facts;
}
