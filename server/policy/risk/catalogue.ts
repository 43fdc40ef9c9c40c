import type { RiskLevel } from "./levels";
import { has, looseTable, optionsNamed, optionValue, readOptions, type ArgValue, type OptionSpec, type OptionTable } from "./options";
import { envFindings } from "./environment";
import { classifyPath, isSecretRead } from "./paths";
import type { Whereabouts } from "./credentials";
import { awkProgramFacts, type AwkFacts } from "./awk-program";
import { CARGO, goFindings, NODE_PACKAGES, NPM, onlyVersionOrHelp, packageManagerFindings, PIP, PROJECT_TOOLS, rpmFindings, type PackageManagerModel } from "./package-managers";
import { gitReadFindings } from "./git-model";
import { hostSettingFindings } from "./host-settings";
import { wrapperOptionVerdict } from "./wrapper-options";
import { COMPILERS, fdExecIndex, ghFindings, RUNTIMES, toolchainFindings } from "./toolchains";
import { readModelFindings, scanOptions, sedScriptFacts, subscriptInjection, writeTarget, type ReadModel } from "./programs";

/**
 * The command catalogue: what a program does given its arguments, as data the
 * analyser can act on. Philosophy (see README.md): classify by effect, not by
 * name popularity; arguments decide (`git status` is not `git push`); when in
 * doubt, say more risky. Anything not listed is `command.unknown`. Recursion
 * (wrapped commands, shell strings, code on stdin) is requested here with an
 * effect and carried out by the analyser, which owns the context (pipes,
 * heredocs, functions).
 */

export type CommandCategory =
  | "read-only"
  | "writes"
  | "deletes"
  | "network"
  | "privilege"
  | "package-manager"
  | "dynamic"
  | "process"
  | "system"
  | "destructive"
  | "wrapper";

export type Effect =
  /** A reason to report; `arg` points the span at one argument instead of the whole command. */
  | { kind: "finding"; level: RiskLevel; rule: string; message: string; arg?: number }
  /**
   * Classify `args[from..to)` as a command of its own (wrappers, `find -exec`, `xargs`).
   * `argsUnknown`: words read at run time are appended (any number, options included).
   * `replace`: a word equal to `token` becomes `args[with]` (`many`: several such words);
   * a word containing it is only known at run time. `unknownToken`: every word containing
   * it is only known at run time. `hold`: reported unless the command is read-only with
   * those unknown words.
   */
  | {
      kind: "exec";
      from: number;
      to?: number;
      via: string;
      argsUnknown?: boolean;
      replace?: { token: string; with: number | null; many?: boolean };
      unknownToken?: string;
      hold?: { level: RiskLevel; rule: string; message: string; arg?: number };
    }
  /** `args[arg]` is shell text to parse; `join` joins from `arg` to the end with spaces (eval). */
  | { kind: "shell-code"; arg: number; join?: boolean; rule: string; floor: RiskLevel; what: string }
  /** The program reads its program text from stdin. */
  | { kind: "stdin-code"; shell: boolean }
  /** The program runs code from a file (`bash x.sh`, `source f`, `python x.py`). */
  | { kind: "script-file"; arg: number; rule: string }
  /** Code in a language we do not parse (`python3 -c`); `arg` holds it. */
  | { kind: "opaque-code"; arg: number }
  /** Registers `alias name=value`. */
  | { kind: "alias"; arg: number }
  /** Data from the network enters the pipeline here. */
  | { kind: "network" }
  /** Output is a decoded form of the input (base64, hex, escapes): the classic way to hide a payload. */
  | { kind: "decoder" }
  /** The command prints exactly this text (echo/printf of static words). */
  | { kind: "literal-output"; text: string; arg: number }
  /** `cat` without files: stdout is stdin. */
  | { kind: "passthrough" }
  /** Network content is saved to `args[arg]`, so running that file later runs remote code. */
  | { kind: "downloads-to"; arg: number };

export interface CommandSpec {
  category: CommandCategory;
  /** `where`: the directories the command may run in, for paths relative to them (credential reads). */
  classify: (args: readonly ArgValue[], name: string, where: Whereabouts) => Effect[];
}

// ---------------------------------------------------------------------------
// Effect helpers

function finding(level: RiskLevel, rule: string, message: string, arg?: number): Effect {
  return arg === undefined ? { kind: "finding", level, rule, message } : { kind: "finding", level, rule, message, arg };
}
const readOnly = (what: string): Effect => finding("read_only", "command.read-only", what);

function simple(category: CommandCategory, level: RiskLevel, rule: string, message: string): CommandSpec {
  return { category, classify: () => [finding(level, rule, message)] };
}

/** Reasons for files a command writes to (not deletes). */
export function writeTargetFindings(args: readonly ArgValue[], indices: readonly number[], verb = "writes"): Effect[] {
  const out: Effect[] = [];
  for (const i of indices) {
    const p = args[i] ?? null;
    switch (classifyPath(p)) {
      case "device":
        out.push(finding("critical", "path.write-device", `${verb} a raw device (${p}): destroys a disk or the kernel's memory`, i));
        break;
      case "root":
      case "system":
      case "user-secret":
        out.push(finding("high", "path.write-sensitive", `${verb} a system, credential or start-up path (${p})`, i));
        break;
      case "outside":
        out.push(finding("medium", "path.write-outside", `${verb} outside the working directory (${p})`, i));
        break;
      case "dynamic":
        out.push(finding("medium", "path.write-dynamic", `${verb} a path only known at run time`, i));
        break;
      default:
        break;
    }
  }
  return out;
}

function deleteTargetFindings(args: readonly ArgValue[], indices: readonly number[], recursive: boolean): Effect[] {
  const out: Effect[] = [];
  for (const i of indices) {
    const p = args[i] ?? null;
    const cls = classifyPath(p);
    if (cls === "device") out.push(finding("critical", "path.write-device", `destroys a raw device (${p})`, i));
    else if (cls === "root" && recursive) out.push(finding("critical", "command.destroys-system", `recursively deletes ${p}: the root, a top-level system directory or a home directory`, i));
    else if (cls === "system" && recursive) out.push(finding("critical", "command.destroys-system", `recursively deletes inside a system directory (${p})`, i));
    else if (cls === "root" || cls === "system" || cls === "user-secret") out.push(finding("high", "path.delete-sensitive", `deletes a system, credential or start-up path (${p})`, i));
    else if (cls === "outside") out.push(finding("high", "path.delete-outside", `deletes outside the working directory (${p})`, i));
  }
  return out;
}

/** `recursive`: the program reads directories it is given, so a directory holding credentials counts. */
function secretReadFindings(args: readonly ArgValue[], recursive: boolean, where: Whereabouts): Effect[] {
  const out: Effect[] = [];
  args.forEach((a, i) => {
    if (isSecretRead(a, { ...where, recursive })) out.push(finding("medium", "path.read-secret", `reads a credential file (${a})`, i));
  });
  return out;
}

function operandsOf(args: readonly ArgValue[], spec: OptionSpec = {}): number[] {
  return readOptions(args, looseTable(spec)).operands;
}

/** The first non-option word: the subcommand of git, apt, npm, systemctl... */
function subcommand(args: readonly ArgValue[], withArg: readonly string[] = []): { name: ArgValue; index: number } | null {
  const p = readOptions(args, looseTable({ withArg, stopAtOperand: true }));
  if (p.end >= args.length) return null;
  return { name: args[p.end] ?? null, index: p.end };
}

// ---------------------------------------------------------------------------
// Read-only programs. Listed by effect: they print, inspect or compute, and
// never change state outside the shell that runs them.

const READ_ONLY = `ls dir vdir ll cat tac nl head tail less more most grep egrep fgrep zgrep rg ag ack wc sort uniq cut tr paste
join comm diff diff3 sdiff cmp column fold fmt expand unexpand rev od hexdump strings file stat readlink realpath basename dirname
pwd echo printf true false test [ whoami id groups who w last lastlog users uname uptime cal df du free ps pgrep pidof top htop
lsof lsblk lscpu lsusb lspci lsmod lsns lsipc lslocks nproc getconf locale tty vmstat iostat mpstat pidstat sar which whereis type
hash locate mlocate plocate tree md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum jq yq seq yes sleep wait
jobs help man info apropos whatis getent ss netstat env printenv expr bc dc factor numfmt shuf cd pushd popd dirs : read mapfile readarray
let shift set shopt getopts ulimit return exit break continue unalias history fg bg disown times caller compgen complete
test zcat zless zmore bzcat xzcat zstdcat lzcat tput clear reset stty namei getcap lsattr dmidecode ldd nm objdump readelf size
iconv look tsort ptx pr xmllint lscgroup systemd-analyze loginctl hostid arch logname printf
envsubst column cal ncal pstree fuser sensors acpi lsb_release blkid findmnt`
  .split(/\s+/)
  .filter(Boolean);

const DATA_DECODERS = new Set(["uudecode", "gunzip", "zcat", "bunzip2", "bzcat", "unxz", "xzcat", "unzstd", "zstdcat", "lzcat"]);

// ---------------------------------------------------------------------------
// Interpreters

export const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash", "yash", "posh", "busybox-sh"]);

function shellSpec(): CommandSpec {
  return {
    category: "dynamic",
    classify(args) {
      // bash [-abefhkmnptuvxBCHP] [-o opt] [-O shopt] [--long...] [-c string | -s | file] [args]
      let codeFlag = false;
      let stdinFlag = false;
      let i = 0;
      for (; i < args.length; i++) {
        const a = args[i];
        if (a === null || a === undefined) break;
        if (a === "--" || a === "-") {
          i++;
          if (a === "-") stdinFlag = true;
          break;
        }
        if (a === "--version" || a === "--help") return [readOnly("prints the shell's version")];
        if (a === "--rcfile" || a === "--init-file") {
          i++;
          continue;
        }
        if (a.startsWith("--")) continue;
        if (!a.startsWith("-") && !a.startsWith("+")) break;
        if (a.slice(1).includes("c")) codeFlag = true;
        if (a.slice(1).includes("s")) stdinFlag = true;
        if (/[oO]$/.test(a)) i++;
      }
      if (codeFlag) {
        if (i >= args.length) return [finding("high", "parse.error", "`-c` without a command string")];
        return [{ kind: "shell-code", arg: i, rule: "dynamic.shell-code", floor: "medium", what: "a shell started with -c" }];
      }
      if (i < args.length && !stdinFlag) return [{ kind: "script-file", arg: i, rule: "dynamic.script-file" }];
      return [{ kind: "stdin-code", shell: true }];
    },
  };
}

interface InterpreterShape {
  code: readonly string[]; // options whose value is program text
  withArg: readonly string[];
  version: readonly string[];
  module?: readonly string[];
}

const INTERPRETERS: Record<string, InterpreterShape> = {
  python: { code: ["-c"], withArg: ["-W", "-X", "-m"], version: ["-V", "--version", "-h", "--help"], module: ["-m"] },
  node: { code: ["-e", "--eval", "-p", "--print"], withArg: ["-r", "--require", "--import", "--loader", "-C", "--conditions", "--env-file", "--input-type"], version: ["-v", "--version", "-h", "--help"] },
  // perl's -i, -l, -0, -I, -M take attached values only (`-i.bak`), so none consumes the next word.
  perl: { code: ["-e", "-E"], withArg: [], version: ["-v", "-V", "--version", "-h"] },
  ruby: { code: ["-e"], withArg: ["-I", "-r", "-C", "-E"], version: ["-v", "--version", "-h", "--help"] },
  php: { code: ["-r"], withArg: ["-d", "-c", "-f", "-z"], version: ["-v", "--version", "-h", "-m", "-i"] },
  lua: { code: ["-e"], withArg: ["-l"], version: ["-v"] },
  Rscript: { code: ["-e"], withArg: [], version: ["--version"] },
  osascript: { code: ["-e"], withArg: ["-l"], version: [] },
  tclsh: { code: [], withArg: [], version: [] },
  expect: { code: ["-c"], withArg: ["-f"], version: ["-v"] },
  pwsh: { code: ["-c", "-Command", "-EncodedCommand", "-e"], withArg: ["-File"], version: ["-v", "-Version"] },
};
const INTERPRETER_ALIASES: Record<string, string> = {
  python2: "python", python3: "python", pypy: "python", pypy3: "python", nodejs: "node", luajit: "lua", ts_node: "node",
  "ts-node": "node", tsx: "node", deno_eval: "node", powershell: "pwsh", jshell: "tclsh", irb: "ruby", wish: "tclsh",
};

function interpreterKey(name: string): string | null {
  if (INTERPRETERS[name]) return name;
  const alias = INTERPRETER_ALIASES[name];
  if (alias) return alias;
  // python3.12, python2.7, perl5.36 ...
  const m = /^(python|perl|ruby|php|lua)\d+(\.\d+)*$/.exec(name);
  return m ? m[1]! : null;
}

function interpreterSpec(key: string): CommandSpec {
  const shape = INTERPRETERS[key]!;
  return {
    category: "dynamic",
    classify(args, _name, where) {
      if (args.length > 0 && args.every((a) => a !== null && shape.version.includes(a))) return [readOnly("prints the interpreter's version")];
      /** Python flags seen before `-m`: only these leave a standard module read-only. */
      let pythonFlags = "";
      for (let i = 0; i < args.length; i++) {
        const a = args[i];
        if (a === null || a === undefined) return [{ kind: "script-file", arg: i, rule: "dynamic.script-file" }];
        if (a === "-") return [{ kind: "stdin-code", shell: false }];
        if (a === "--") return i + 1 < args.length ? [{ kind: "script-file", arg: i + 1, rule: "dynamic.script-file" }] : [{ kind: "stdin-code", shell: false }];
        if (!a.startsWith("-")) return [{ kind: "script-file", arg: i, rule: "dynamic.script-file" }];
        const long = a.startsWith("--") ? a.split("=")[0]! : null;
        if (long !== null) {
          pythonFlags += "-";
          if (shape.code.includes(long)) return [{ kind: "opaque-code", arg: a.includes("=") ? i : i + 1 }];
          if (shape.withArg.includes(long) && !a.includes("=")) i++;
          continue;
        }
        // Short clusters: `-uc CODE`, `-cprint(1)`, `-pie '...'`, `-mhttp.server`.
        for (let k = 1; k < a.length; k++) {
          const opt = "-" + a[k];
          if (shape.code.includes(opt) || (key === "pwsh" && shape.code.includes(a))) return [{ kind: "opaque-code", arg: k + 1 < a.length ? i : i + 1 }];
          if (shape.module?.includes(opt)) {
            const mod = k + 1 < a.length ? a.slice(k + 1) : (args[i + 1] ?? null);
            const modIndex = k + 1 < a.length ? i : i + 1;
            return pythonModule(mod, args.slice(modIndex + 1), modIndex, pythonFlags, where);
          }
          pythonFlags += a[k];
          if (shape.withArg.includes(opt)) {
            if (k + 1 === a.length) i++;
            break;
          }
        }
      }
      return [{ kind: "stdin-code", shell: false }];
    },
  };
}

/**
 * `python -m MODULE` imports MODULE through sys.path, whose first entry is
 * the working directory — the workspace, where any file can be — unless
 * `-P` (Python 3.11+; older ones refuse the flag) or `-I` is given. The rating
 * must not depend on what the workspace holds or on the guest's environment
 * (PYTHONSAFEPATH is ignored before 3.11), so a standard module is read-only
 * only when it cannot come from the working directory:
 *
 * | module | read-only when | why |
 * |---|---|---|
 * | `site` | always, unless `-S` | imported at start-up, so `-m site` runs the one already loaded; prints paths |
 * | `this` | `-P` or `-I` | prints the Zen of Python |
 * | `platform` | `-P` or `-I` | prints the platform |
 * | `sysconfig` | `-P` or `-I`, no arguments | prints the build configuration (`--generate-posix-vars` writes files) |
 * | `json.tool` | `-P` or `-I`, at most one operand, known options | pretty-prints JSON; a second operand is the output file |
 * | `base64` | `-P` or `-I`, known options | encodes or decodes (a decoder for the pipeline) |
 *
 * Flags before `-m` other than `-P -I -E -s -S -B -q -u -b -O` (e.g. `-W`,
 * which imports a warning category's module, or `-X`) keep it held.
 */
const SAFE_PYTHON_FLAGS = /^[PIEsSBqubO]*$/;
const JSON_TOOL_LONGS = ["sort-keys", "no-ensure-ascii", "json-lines", "indent=", "tab", "no-indent", "compact", "help"];

function pythonModule(mod: ArgValue, rest: readonly ArgValue[], index: number, flags: string, where: Whereabouts): Effect[] {
  if (mod === "pip") {
    return packageManagerFindings(PIP, rest, "pip");
  }
  if (mod === "http.server" || mod === "SimpleHTTPServer" || mod === "smtpd") return [finding("high", "network.server", `starts a network server (python -m ${mod})`, index)];
  if (mod === "venv" || mod === "virtualenv") return [finding("medium", "command.writes", "creates a virtual environment")];
  const model = mod === null ? undefined : PYTHON_READ_MODULES[mod];
  if (!model) return [finding("high", "dynamic.script-file", `runs the Python module ${mod ?? "(dynamic)"}, whose code is not visible here`, index)];
  const shift = (e: Effect): Effect => (e.kind === "finding" && e.arg !== undefined ? { ...e, arg: e.arg + index + 1 } : e);
  const out: Effect[] = [];
  if (!SAFE_PYTHON_FLAGS.test(flags)) out.push(finding("medium", "option.unknown", `python -${flags} before -m ${mod}: an interpreter option the catalogue does not know to be harmless`, index));
  const safePath = flags.includes("P") || flags.includes("I");
  const loadedAtStart = mod === "site" && !flags.includes("S");
  if (!safePath && !loadedAtStart) out.push(finding("medium", "dynamic.project-code", `python -m ${mod} runs ${mod} from the working directory when a file of that name is there (python looks there first; -P or -I stops that)`, index));
  out.push(...model(rest, where).map(shift));
  return out;
}

const PYTHON_READ_MODULES: Readonly<Record<string, (rest: readonly ArgValue[], where: Whereabouts) => Effect[]>> = {
  site: () => [readOnly("prints Python's module search path")],
  this: () => [readOnly("prints the Zen of Python")],
  platform: () => [readOnly("prints the platform")],
  sysconfig: (rest) => (rest.length === 0 ? [readOnly("prints Python's build configuration")] : [finding("medium", "option.unknown", "python -m sysconfig with arguments may generate files")]),
  "json.tool": (rest, where) => {
    const read = readOptions(rest, { longs: JSON_TOOL_LONGS, flags: "h", abbreviate: true });
    const out: Effect[] = [];
    for (const i of [...read.unknown, ...read.dynamic]) out.push(finding("medium", "option.unknown", `python -m json.tool: ${rest[i] ?? "a word only known at run time"} may be an option or an output file`, i));
    for (const i of read.operands.slice(1)) out.push(finding("low", "command.writes", `python -m json.tool writes its output to ${rest[i] ?? "a file only known at run time"}`, i), ...writeTargetFindings(rest, [i]));
    return [...out, ...(out.length ? [] : [readOnly("pretty-prints JSON")]), ...secretReadFindings(rest, false, where)];
  },
  base64: (rest, where) => {
    const read = readOptions(rest, { flags: "edut" });
    const out: Effect[] = [];
    for (const i of [...read.unknown, ...read.dynamic]) out.push(finding("medium", "option.unknown", `python -m base64: ${rest[i] ?? "a word only known at run time"} is not one of its options`, i));
    const decodes = optionsNamed(read, "-d", "-u").length > 0;
    return [...out, readOnly(decodes ? "decodes base64" : "encodes base64"), ...(decodes ? [{ kind: "decoder" } as const] : []), ...secretReadFindings(rest, false, where)];
  },
};

// ---------------------------------------------------------------------------
// Wrappers: programs that run another program. We look through them.

interface WrapperShape {
  withArg: readonly string[];
  /** Positional operands before the wrapped command (timeout's duration, chroot's directory). */
  skipOperands?: number;
  privilege?: string;
  /** `NAME=value` operands (env) are assignments, not the command. */
  assignments?: boolean;
  /** Options that mean "no command, only a query". */
  queryOnly?: readonly string[];
  /** Option whose value is shell text (`su -c`, `flock -c`). */
  codeOption?: readonly string[];
  /** With no command, what runs (sudo -s: a root shell). */
  bare?: Effect[];
}

const WRAPPERS: Record<string, WrapperShape> = {
  env: { withArg: ["-u", "--unset", "-C", "--chdir", "-S", "--split-string"], assignments: true, codeOption: ["-S", "--split-string"], bare: [readOnly("prints the environment")] },
  nice: { withArg: ["-n", "--adjustment"] },
  nohup: { withArg: [] },
  timeout: { withArg: ["-s", "--signal", "-k", "--kill-after"], skipOperands: 1 },
  stdbuf: { withArg: ["-i", "-o", "-e", "--input", "--output", "--error"] },
  ionice: { withArg: ["-c", "-n", "--class", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"] },
  time: { withArg: ["-f", "--format", "-o", "--output"] },
  command: { withArg: [], queryOnly: ["-v", "-V"] },
  builtin: { withArg: [] },
  exec: { withArg: ["-a"], bare: [readOnly("exec without a command only applies redirections")] },
  coproc: { withArg: [] },
  setsid: { withArg: [] },
  taskset: { withArg: [], skipOperands: 1 },
  chrt: { withArg: ["-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"], skipOperands: 1 },
  numactl: { withArg: ["-C", "-N", "-m", "-i", "-p", "--physcpubind", "--cpunodebind", "--membind", "--interleave", "--preferred"], queryOnly: ["-H", "--hardware", "-s", "--show"] },
  unbuffer: { withArg: [] },
  caffeinate: { withArg: ["-t", "-w"] },
  proxychains: { withArg: ["-f"] },
  proxychains4: { withArg: ["-f"] },
  torsocks: { withArg: [] },
  strace: { withArg: ["-o", "-e", "-p", "-s", "-u", "-E", "-I", "-b", "-a", "-P", "-S", "-X"] },
  ltrace: { withArg: ["-o", "-e", "-p", "-s", "-u", "-n", "-a"] },
  flock: { withArg: ["-w", "--timeout", "-E", "--conflict-exit-code"], skipOperands: 1, codeOption: ["-c", "--command"] },
  sudo: {
    withArg: ["-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user"],
    privilege: "sudo",
    assignments: true,
    queryOnly: ["-l", "--list", "-v", "--validate", "-k", "--reset-timestamp", "-K", "--remove-timestamp", "-V", "--version"],
    bare: [finding("high", "privilege.escalation", "sudo without a command opens a root shell")],
  },
  doas: { withArg: ["-u", "-C"], privilege: "doas", bare: [finding("high", "privilege.escalation", "doas without a command opens a root shell")] },
  pkexec: { withArg: ["--user"], privilege: "pkexec", bare: [finding("high", "privilege.escalation", "pkexec without a command opens a root shell")] },
  runuser: { withArg: ["-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w"], privilege: "runuser", codeOption: ["-c", "--command"], bare: [finding("high", "privilege.escalation", "runuser opens a shell as another user")] },
  su: { withArg: ["-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w"], privilege: "su", codeOption: ["-c", "--command", "-C", "--session-command"], skipOperands: 99, bare: [finding("high", "privilege.escalation", "su opens a shell as another user")] },
  chroot: { withArg: ["--userspec", "--groups"], skipOperands: 1, privilege: "chroot", bare: [finding("high", "privilege.escalation", "chroot without a command opens a shell in the new root")] },
  nsenter: { withArg: ["-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd", "-r", "--root"], privilege: "nsenter", bare: [finding("high", "privilege.escalation", "nsenter opens a shell in another process's namespaces")] },
  unshare: { withArg: ["--map-user", "--map-group", "-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd", "--propagation"], privilege: "unshare", bare: [finding("high", "privilege.escalation", "unshare opens a shell in new namespaces")] },
  "systemd-run": { withArg: ["-u", "--unit", "-p", "--property", "-E", "--setenv", "--uid", "--gid", "--slice", "-M", "--machine", "--working-directory", "--on-calendar", "--on-active"], privilege: "systemd-run" },
  firejail: { withArg: [] },
  busybox: { withArg: [] },
  toybox: { withArg: [] },
};

function wrapperSpec(name: string): CommandSpec {
  const shape = WRAPPERS[name]!;
  return {
    category: "wrapper",
    classify(args) {
      const withArg = [...shape.withArg, ...(shape.codeOption ?? [])];
      const p = readOptions(args, looseTable({ withArg, stopAtOperand: true }));
      const out: Effect[] = [];
      if (shape.privilege) out.push(finding("high", "privilege.escalation", `${shape.privilege} runs the command with other privileges`));
      if (shape.privilege === "sudo" && has(p, "-e", "--edit")) out.push(finding("high", "path.write-sensitive", "sudo -e edits files as root"));
      const own = wrapperOptionVerdict(name, args);
      if (own?.queryOnly) return own.findings.length ? own.findings : [readOnly(`${name} only queries`)];
      if (own) out.push(...own.findings);
      if (shape.queryOnly && shape.queryOnly.some((q) => has(p, q))) {
        if (shape.privilege) return [finding("low", "privilege.query", `${name} only queries privileges`)];
        if (name === "command") return [readOnly("looks a command up without running it")];
        return [readOnly(`${name} only queries`)];
      }
      for (const opt of shape.codeOption ?? []) {
        const v = optionValue(p, opt);
        if (v && v.index !== undefined) out.push({ kind: "shell-code", arg: v.index, rule: "dynamic.shell-code", floor: "medium", what: `${name} ${opt}` });
        else if (v) out.push(finding("high", "dynamic.shell-code", `${name} ${opt} with inline code`));
      }
      let start = p.end;
      if (name === "env" || (shape.assignments && name === "sudo")) {
        while (start < args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[start] ?? "")) {
          const assignment = args[start]!;
          const varName = assignment.slice(0, assignment.indexOf("="));
          const sensitive = sensitiveVariable(varName);
          const env = sensitive ? undefined : envFindings({ [varName]: assignment.slice(assignment.indexOf("=") + 1) })[0];
          if (sensitive) out.push(finding(sensitive.level, "env.sensitive-variable", sensitive.message, start));
          else if (env && env.level !== "read_only") out.push(finding(env.level, env.rule, env.message, start));
          start++;
        }
      }
      if (name === "su" || (name === "runuser" && !has(p, "-u", "--user"))) {
        // su's operands are the user and extra shell args, never a command.
        if (out.some((e) => e.kind === "shell-code")) return out;
        return [...out, ...(shape.bare ?? [])];
      }
      if (name === "busybox" || name === "toybox") {
        if (start >= args.length) return [readOnly(`${name} lists its applets`)];
        return [{ kind: "exec", from: start, via: name }];
      }
      const skip = shape.skipOperands ?? 0;
      // Options may follow the fixed operands too (`timeout 5 -s KILL` is not valid, but `flock f -c` is).
      let fixed = 0;
      while (fixed < skip && start < args.length) {
        const a = args[start];
        if (a !== null && a !== undefined && a.startsWith("-")) break;
        start++;
        fixed++;
      }
      if (name === "flock" && fixed > 0) {
        // flock FILE creates FILE when it does not exist; a number is a descriptor the shell already opened.
        const lock = start - 1;
        const v = args[lock] ?? null;
        if (v === null || !/^[0-9]+$/.test(v)) out.push(finding("low", "command.writes", "flock creates its lock file when it does not exist", lock), ...writeTargetFindings(args, [lock], "creates a lock file at"));
      }
      if (name === "flock" || name === "chroot") {
        const rest = readOptions(args.slice(start), looseTable({ withArg, stopAtOperand: true }));
        for (const opt of shape.codeOption ?? []) {
          const v = optionValue(rest, opt);
          if (v && v.index !== undefined) out.push({ kind: "shell-code", arg: start + v.index, rule: "dynamic.shell-code", floor: "medium", what: `${name} ${opt}` });
        }
        start += rest.end;
      }
      if (out.some((e) => e.kind === "shell-code")) return out;
      if (start >= args.length) return [...out, ...(shape.bare ?? [readOnly(`${name} without a command`)])];
      return [...out, { kind: "exec", from: start, via: name }];
    },
  };
}

// ---------------------------------------------------------------------------
// Argument-aware classifiers

/** Variables that change which code a later command loads or how words split. */
export function sensitiveVariable(name: string): { level: RiskLevel; message: string } | null {
  if (["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PYTHONSTARTUP", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "BASH_FUNC"].includes(name) || name.startsWith("BASH_FUNC_")) {
    return { level: "high", message: `setting ${name} makes later programs load or run extra code` };
  }
  if (name === "IFS") return { level: "high", message: "changing IFS changes how later words split, a common way to hide commands" };
  if (name === "PATH" || name === "PYTHONPATH" || name === "NODE_PATH" || name === "PERL5LIB") return { level: "medium", message: `setting ${name} changes which program or library a name resolves to` };
  return null;
}

function rmSpec(): CommandSpec {
  return {
    category: "deletes",
    classify(args) {
      const p = readOptions(args, looseTable());
      const recursive = has(p, "-r", "-R", "--recursive");
      const out: Effect[] = [finding("high", "command.deletes", recursive ? "deletes files and directories recursively" : "deletes files")];
      if (has(p, "--no-preserve-root")) out.push(finding("critical", "command.destroys-system", "rm --no-preserve-root disables the last guard against deleting /"));
      out.push(...deleteTargetFindings(args, p.operands, recursive));
      return out;
    },
  };
}

/** find primaries that only test or print, and those that take a value. */
const FIND_VALUE = new Set(["-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-regextype", "-type", "-xtype", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-newer", "-anewer", "-cnewer", "-perm", "-user", "-group", "-uid", "-gid", "-links", "-inum", "-samefile", "-lname", "-ilname", "-used", "-fstype", "-context", "-maxdepth", "-mindepth", "-printf", "-D", "-files0-from"]);
const FIND_FLAG = new Set(["-empty", "-nouser", "-nogroup", "-readable", "-writable", "-executable", "-depth", "-d", "-mount", "-xdev", "-follow", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race", "-daystart", "-warn", "-nowarn", "-print", "-print0", "-ls", "-prune", "-quit", "-true", "-false", "-not", "-and", "-or", "-a", "-o", "-help", "--help", "-version", "--version", "-P", "-L", "-H", "(", ")", "!", ",", "\\(", "\\)"]);

/** find primaries whose value is a name or path pattern: `-name id_*` picks credentials for `-exec cat {}`. */
const FIND_PATTERNS = new Set(["-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-lname", "-ilname"]);

/**
 * find: a listing is read-only; `-exec`/`-execdir`/`-ok`/`-okdir` take the
 * level of the command they run, with `{}` standing for the files found
 * under the starting points (many of them before `+`). Those files are read
 * by that command, so a starting point holding credentials, or a name
 * pattern that could be one, is a credential read.
 */
function findSpec(): CommandSpec {
  return {
    category: "read-only",
    classify(args, _name, where) {
      const out: Effect[] = [];
      let start = 0;
      while (start < args.length && args[start] !== null && !args[start]!.startsWith("-") && !["(", "!"].includes(args[start]!)) start++;
      const roots = Array.from({ length: start }, (_, i) => i);
      let acted = false;
      let runs = false;
      for (let i = start; i < args.length; i++) {
        const a = args[i];
        if (a === "-exec" || a === "-execdir" || a === "-ok" || a === "-okdir") {
          let end = i + 1;
          while (end < args.length && args[end] !== ";" && args[end] !== "+") end++;
          const hold = { level: "medium" as const, rule: "dynamic.find-exec", message: `find ${a} runs a command for every match`, arg: i };
          out.push({ kind: "exec", from: i + 1, to: end, via: `find ${a}`, replace: { token: "{}", with: roots[0] ?? null, many: args[end] === "+" }, hold });
          runs = true;
          i = end;
        } else if (a === "-delete") {
          out.push(finding("high", "command.deletes", "find -delete deletes every match", i));
          out.push(...deleteTargetFindings(args, roots.length ? roots : [], true));
          acted = true;
        } else if (a === "-fprint" || a === "-fprint0" || a === "-fprintf" || a === "-fls") {
          out.push(finding("low", "command.writes", `find ${a} writes a file`, i));
          out.push(...writeTargetFindings(args, [i + 1]));
          acted = true;
          i += a === "-fprintf" ? 2 : 1;
        } else if (a === null || a === undefined) {
          out.push(finding("medium", "option.dynamic", "find: an argument only known at run time may be an action such as -delete or -exec", i));
          acted = true;
        } else if (FIND_VALUE.has(a) || /^-newer[aBcmt][aBcmt]$/.test(a)) {
          i++;
        } else if (FIND_FLAG.has(a) || /^-O[0-9]$/.test(a)) {
          continue;
        } else {
          out.push(finding("medium", "option.unknown", `find ${a}: a primary the catalogue does not know; it may act on files`, i));
          acted = true;
        }
      }
      if (runs) {
        const starts = roots.length ? roots.map((i) => args[i] ?? null) : ["."];
        for (const root of starts) if (isSecretRead(root, { ...where, recursive: true })) out.push(finding("medium", "path.read-secret", `find runs a command on the files below ${root}, which holds credentials`));
        for (let i = start; i + 1 < args.length; i++) {
          const pattern = args[i + 1] ?? null;
          // A negated test (`-not -path '*/node_modules/*'`) only removes files from the match; the starting points are judged above.
          const negated = args[i - 1] === "-not" || args[i - 1] === "!";
          if (FIND_PATTERNS.has(args[i] ?? "") && !negated && pattern !== null && isSecretRead(pattern.slice(pattern.lastIndexOf("/") + 1), where)) out.push(finding("medium", "path.read-secret", `find runs a command on files named like a credential (${pattern})`, i + 1));
        }
      }
      if (!acted) out.push(readOnly(runs ? "searches for files and runs a command on them" : "searches for files"));
      return out;
    },
  };
}

/**
 * GNU xargs 4.9's option table (getopt_long, "+0a:E:e::i::I:l::L:n:prs:txP:d:o"):
 * the first operand is the command, run with words read from input appended
 * (or, with a replacement string, put where that string stands).
 */
const XARGS_TABLE: OptionTable = {
  flags: "0prtxo",
  values: "adEILnsP",
  optional: "eil",
  longs: ["null", "arg-file=", "delimiter=", "eof?", "replace?", "max-lines?", "max-args=", "max-procs=", "max-chars=", "interactive", "no-run-if-empty", "verbose", "exit", "show-limits", "open-tty", "process-slot-var=", "help", "version"],
  abbreviate: true,
  stopAtOperand: true,
};

/**
 * xargs takes the level of the command it runs, judged with words only known
 * at run time appended: `xargs grep -n foo` is read-only because grep is with
 * any extra words, `xargs sed -n p` is not (a word could be `-i`). Options
 * that change how the command runs keep xargs held: `-o` hands it the
 * terminal, `--process-slot-var` sets a variable in its environment.
 */
function xargsSpec(): CommandSpec {
  return {
    category: "dynamic",
    classify(args, _name, where) {
      const read = readOptions(args, XARGS_TABLE);
      const out: Effect[] = [];
      const hold = { level: "medium" as const, rule: "dynamic.xargs", message: "xargs runs a command with arguments read from input" };
      for (const i of read.unknown) out.push(finding("medium", "option.unknown", `xargs ${args[i]}: an option the catalogue does not know for xargs`, i));
      if (optionsNamed(read, "--help", "--version").length) return [...out, readOnly("xargs prints its help or version")];
      for (const o of optionsNamed(read, "-a", "--arg-file")) if (isSecretRead(o.value ?? null, where)) out.push(finding("medium", "path.read-secret", `reads a credential file (${o.value})`, o.valueIndex));
      const changes = optionsNamed(read, "-o", "--open-tty", "--process-slot-var");
      for (const o of changes) out.push(finding(hold.level, hold.rule, `xargs ${o.name} changes how the command runs (the terminal as its stdin, or a variable in its environment)`, o.index));
      if (read.end >= args.length) return [...out, readOnly("xargs without a command echoes its input")];
      const replace = optionsNamed(read, "-I", "-i", "--replace").map((o) => (o.value === undefined ? "{}" : o.value));
      if (replace.some((r) => r === null)) return [...out, finding("medium", "option.dynamic", "xargs: the replacement string is only known at run time"), { kind: "exec", from: read.end, via: "xargs", argsUnknown: true }];
      const token = replace.length ? replace[replace.length - 1]! : null;
      const exec: Effect = token === null || token === "" ? { kind: "exec", from: read.end, via: "xargs", argsUnknown: true, hold } : { kind: "exec", from: read.end, via: "xargs", unknownToken: token, hold };
      return [...out, exec];
    },
  };
}

function parallelSpec(): CommandSpec {
  return {
    category: "dynamic",
    classify(args) {
      const p = readOptions(args, looseTable({ withArg: ["-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "--joblog", "-d", "--delimiter"], stopAtOperand: true }));
      let end = args.indexOf(":::");
      if (end === -1) end = args.length;
      const out: Effect[] = [finding("medium", "dynamic.xargs", "parallel runs a command for every input")];
      if (p.end >= end) return out;
      // parallel hands a single-word command template to a shell.
      if (end - p.end === 1) return [...out, { kind: "shell-code", arg: p.end, rule: "dynamic.shell-code", floor: "medium", what: "parallel's command template" }];
      return [...out, { kind: "exec", from: p.end, to: end, via: "parallel", argsUnknown: true }];
    },
  };
}

const SED_LONGS: Readonly<Record<string, string>> = {
  quiet: "n", silent: "n", expression: "e", file: "f", "in-place": "i", "regexp-extended": "E", separate: "s", "null-data": "z", "zero-terminated": "z",
  unbuffered: "u", "line-length": "l", posix: "", debug: "", sandbox: "", "follow-symlinks": "", binary: "b", help: "", version: "",
};

/** The long option a (possibly abbreviated) name means, as getopt_long would resolve it; null when unknown or ambiguous. */
function resolveLong(name: string, longs: readonly string[]): string | null {
  if (longs.includes(name)) return name;
  const matches = longs.filter((l) => l.startsWith(name));
  return matches.length === 1 ? matches[0]! : null;
}

// eslint-disable-next-line max-lines-per-function -- sed's options and script in one place, so its write and execute paths are audited together
function sedSpec(): CommandSpec {
  return {
    category: "read-only",
    // eslint-disable-next-line max-lines-per-function -- the classifier of the spec above, for the same reason
    classify(args, _name, where) {
      const out: Effect[] = [];
      const scripts: { text: ArgValue; index: number }[] = [];
      const operands: number[] = [];
      let inPlace = false;
      let scriptFile = false;
      for (let i = 0; i < args.length; i++) {
        const a = args[i];
        if (a === null || a === undefined) {
          out.push(finding("medium", "option.dynamic", "sed: an argument only known at run time may be an option such as -i or a script", i));
          operands.push(i);
          continue;
        }
        if (a === "--") {
          for (let j = i + 1; j < args.length; j++) operands.push(j);
          break;
        }
        if (a === "-" || !a.startsWith("-")) {
          operands.push(i);
          continue;
        }
        if (a.startsWith("--")) {
          const eq = a.indexOf("=");
          const long = resolveLong(eq === -1 ? a.slice(2) : a.slice(2, eq), Object.keys(SED_LONGS));
          const inline = eq === -1 ? undefined : a.slice(eq + 1);
          if (long === null) {
            out.push(finding("medium", "option.unknown", `sed ${a}: an option the catalogue does not know for sed`, i));
            continue;
          }
          const letter = SED_LONGS[long]!;
          if (letter === "e" || letter === "f" || letter === "l") {
            const index = inline === undefined ? ++i : i;
            const value = inline ?? args[index] ?? null;
            if (letter === "e") scripts.push({ text: value, index });
            if (letter === "f") scriptFile = true;
          } else if (letter === "i") inPlace = true;
          continue;
        }
        for (let k = 1; k < a.length; k++) {
          const letter = a[k]!;
          if (letter === "i") {
            inPlace = true;
            break;
          }
          if (letter === "e" || letter === "f" || letter === "l") {
            const index = k + 1 < a.length ? i : ++i;
            const value = k + 1 < a.length ? a.slice(k + 1) : (args[index] ?? null);
            if (letter === "e") scripts.push({ text: value, index });
            if (letter === "f") scriptFile = true;
            break;
          }
          if (!"nErszub".includes(letter)) {
            out.push(finding("medium", "option.unknown", `sed ${a}: an option the catalogue does not know for sed`, i));
            break;
          }
        }
      }
      let files = operands;
      if (scripts.length === 0 && !scriptFile && operands.length) {
        scripts.push({ text: args[operands[0]!] ?? null, index: operands[0]! });
        files = operands.slice(1);
      }
      for (const { text, index } of scripts) {
        if (text === null) {
          out.push(finding("high", "dynamic.interpreter-code", "the sed script is only known at run time; GNU sed scripts can run shell commands (e)", index));
          continue;
        }
        const facts = sedScriptFacts(text);
        if (facts.executes) out.push(finding("high", "dynamic.interpreter-code", "the sed script runs shell commands (the e command or the s///e flag)", index));
        // GNU sed names /dev/stdout and /dev/stderr specially: writing there is printing.
        for (const w of facts.writes.filter((f) => f !== "/dev/stdout" && f !== "/dev/stderr")) out.push(finding("medium", "command.writes", `the sed script writes a file (${w || "no name"})`, index), ...writeTarget(w, index, "the sed script writes"));
        for (const r of facts.reads) {
          out.push(finding("low", "command.reads-named-file", `the sed script reads a file it names (${r || "no name"})`, index));
          if (isSecretRead(r, where)) out.push(finding("medium", "path.read-secret", `reads a credential file (${r})`, index));
        }
        if (facts.unparsed) out.push(finding("medium", "option.unknown", "the sed script could not be read completely; what it does is not known", index));
      }
      if (scriptFile) out.push(finding("high", "dynamic.script-file", "the sed script comes from a file, which is not analysed (sed scripts can run shell commands)"));
      if (inPlace) {
        out.push(finding("medium", "command.writes", "sed -i edits files in place"));
        out.push(...writeTargetFindings(args, files, "edits"));
      }
      if (out.length === 0) out.push(readOnly("transforms text"));
      return [...out, ...secretReadFindings(args, false, where)];
    },
  };
}

/**
 * awk programs are read with awk's own lexical grammar (awk-program.ts): a
 * program that calls `system`, opens a pipe, redirects print output to a
 * file, reads a file with `getline <`, loads code (`@load`, `@include`),
 * changes ARGV/ARGC or closes a stream is not read-only; a `>` that compares
 * (`$3 > 100`) is.
 */
function awkSpec(): CommandSpec {
  return {
    category: "read-only",
    classify(args, _name, where) {
      const model: ReadModel = {
        flags: "bcCghLMnNOPrsStV",
        withArg: "Fv",
        longs: ["characters-as-bytes", "traditional", "copyright", "gen-pot", "help", "lint", "lint=", "bignum", "use-lc-numeric", "non-decimal-data", "optimize", "posix", "re-interval", "no-optimize", "sandbox", "version", "field-separator=", "assign=", "csv"],
        hazards: {
          "-f": { level: "high", rule: "dynamic.script-file", message: "runs an awk program from a file, which is not analysed", value: true },
          "--file": { level: "high", rule: "dynamic.script-file", message: "runs an awk program from a file, which is not analysed", value: true },
          "-E": { level: "high", rule: "dynamic.script-file", message: "runs an awk program from a file, which is not analysed", value: true },
          "--exec": { level: "high", rule: "dynamic.script-file", message: "runs an awk program from a file, which is not analysed", value: true },
          "-i": { level: "high", rule: "dynamic.script-file", message: "includes an awk source file (inplace edits files)", value: true },
          "--include": { level: "high", rule: "dynamic.script-file", message: "includes an awk source file (inplace edits files)", value: true },
          "-l": { level: "high", rule: "dynamic.interpreter-code", message: "loads a shared library into awk", value: true },
          "--load": { level: "high", rule: "dynamic.interpreter-code", message: "loads a shared library into awk", value: true },
          "-d": { level: "low", rule: "command.writes", message: "dumps variables to a file" },
          "--dump-variables": { level: "low", rule: "command.writes", message: "dumps variables to a file" },
          "-o": { level: "low", rule: "command.writes", message: "pretty-prints the program to a file" },
          "--pretty-print": { level: "low", rule: "command.writes", message: "pretty-prints the program to a file" },
          "-p": { level: "low", rule: "command.writes", message: "writes a profile file" },
          "--profile": { level: "low", rule: "command.writes", message: "writes a profile file" },
          "-D": { level: "medium", rule: "option.unknown", message: "starts the awk debugger, which reads commands from stdin" },
          "--debug": { level: "medium", rule: "option.unknown", message: "starts the awk debugger, which reads commands from stdin" },
        },
      };
      // -e/--source program text is taken out before the generic scan.
      const sources: { text: ArgValue; index: number }[] = [];
      const rest: ArgValue[] = [];
      const map: number[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i];
        if (a === "-e" || a === "--source") {
          sources.push({ text: args[i + 1] ?? null, index: i + 1 });
          i++;
          continue;
        }
        if (a !== null && a !== undefined && a.startsWith("--source=")) {
          sources.push({ text: a.slice("--source=".length), index: i });
          continue;
        }
        rest.push(a ?? null);
        map.push(i);
      }
      const scan = scanOptions("awk", rest, model);
      const out: Effect[] = scan.findings.map((f) => (f.arg === undefined ? f : { ...f, arg: map[f.arg] }));
      const fromFile = [...scan.seen].some((o) => ["-f", "--file", "-E", "--exec"].includes(o));
      const operands = scan.operands.map((i) => map[i]!);
      if (sources.length === 0 && !fromFile) {
        if (operands.length === 0) out.push(finding("high", "parse.error", "awk has no program"));
        else {
          sources.push({ text: args[operands[0]!] ?? null, index: operands[0]! });
        }
      }
      // gawk reads several -e/--source texts as one program, one after the other.
      const known = sources.filter((x): x is { text: string; index: number } => x.text !== null);
      for (const { index } of sources.filter((x) => x.text === null)) out.push(finding("high", "dynamic.interpreter-code", "the awk program is only known at run time", index));
      if (known.length) out.push(...awkFindings(awkProgramFacts(known.map((x) => x.text).join("\n")), known[0]!.index, where));
      if (out.length === 0) out.push(readOnly("processes text with awk"));
      return [...out, ...secretReadFindings(args, false, where)];
    },
  };
}

function awkFindings(facts: AwkFacts, index: number, where: Whereabouts): Effect[] {
  const out: Effect[] = [];
  if (facts.executes) out.push(finding("high", "dynamic.interpreter-code", "the awk program runs commands (system() or a pipe)", index));
  if (facts.loads) out.push(finding("high", "dynamic.interpreter-code", "the awk program loads code (@load, @include) or calls a function by name", index));
  for (const w of facts.writes) out.push(finding("medium", "command.writes", `the awk program writes a file (${w ?? "a name only known at run time"})`, index), ...writeTargetFindings([w], [0], "the awk program writes").map((e) => (e.kind === "finding" ? { ...e, arg: index } : e)));
  for (const r of facts.reads) {
    if (r === null || r.startsWith("/inet")) out.push(finding("medium", "command.reads-named-file", `the awk program reads ${r === null ? "a file only known at run time (gawk opens network connections through /inet names)" : `a network connection (${r})`}`, index));
    else out.push(finding("low", "command.reads-named-file", `the awk program reads a file it names (${r})`, index));
    if (isSecretRead(r, where)) out.push(finding("medium", "path.read-secret", `reads a credential file (${r})`, index));
  }
  if (facts.changesInputs) out.push(finding("medium", "command.reads-named-file", "the awk program changes ARGV/ARGC, which names the files it reads", index));
  if (facts.closes) out.push(finding("medium", "command.writes", "the awk program closes a stream (used with files and pipes); it is rated conservatively", index));
  if (facts.unparsed) out.push(finding("medium", "option.unknown", "the awk program could not be read completely; what it does is not known", index));
  return out;
}

function copySpec(verb: string, level: RiskLevel): CommandSpec {
  return {
    category: "writes",
    classify(args, _name, where) {
      const p = readOptions(args, looseTable({ withArg: ["-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"] }));
      const out: Effect[] = [finding(level, "command.writes", `${verb} files`)];
      const target = optionValue(p, "-t", "--target-directory");
      const targets = target?.index !== undefined ? [target.index] : p.operands.length ? [p.operands[p.operands.length - 1]!] : [];
      out.push(...writeTargetFindings(args, targets, verb));
      if (verb === "moves") {
        const sources = target ? p.operands : p.operands.slice(0, -1);
        for (const i of sources) {
          const cls = classifyPath(args[i] ?? null);
          if (cls === "root" || cls === "system" || cls === "user-secret") out.push(finding("high", "path.delete-sensitive", `moves away a system or credential path (${args[i]})`, i));
        }
      }
      return [...out, ...secretReadFindings(args, verb === "moves" || has(p, "-r", "-R", "-a", "--recursive", "--archive"), where)];
    },
  };
}

function touchLikeSpec(verb: string, level: RiskLevel, rule = "command.writes", withArg: string[] = []): CommandSpec {
  return {
    category: rule === "command.deletes" ? "deletes" : "writes",
    classify(args) {
      const ops = operandsOf(args, { withArg });
      return [finding(level, rule, verb), ...writeTargetFindings(args, ops, verb)];
    },
  };
}

function teeSpec(): CommandSpec {
  return {
    category: "writes",
    classify(args) {
      const ops = operandsOf(args).filter((i) => classifyPath(args[i] ?? null) !== "discard");
      if (ops.length === 0) return [readOnly("copies input to output"), { kind: "passthrough" }];
      return [finding("low", "command.writes", "tee writes its input to files"), ...writeTargetFindings(args, ops), { kind: "passthrough" }];
    },
  };
}

function ddSpec(): CommandSpec {
  return {
    category: "writes",
    classify(args) {
      const out: Effect[] = [];
      args.forEach((a, i) => {
        if (a === null) {
          out.push(finding("medium", "path.write-dynamic", "a dd operand is only known at run time", i));
          return;
        }
        if (a.startsWith("of=")) {
          const target = a.slice(3);
          const cls = classifyPath(target);
          if (cls === "device") out.push(finding("critical", "command.destroys-system", `dd writes straight to the device ${target}`, i));
          else if (cls !== "discard") {
            out.push(finding("medium", "command.writes", `dd writes ${target}`, i));
            out.push(...writeTargetFindings([target], [0]).map((e) => (e.kind === "finding" ? { ...e, arg: i } : e)));
          }
        }
        if (a.startsWith("if=") && classifyPath(a.slice(3)) === "device") out.push(finding("medium", "path.read-device", `dd reads the raw device ${a.slice(3)}`, i));
      });
      if (out.length === 0) out.push(readOnly("dd copies stdin to stdout"));
      return out;
    },
  };
}

function permissionSpec(verb: string): CommandSpec {
  return {
    category: "writes",
    classify(args) {
      const p = readOptions(args, looseTable({ withArg: ["--reference", "--from"] }));
      const recursive = has(p, "-R", "--recursive");
      const hasReference = has(p, "--reference");
      const ops = p.operands;
      // `chmod -x file` parses as an option; the mode is then the first operand or that option.
      const modeIndex = hasReference ? -1 : (ops[0] ?? -1);
      const mode = modeIndex >= 0 ? (args[modeIndex] ?? null) : null;
      const targets = hasReference ? ops : ops.slice(1);
      const out: Effect[] = [finding("medium", "command.permissions", `${verb} file ${verb === "chmod" ? "permissions" : "ownership"}`)];
      if (verb === "chmod" && mode !== null && (/(^|[,ugoa])[ugoa]*[+=][rwxXt]*s/.test(mode) || /^[2-7][0-7]{3}$/.test(mode))) out.push(finding("high", "permissions.setuid", `sets a setuid/setgid bit (${mode})`, modeIndex));
      const worldWritable = verb === "chmod" && mode !== null && (/^[0-7]?[0-7][0-7][2367]$/.test(mode) || /(^|,)(a|o|)[+=][rwx]*w/.test(mode));
      for (const i of targets) {
        const cls = classifyPath(args[i] ?? null);
        if ((cls === "root" && (recursive || worldWritable)) || (cls === "system" && recursive && worldWritable)) out.push(finding("critical", "command.destroys-system", `${verb}${recursive ? " -R" : ""} on ${args[i]} breaks the system's permission model`, i));
        else if (cls === "root" || cls === "system" || cls === "user-secret") out.push(finding("high", "path.write-sensitive", `${verb} on a system or credential path (${args[i]})`, i));
        else if (cls === "device") out.push(finding("high", "path.write-sensitive", `${verb} on a device (${args[i]})`, i));
        else if (cls === "outside") out.push(finding("medium", "path.write-outside", `${verb} outside the working directory (${args[i]})`, i));
      }
      if (worldWritable) out.push(finding("medium", "permissions.world-writable", `makes files writable by everyone (${mode})`, modeIndex));
      return out;
    },
  };
}

function curlSpec(): CommandSpec {
  return {
    category: "network",
    classify(args, _name, where) {
      const p = readOptions(args, looseTable({
        withArg: [
          "-o", "--output", "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json", "-F", "--form", "--form-string",
          "-T", "--upload-file", "-X", "--request", "-H", "--header", "-u", "--user", "-A", "--user-agent", "-e", "--referer", "-b", "--cookie",
          "-c", "--cookie-jar", "-x", "--proxy", "-K", "--config", "-w", "--write-out", "-m", "--max-time", "--connect-timeout", "-r", "--range",
          "--retry", "-E", "--cert", "--key", "--cacert", "--resolve", "--url", "-D", "--dump-header", "--output-dir", "-C", "--continue-at",
        ],
      }));
      const out: Effect[] = [{ kind: "network" }, finding("medium", "command.network", "makes a network request")];
      const upload = has(p, "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json", "-F", "--form", "--form-string", "-T", "--upload-file");
      const method = optionValue(p, "-X", "--request");
      if (upload || (method && /^(POST|PUT|DELETE|PATCH)$/i.test(method.value ?? "POST"))) out.push(finding("high", "network.upload", "sends data to a remote server (possible exfiltration or remote change)"));
      const output = optionValue(p, "-o", "--output");
      if (has(p, "-O", "--remote-name", "--remote-name-all") || (output && output.value !== "-")) {
        out.push(finding("medium", "network.download", "saves downloaded content to a file"));
        if (output?.index !== undefined) out.push(...writeTargetFindings(args, [output.index]), { kind: "downloads-to", arg: output.index });
        else if (output) out.push(...writeTargetFindings([output.value], [0]).map((e) => (e.kind === "finding" ? { ...e, arg: undefined } : e)).map((e) => e as Effect));
      }
      if (has(p, "-K", "--config")) out.push(finding("high", "dynamic.script-file", "curl reads options from a file"));
      args.forEach((a, i) => {
        if (a !== null && /^file:\/\//i.test(a)) out.push(finding("medium", "path.read-secret", "curl reads a local file URL", i));
        if (a !== null && a.startsWith("@") && isSecretRead(a.slice(1), where)) out.push(finding("critical", "network.exfiltration", `uploads a credential file (${a.slice(1)})`, i));
      });
      // `-F name=@file` and `-T file` upload a file without a leading @.
      for (const key of ["-F", "--form", "-T", "--upload-file"]) {
        const v = optionValue(p, key);
        const raw = v?.value ?? null;
        const file = raw === null ? null : raw.includes("=@") ? raw.slice(raw.indexOf("=@") + 2) : key === "-T" || key === "--upload-file" ? raw : null;
        if (file !== null && isSecretRead(file, where)) out.push(finding("critical", "network.exfiltration", `uploads a credential file (${file})`, v?.index));
      }
      return out;
    },
  };
}

function wgetSpec(): CommandSpec {
  return {
    category: "network",
    classify(args) {
      const p = readOptions(args, looseTable({ withArg: ["-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P", "--directory-prefix", "-i", "--input-file", "-U", "--user-agent", "--header", "--post-data", "--post-file", "--body-data", "--body-file", "--method", "-e", "--execute", "-t", "--tries", "-T", "--timeout", "--user", "--password"] }));
      const out: Effect[] = [{ kind: "network" }, finding("medium", "command.network", "makes a network request")];
      if (has(p, "--post-data", "--post-file", "--body-data", "--body-file") || /^(POST|PUT|DELETE|PATCH)$/i.test(optionValue(p, "--method")?.value ?? "")) out.push(finding("high", "network.upload", "sends data to a remote server"));
      const doc = optionValue(p, "-O", "--output-document");
      const spider = has(p, "--spider");
      if (!spider && (!doc || doc.value !== "-")) {
        out.push(finding("medium", "network.download", "saves downloaded content to a file"));
        if (doc?.index !== undefined) out.push(...writeTargetFindings(args, [doc.index]), { kind: "downloads-to", arg: doc.index });
        const dir = optionValue(p, "-P", "--directory-prefix");
        if (dir?.index !== undefined) out.push(...writeTargetFindings(args, [dir.index]));
      }
      if (has(p, "-e", "--execute")) out.push(finding("medium", "dynamic.interpreter-code", "wget -e runs wgetrc commands"));
      return out;
    },
  };
}

function sshSpec(): CommandSpec {
  return {
    category: "network",
    classify(args) {
      const p = readOptions(args, looseTable({ withArg: ["-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B"], stopAtOperand: true }));
      const out: Effect[] = [{ kind: "network" }, finding("high", "network.remote-exec", "opens a session on another machine")];
      const o = optionValue(p, "-o");
      if (o && /ProxyCommand|LocalCommand|PermitLocalCommand/i.test(o.value ?? "ProxyCommand")) out.push(finding("high", "dynamic.shell-code", "ssh -o runs a local command", o.index));
      if (has(p, "-L", "-R", "-D", "-W")) out.push(finding("high", "network.tunnel", "opens a network tunnel"));
      const commandStart = p.end + 1;
      if (commandStart < args.length) out.push({ kind: "shell-code", arg: commandStart, join: true, rule: "network.remote-exec", floor: "high", what: "the remote command" });
      return out;
    },
  };
}

function netcatSpec(): CommandSpec {
  return {
    category: "network",
    classify(args) {
      const out: Effect[] = [{ kind: "network" }, finding("high", "network.raw-socket", "opens a raw network connection or listener")];
      args.forEach((a, i) => {
        if (a === "-e" || a === "-c" || a === "--exec" || a === "--sh-exec" || a === "--lua-exec") out.push(finding("critical", "network.reverse-shell", "hands a program to a network connection (a remote shell)", i));
        if (a !== null && /^(EXEC|SYSTEM):/i.test(a)) out.push(finding("critical", "network.reverse-shell", "socat connects a network stream to a program", i));
      });
      return out;
    },
  };
}

function rsyncSpec(): CommandSpec {
  return {
    category: "writes",
    classify(args, _name, where) {
      const p = readOptions(args, looseTable({ withArg: ["-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--exclude-from", "--include-from", "--files-from", "-T", "--temp-dir", "--rsync-path", "--log-file", "--password-file", "-B", "--block-size", "--bwlimit", "--chmod", "--chown"] }));
      const remote = p.operands.some((i) => /^[^/]*:|^rsync:\/\//.test(args[i] ?? ":"));
      const out: Effect[] = [];
      if (remote) out.push({ kind: "network" }, finding("high", "network.transfer", "copies files to or from another machine"));
      else out.push(finding("medium", "command.writes", "copies files"));
      if (has(p, "--delete", "--delete-before", "--delete-after", "--delete-during", "--delete-excluded", "--remove-source-files")) out.push(finding("high", "command.deletes", "rsync deletes files"));
      if (p.operands.length) out.push(...writeTargetFindings(args, [p.operands[p.operands.length - 1]!]));
      return [...out, ...secretReadFindings(args, has(p, "-r", "-a", "--recursive", "--archive"), where)];
    },
  };
}

const TAR_EXEC_LONGS = ["to-command", "checkpoint-action", "use-compress-program", "rsh-command", "info-script", "new-volume-script"];
const TAR_WRITE_LONGS = ["index-file", "volno-file", "listed-incremental", "backup"];
const TAR_LIST_SHORTS = "tvfzjJZaCTXibBhPnRwlOkmop";
const TAR_LIST_LONGS = new Set(["list", "file", "gzip", "gunzip", "ungzip", "bzip2", "xz", "lzma", "lzip", "lzop", "zstd", "compress", "uncompress", "auto-compress", "verbose", "directory", "wildcards", "no-wildcards", "anchored", "no-anchored", "exclude", "exclude-from", "files-from", "null", "numeric-owner", "full-time", "utc", "quoting-style", "show-transformed-names", "show-stored-names", "ignore-zeros", "blocking-factor", "record-size", "force-local", "occurrence", "no-recursion", "recursion", "totals", "block-number", "warning", "wildcards-match-slash", "no-wildcards-match-slash", "ignore-case", "no-ignore-case", "strip-components", "transform", "xform", "label", "to-stdout", "format", "help", "version", "usage", "check-links", "seek", "no-seek", "dereference", "absolute-names", "interactive", "confirmation", "exclude-vcs", "exclude-caches", "exclude-backups"]);

function tarSpec(): CommandSpec {
  return {
    category: "writes",
    classify(args, _name, where) {
      // A run-time word could be any mode or option (`x`, `--to-command=sh`).
      const dynamic = args.findIndex((a) => a === null);
      if (dynamic !== -1) return [finding("medium", "option.dynamic", "tar: an argument only known at run time may be a mode or an option that writes or runs something", dynamic)];
      let mode = "";
      const first = args[0];
      // Old-style bundled first argument: `tar xzf a.tgz`.
      if (first && !first.startsWith("-")) mode += first;
      const p = readOptions(first && !first.startsWith("-") ? args.slice(1) : args, looseTable({ withArg: ["-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from", "-I", "--use-compress-program", "--to-command", "--checkpoint-action", "--rsh-command", "--info-script", "--new-volume-script"] }));
      const shorts = new Set(p.options.filter((o) => /^-[^-]$/.test(o.name)).map((o) => o.name[1]!));
      for (const s of shorts) mode += s;
      const long = [...new Set(p.options.filter((o) => o.name.startsWith("--")).map((o) => o.name.slice(2)))];
      const out: Effect[] = [];
      // argp accepts abbreviations (`--to-c=sh`): a long option that is a prefix of a hazard is that hazard.
      const hazard = (l: string): string | undefined => (TAR_LIST_LONGS.has(l) ? undefined : TAR_EXEC_LONGS.find((h) => l.length >= 2 && h.startsWith(l)));
      for (const l of long) {
        const h = hazard(l);
        if (h) out.push(finding("high", "dynamic.interpreter-code", `tar --${h} runs an external command`));
      }
      if (shorts.has("I") || shorts.has("F") || /[IF]/.test(first && !first.startsWith("-") ? first : "")) out.push(finding("high", "dynamic.interpreter-code", "tar runs an external command (-I compress program or -F volume script)"));
      for (const l of long) {
        const w = TAR_WRITE_LONGS.find((h) => l.length >= 2 && h.startsWith(l) && !TAR_LIST_LONGS.has(l));
        if (w) out.push(finding("low", "command.writes", `tar --${w} writes a file`));
      }
      if (shorts.has("g")) out.push(finding("low", "command.writes", "tar -g writes a snapshot file"));
      const archive = optionValue(p, "-f", "--file");
      if (archive && archive.value !== null && /^[^/]*:/.test(archive.value) && !long.includes("force-local")) out.push(finding("medium", "command.network", `tar opens ${archive.value} on another host through rsh/ssh`), { kind: "network" });
      const offset = first && !first.startsWith("-") ? 1 : 0;
      if (mode.includes("x") || long.includes("extract") || long.includes("get")) {
        out.push(finding("medium", "command.writes", "extracts an archive"));
        const dir = optionValue(p, "-C", "--directory");
        if (dir?.index !== undefined) out.push(...writeTargetFindings(args, [dir.index + offset], "extracts into"));
      } else if (mode.includes("c") || mode.includes("r") || mode.includes("u") || long.includes("create") || long.includes("append")) {
        const file = optionValue(p, "-f", "--file");
        if (file && file.value !== "-") {
          out.push(finding("low", "command.writes", "writes an archive"));
          if (file.index !== undefined) out.push(...writeTargetFindings(args, [file.index + offset]));
        } else out.push(readOnly("archives to stdout"));
        out.push(...secretReadFindings(args, true, where));
      } else {
        // Listing: every option must be one known to only read.
        for (const l of long) if (!TAR_LIST_LONGS.has(l) && !out.length) out.push(finding("medium", "option.unknown", `tar --${l}: an option the catalogue does not know for listing`));
        for (const sh of shorts) if (!TAR_LIST_SHORTS.includes(sh) && !"IFg".includes(sh)) out.push(finding("medium", "option.unknown", `tar -${sh}: an option the catalogue does not know for listing`));
        if (mode.replace(/[-]/g, "").split("").some((ch) => !TAR_LIST_SHORTS.includes(ch) && !"IFg".includes(ch))) out.push(finding("medium", "option.unknown", `tar ${first ?? ""}: a mode the catalogue does not know for listing`));
        if (!out.length) out.push(readOnly("lists an archive"));
      }
      return out;
    },
  };
}

function compressorSpec(name: string): CommandSpec {
  return {
    category: "writes",
    classify(args) {
      const p = readOptions(args, looseTable({ withArg: ["-S", "--suffix", "-o"] }));
      // A run-time word could be an option that writes (`zstdcat -o FILE`: the last of -c and -o wins).
      const dynamic = args.findIndex((a) => a === null);
      if (dynamic !== -1) return [finding("medium", "option.dynamic", `${name}: an argument only known at run time may be an option that writes a file`, dynamic)];
      const output = optionValue(p, "-o");
      if (output || p.options.some((o) => o.name.startsWith("--output"))) return [finding("low", "command.writes", `${name} -o writes its output to a file`), ...(output?.index !== undefined ? writeTargetFindings(args, [output.index]) : [finding("medium", "path.write-dynamic", `${name} writes a file named in an option`)])];
      const decoding = DATA_DECODERS.has(name) || has(p, "-d", "--decompress", "--uncompress");
      const toStdout = has(p, "-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test") || p.operands.length === 0 || name.endsWith("cat");
      const out: Effect[] = decoding ? [{ kind: "decoder" }] : [];
      if (toStdout) return [...out, readOnly(decoding ? "decompresses to stdout" : "compresses to stdout")];
      return [...out, finding("medium", "command.writes", `${name} replaces files with their (de)compressed form`), ...writeTargetFindings(args, p.operands)];
    },
  };
}

function decoderSpec(decodeFlags: readonly string[], nameAlwaysDecodes = false): CommandSpec {
  return {
    category: "read-only",
    classify(args, _name, where) {
      const decodes = nameAlwaysDecodes || args.some((a) => a !== null && (decodeFlags.includes(a) || (/^-[a-zA-Z]+$/.test(a) && decodeFlags.some((f) => f.length === 2 && a.includes(f[1]!)))));
      const out: Effect[] = [readOnly(decodes ? "decodes data" : "encodes or dumps data"), ...secretReadFindings(args, false, where)];
      if (decodes) out.push({ kind: "decoder" });
      return out;
    },
  };
}

function echoSpec(name: "echo" | "printf"): CommandSpec {
  return {
    category: "read-only",
    classify(args) {
      if (name === "printf" && args[0] === "-v" && subscriptInjection(args.slice(1, 2)).length) return subscriptInjection(args.slice(1, 2)).map((e) => ({ ...e, arg: 1 }));
      const out: Effect[] = [readOnly(`prints text (${name})`)];
      if (args.some((a) => a === null)) return out;
      const words = args as string[];
      if (name === "echo") {
        let i = 0;
        let interpret = false;
        while (i < words.length && /^-[neE]+$/.test(words[i]!)) {
          if (words[i]!.includes("e")) interpret = true;
          i++;
        }
        const text = words.slice(i).join(" ");
        if (interpret && /\\(x[0-9a-fA-F]|[0-7]{1,3}|u[0-9a-fA-F])/.test(text)) return [...out, { kind: "decoder" }];
        if (i < words.length) out.push({ kind: "literal-output", text: text + "\n", arg: i });
        return out;
      }
      const format = words[0] ?? "";
      if (format === "-v") return out;
      if (/\\(x[0-9a-fA-F]|[0-7]{1,3}|u[0-9a-fA-F])/.test(format) || words.slice(1).some((w) => /\\(x[0-9a-fA-F]|[0-7]{1,3})/.test(w) && format.includes("%b"))) return [...out, { kind: "decoder" }];
      if (words.length === 1 && !format.includes("%") && !format.includes("\\")) out.push({ kind: "literal-output", text: format, arg: 0 });
      else if (format === "%s\\n" || format === "%s") out.push({ kind: "literal-output", text: words.slice(1).join(format === "%s" ? "" : "\n") + (format === "%s" ? "" : "\n"), arg: 1 });
      return out;
    },
  };
}

function catSpec(): CommandSpec {
  return {
    category: "read-only",
    classify(args, _name, where) {
      const ops = operandsOf(args);
      const out: Effect[] = [readOnly("prints files"), ...secretReadFindings(args, false, where)];
      if (ops.length === 0 || (ops.length === 1 && args[ops[0]!] === "-")) out.push({ kind: "passthrough" });
      return out;
    },
  };
}

const SORT_MODEL: ReadModel = {
  flags: "bcCdfghiMmnRrsuVz",
  withArg: "kStT",
  longs: ["ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort", "ignore-nonprinting", "month-sort", "human-numeric-sort", "numeric-sort", "random-sort", "reverse", "version-sort", "sort=", "random-source=", "check", "check=", "key=", "merge", "stable", "buffer-size=", "field-separator=", "temporary-directory=", "parallel=", "unique", "zero-terminated", "files0-from=", "debug", "batch-size=", "help", "version"],
  hazards: {
    "-o": { level: "low", rule: "command.writes", message: "writes its output to a file", value: true, writes: true },
    "--output": { level: "low", rule: "command.writes", message: "writes its output to a file", value: true, writes: true },
    "--compress-program": { level: "high", rule: "dynamic.interpreter-code", message: "runs the named program to compress temporary files", value: true },
  },
};

function sortSpec(): CommandSpec {
  return {
    category: "read-only",
    classify(args, _name, where) {
      const found: Effect[] = scanOptions("sort", args, SORT_MODEL).findings;
      return [...(found.length ? found : [readOnly("sorts lines")]), ...secretReadFindings(args, false, where)];
    },
  };
}

/** Package managers without a model of their own: the subcommand decides (package-managers.ts). */
function packageManager(model: PackageManagerModel) {
  return (args: readonly ArgValue[], name: string): Effect[] => packageManagerFindings(model, args, name);
}

/** `-c` settings that only change how output looks; any other setting may name a program (core.fsmonitor, diff.external, pager.*, include.path ...). */
const GIT_SAFE_CONFIG = /^(color\.[a-z0-9.-]+|core\.(quotepath|abbrev)|log\.(date|decorate|abbrevcommit|follow|showroot|mailmap)|diff\.(noprefix|mnemonicprefix|renames|relative|context|interhunkcontext|algorithm|indentheuristic|colormoved|colormovedws|statgraphwidth|dirstat|suppressblankempty)|i18n\.[a-z]+|column\.[a-z]+|advice\.[a-z]+|safe\.directory|user\.(name|email)|init\.defaultbranch|grep\.(linenumber|extendedregexp|patterntype|column|fullname)|format\.pretty|pretty\.[a-z0-9_-]+|status\.(short|branch|showstash|showuntrackedfiles|relativepaths|aheadbehind)|versionsort\.[a-z]+|tag\.sort|branch\.sort|blame\.(date|coloring|showemail|showroot|blankboundary))(=|$)/i;

// eslint-disable-next-line max-lines-per-function -- git's global options and every subcommand's hazards in one place, so the read-only subset is audited together
function gitSpec(): CommandSpec {
  const network = new Set(["clone", "fetch", "pull", "submodule", "remote-update"]);
  const deletes = new Set(["clean", "gc", "prune", "filter-branch", "filter-repo"]);
  return {
    category: "writes",
    // eslint-disable-next-line max-lines-per-function -- the classifier of the spec above, for the same reason
    classify(args) {
      const out: Effect[] = [];
      let i = 0;
      // Global options: -C dir, -c key=val, --git-dir=..., --no-pager...
      for (; i < args.length; i++) {
        const a = args[i];
        if (a === null || a === undefined) break;
        if (a === "-C" || a === "--work-tree" || a === "--namespace") {
          i++;
          continue;
        }
        if (a === "--git-dir" || a.startsWith("--git-dir=")) {
          out.push(finding("medium", "dynamic.git-config", "git --git-dir uses another repository, whose configuration can name programs git runs", i));
          if (a === "--git-dir") i++;
          continue;
        }
        if (a.startsWith("--exec-path=")) {
          out.push(finding("high", "dynamic.git-config", "git --exec-path=DIR runs git's subcommands from that directory", i));
          continue;
        }
        if (a === "-c" || a === "--config-env" || a.startsWith("--config-env=")) {
          const inline = a.startsWith("--config-env=") ? a.slice("--config-env=".length) : null;
          const index = inline === null ? i + 1 : i;
          const v = inline ?? args[index] ?? null;
          if (v === null || !GIT_SAFE_CONFIG.test(v)) out.push(finding("high", "dynamic.git-config", `git ${a.split("=")[0]} sets ${v === null ? "an option only known at run time" : v.split("=")[0]}; many git settings name programs git runs`, index));
          else if (a !== "-c") out.push(finding("medium", "dynamic.git-config", "git --config-env takes a setting's value from the environment", index));
          if (inline === null) i++;
          continue;
        }
        if (a === "--version" || a === "--help") return [readOnly("prints git's version")];
        if (!a.startsWith("-")) break;
      }
      const sub = args[i];
      if (sub === undefined) return [...out, readOnly("prints git usage")];
      if (sub === null) return [...out, finding("high", "command.dynamic-subcommand", "the git subcommand is only known at run time", i)];
      const rest = args.slice(i + 1);
      const at = (level: RiskLevel, rule: string, message: string): Effect[] => [...out, finding(level, rule, message, i)];
      const reading = gitReadFindings(sub, rest, i + 1);
      if (reading !== null) return [...out, ...(reading.length ? reading : [readOnly(`git ${sub} only reads the repository`)])];
      switch (sub) {
        case "branch":
          if (rest.some((a) => a !== null && (/^-[a-zA-Z]*[dD]/.test(a) || a === "--delete"))) return at("medium", "command.writes", "deletes a branch");
          return at("low", "command.writes", "creates or changes a branch, or its upstream");
        case "tag":
          if (rest.length === 0 || rest.some((a) => a === "-l" || a === "--list")) return [...out, readOnly("lists tags")];
          return at("low", "command.writes", "creates or deletes a tag");
        case "remote":
          if (rest.length === 0 || rest.every((a) => a === "-v" || a === "--verbose" || a === "show" || a === "get-url")) return [...out, readOnly("lists remotes")];
          return at("medium", "command.writes", "changes remotes");
        case "stash":
          if (rest[0] === "drop" || rest[0] === "clear") return at("high", "command.deletes", "drops stashed changes");
          return at("medium", "command.writes", "stashes or restores changes");
        case "config":
          if (rest.some((a) => a !== null && /^(alias\.|core\.(sshcommand|pager|editor|fsmonitor|hookspath)|credential\.helper|filter\.)/i.test(a))) return at("high", "dynamic.git-config", "configures a command git will run");
          return at("medium", "command.writes", "changes git configuration");
        case "reset":
          if (rest.includes("--hard") || rest.includes("--merge") || rest.includes("--keep")) return at("high", "command.deletes", "git reset --hard discards uncommitted work");
          return at("medium", "command.writes", "moves HEAD or unstages");
        case "checkout":
        case "restore":
          if (rest.includes("--") || rest.includes(".") || rest.some((a) => a === "-f" || a === "--force")) return at("high", "command.deletes", `git ${sub} can discard uncommitted changes`);
          return at("medium", "command.writes", `git ${sub} changes the working tree`);
        case "push":
          if (rest.some((a) => a === "-f" || a === "--force" || a === "--mirror" || a === "--delete" || a === "-d" || (a ?? "").startsWith("+") || (a ?? "").startsWith("--force"))) return [...at("high", "network.upload", "force-pushes or deletes remote history"), { kind: "network" }];
          return [...at("high", "network.upload", "publishes commits to a remote"), { kind: "network" }];
        case "send-email":
        case "request-pull":
          return [...at("high", "network.upload", `git ${sub} sends data out`), { kind: "network" }];
        case "daemon":
        case "instaweb":
          return at("high", "network.server", `git ${sub} serves the repository over the network`);
        case "bisect":
          if (rest[0] === "run") return at("high", "dynamic.project-code", "git bisect run executes a script repeatedly");
          return at("low", "command.writes", "bisects history");
        case "rebase":
          if (rest.some((a) => a === "-x" || a === "--exec" || (a ?? "").startsWith("--exec="))) return at("high", "dynamic.shell-code", "git rebase --exec runs shell commands");
          return at("medium", "command.writes", "rewrites history");
        case "submodule":
          if (rest[0] === "foreach") return at("high", "dynamic.shell-code", "git submodule foreach runs shell commands");
          break;
        default:
          break;
      }
      if (network.has(sub)) return [...at("medium", "command.network", `git ${sub} contacts a remote`), { kind: "network" }];
      if (deletes.has(sub)) return at("high", "command.deletes", `git ${sub} permanently removes data`);
      if (sub === "rm") return at("high", "command.deletes", "git rm deletes files");
      return at("medium", "command.writes", `git ${sub} changes the repository`);
    },
  };
}

function systemctlSpec(): CommandSpec {
  const read = ["status", "show", "cat", "list-units", "list-unit-files", "list-timers", "list-sockets", "list-jobs", "list-dependencies", "list-machines", "is-active", "is-enabled", "is-failed", "is-system-running", "get-default", "help", "show-environment"];
  const power = ["reboot", "poweroff", "halt", "kexec", "emergency", "rescue", "suspend", "hibernate", "hybrid-sleep", "soft-reboot"];
  return {
    category: "system",
    classify(args) {
      const sub = subcommand(args, ["-H", "--host", "-M", "--machine", "-t", "--type", "-p", "--property", "-s", "--signal", "-n", "--lines", "-o", "--output", "--root"]);
      if (!sub) return [readOnly("lists units")];
      if (sub.name === null) return [finding("high", "command.dynamic-subcommand", "the subcommand is only known at run time", sub.index)];
      if (read.includes(sub.name) || args.includes("--version")) return [readOnly(`systemctl ${sub.name} only queries`)];
      if (power.includes(sub.name)) return [finding("critical", "command.system-power", `systemctl ${sub.name} takes the host down`, sub.index)];
      return [finding("high", "command.service-control", `systemctl ${sub.name} changes services`, sub.index)];
    },
  };
}

function serviceSpec(): CommandSpec {
  return {
    category: "system",
    classify(args) {
      if (args.length === 0 || args.includes("--status-all") || args[1] === "status") return [readOnly("queries services")];
      return [finding("high", "command.service-control", `service ${args[1] ?? ""} changes a service`)];
    },
  };
}

function killSpec(name: string): CommandSpec {
  return {
    category: "process",
    classify(args) {
      if (args.includes("-l") || args.includes("-L") || (name === "kill" && args.length === 0)) return [readOnly("lists signals")];
      if (name === "killall5") return [finding("critical", "command.system-power", "killall5 signals every process on the host")];
      const ops = operandsOf(args, { withArg: ["-s", "-n", "-u", "-g", "-t", "-U", "-G", "-P", "--signal"] });
      for (const i of ops) {
        const a = args[i];
        if (name === "kill" && (a === "-1" || a === "1")) return [finding("critical", "command.system-power", a === "1" ? "signals init (PID 1)" : "signals every process the user can reach", i)];
      }
      if (name === "kill" && args.some((a) => a === "-1")) return [finding("critical", "command.system-power", "signals every process the user can reach")];
      return [finding("medium", "command.process-control", `${name} signals processes`)];
    },
  };
}

function crontabSpec(): CommandSpec {
  return {
    category: "system",
    classify(args) {
      if (args.includes("-l")) return [readOnly("lists the crontab")];
      if (args.includes("-r")) return [finding("high", "command.deletes", "crontab -r removes all scheduled jobs")];
      return [finding("high", "command.persistence", "installs scheduled jobs (persistence)")];
    },
  };
}

function containerSpec(name: string): CommandSpec {
  const read = ["ps", "images", "logs", "inspect", "version", "info", "stats", "top", "history", "search", "port", "diff", "events", "ls", "list", "get", "describe", "explain", "api-resources", "api-versions", "cluster-info", "status", "show", "df", "auth"];
  return {
    category: "system",
    classify(args) {
      const sub = subcommand(args, ["-H", "--host", "--context", "-n", "--namespace", "--kubeconfig", "-c", "--config", "--log-level", "-s", "--server", "--cluster", "--user"]);
      if (!sub) return [readOnly(`${name} prints usage`)];
      if (sub.name === null) return [finding("high", "command.dynamic-subcommand", "the subcommand is only known at run time", sub.index)];
      if (read.includes(sub.name)) {
        const next = args[sub.index + 1];
        // `kubectl auth reconcile` writes RBAC objects; only its questions read.
        if (sub.name === "auth" && !["can-i", "whoami"].includes(next ?? "")) return [finding("high", "command.container", `${name} auth ${next ?? ""} changes cluster state`, sub.index)];
        if ((sub.name === "image" || sub.name === "container" || sub.name === "volume" || sub.name === "network" || sub.name === "system" || sub.name === "config") && next !== undefined && !["ls", "list", "inspect", "df", "view", "get-contexts", "current-context"].includes(next ?? "")) {
          return [finding("high", "command.container", `${name} ${sub.name} ${next} changes containers or cluster state`, sub.index)];
        }
        return [readOnly(`${name} ${sub.name} only queries`)];
      }
      if (["image", "container", "volume", "network", "system", "config", "compose"].includes(sub.name)) {
        const next = args[sub.index + 1];
        if (next !== undefined && next !== null && ["ls", "list", "inspect", "df", "view", "get-contexts", "current-context", "ps", "logs", "config"].includes(next)) return [readOnly(`${name} ${sub.name} ${next} only queries`)];
      }
      const privileged = args.some((a) => a === "--privileged" || a === "--pid=host" || a === "--net=host" || a === "--network=host" || (a ?? "").startsWith("-v=/:") || a === "/:/host" || /^\/:/.test(a ?? ""));
      if (privileged) return [finding("critical", "command.container", `${name} ${sub.name} with host-level access is root on the host`, sub.index)];
      return [finding("high", "command.container", `${name} ${sub.name} changes containers or cluster state (root-equivalent)`, sub.index)];
    },
  };
}

/**
 * Options that point a container or cluster client somewhere else: another
 * daemon (`-H ssh://…` runs `docker system dial-stdio` there over ssh), a
 * context that may be remote, or a configuration file whose credential
 * helpers and exec plugins the client runs.
 */
function containerEndpointFindings(args: readonly ArgValue[]): Effect[] {
  const out: Effect[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === null || a === undefined || !a.startsWith("-")) break;
    const eq = a.indexOf("=");
    const opt = eq === -1 ? a : a.slice(0, eq);
    const value = eq === -1 ? (args[i + 1] ?? null) : a.slice(eq + 1);
    if (opt === "-H" || opt === "--host") {
      if (value === null || /^ssh:/i.test(value)) out.push({ kind: "network" }, finding("high", "network.remote-exec", `talks to a daemon through ssh on another host (${value ?? "dynamic"})`, i));
      else if (!/^(unix|npipe):\/\//i.test(value)) out.push({ kind: "network" }, finding("medium", "command.network", `talks to a daemon on another host (${value})`, i));
    } else if (opt === "--context" || opt === "-c") out.push(finding("medium", "command.network", `uses the context ${value ?? "(dynamic)"}, which may be a remote daemon`, i));
    else if (opt === "--kubeconfig" || opt === "--config") out.push(finding("medium", "dynamic.script-file", `reads ${value ?? "a configuration only known at run time"}, whose credential helpers or exec plugins the client runs`, i));
    if (eq === -1 && ["-H", "--host", "--context", "-c", "--kubeconfig", "--config", "-n", "--namespace", "--log-level", "-s", "--server", "--cluster", "--user"].includes(opt)) i++;
  }
  return out;
}

function systemToggle(name: string, readWhen: (args: readonly ArgValue[]) => boolean, message: string): CommandSpec {
  return {
    category: "system",
    classify(args) {
      if (readWhen(args)) return [readOnly(`${name} only queries`)];
      return [finding("high", "command.system", message)];
    },
  };
}

const FIREWALL_READ = (args: readonly ArgValue[]): boolean =>
  args.length === 0 || args.some((a) => a !== null && (/^-[a-zA-Z]*[LS]/.test(a) || a === "--list" || a === "--list-rules" || a === "list" || a === "status" || a === "--state" || a === "--list-all" || a === "show" || a === "-V" || a === "--version"));

function ipSpec(): CommandSpec {
  return {
    category: "system",
    classify(args) {
      const words = args.filter((a) => a === null || !a.startsWith("-"));
      const verb = words[1];
      if (words.length <= 1 || verb === undefined || ["show", "list", "ls", "lst", "get", "sh", "s", "l"].includes(verb ?? "")) return [readOnly("shows network configuration")];
      if (verb === null) return [finding("high", "command.dynamic-subcommand", "the ip verb is only known at run time")];
      return [finding("high", "command.system", `ip ${words[0]} ${verb} changes network configuration`)];
    },
  };
}

function powerSpec(name: string): CommandSpec {
  return {
    category: "destructive",
    classify(args) {
      if (name === "shutdown" && args.includes("-c")) return [finding("medium", "command.system", "cancels a pending shutdown")];
      if ((name === "init" || name === "telinit") && !args.some((a) => a === "0" || a === "6" || a === "1" || a === "s" || a === "S")) return [finding("high", "command.system", `${name} changes the runlevel`)];
      if (args.includes("--help") || args.includes("--version")) return [readOnly("prints help")];
      return [finding("critical", "command.system-power", `${name} takes the host down`)];
    },
  };
}

function diskSpec(name: string): CommandSpec {
  return {
    category: "destructive",
    classify(args) {
      if (args.some((a) => a === "-l" || a === "--list" || a === "-s" || a === "print" || a === "--version" || a === "-h" || a === "--help") && ["fdisk", "sfdisk", "parted", "gdisk", "sgdisk", "cfdisk"].includes(name)) return [readOnly(`${name} lists partitions`)];
      return [finding("critical", "command.destroys-system", `${name} rewrites disks or filesystems`)];
    },
  };
}

function trapSpec(): CommandSpec {
  return {
    category: "dynamic",
    classify(args) {
      if (args.length === 0 || args[0] === "-l" || args[0] === "-p") return [readOnly("lists traps")];
      if (args[0] === "-" || args[0] === "") return [readOnly("resets traps")];
      if (args.length === 1) return [readOnly("resets a trap")];
      return [{ kind: "shell-code", arg: args[0] === "--" ? 1 : 0, rule: "dynamic.trap", floor: "medium", what: "a trap handler" }];
    },
  };
}

function evalSpec(): CommandSpec {
  return {
    category: "dynamic",
    classify(args) {
      if (args.length === 0) return [readOnly("eval without arguments does nothing")];
      return [{ kind: "shell-code", arg: 0, join: true, rule: "dynamic.eval", floor: "medium", what: "eval" }];
    },
  };
}

function sourceSpec(): CommandSpec {
  return {
    category: "dynamic",
    classify(args) {
      if (args.length === 0) return [finding("high", "parse.error", "source without a file")];
      return [{ kind: "script-file", arg: 0, rule: "dynamic.source" }];
    },
  };
}

function aliasSpec(): CommandSpec {
  return {
    category: "dynamic",
    classify(args) {
      const out: Effect[] = [];
      args.forEach((a, i) => {
        if (a === null) out.push(finding("high", "alias.definition", "defines an alias whose text is only known at run time", i));
        else if (/^[^=\s]+=/.test(a)) out.push({ kind: "alias", arg: i });
      });
      return out.length ? out : [readOnly("lists aliases")];
    },
  };
}

function atSpec(): CommandSpec {
  return {
    category: "system",
    classify(args) {
      if (args.includes("-l") || args.includes("-c")) return [readOnly("lists scheduled jobs")];
      if (args.includes("-r") || args.includes("-d")) return [finding("medium", "command.persistence", "removes a scheduled job")];
      return [finding("high", "command.persistence", "schedules shell code to run later"), { kind: "stdin-code", shell: true }];
    },
  };
}

function sysctlSpec(): CommandSpec {
  return {
    category: "system",
    classify(args) {
      if (args.some((a) => a === "-w" || a === "-p" || a === "--write" || a === "--load" || a === "--system" || a === null || (a ?? "").includes("="))) return [finding("high", "command.system", "changes kernel parameters")];
      return [readOnly("reads kernel parameters")];
    },
  };
}

function unknownWithPrefixSpec(category: CommandCategory, level: RiskLevel, rule: string, message: string, readWhen: (args: readonly ArgValue[]) => boolean): CommandSpec {
  return {
    category,
    classify(args) {
      if (readWhen(args)) return [readOnly(message.replace(/^.*?:\s*/, "") + " (query)")];
      return [finding(level, rule, message)];
    },
  };
}

// ---------------------------------------------------------------------------
// The table

const TABLE = new Map<string, CommandSpec>();

function add(names: string | readonly string[], spec: CommandSpec): void {
  for (const n of typeof names === "string" ? names.split(/\s+/).filter(Boolean) : names) TABLE.set(n, spec);
}

/** Searchers that walk the directories they are given (rg, ag, ack always; grep with -r). */
function readsRecursively(name: string, args: readonly ArgValue[]): boolean {
  if (["rg", "ag", "ack"].includes(name)) return true;
  if (!["grep", "egrep", "fgrep", "zgrep"].includes(name)) return false;
  return args.some((a) => a !== null && (/^-[a-zA-Z]*[rR]/.test(a) || /^--(recursive|dereference-recursive|directories=recurse)$/.test(a) || a === "recurse"));
}

/**
 * Programs that print names and metadata, never what a file holds: naming a
 * credential file to them discloses nothing, so their operands are not
 * credential reads (`ls *.json`, `du -sh *`). du's `--files0-from=F` is the
 * exception: du echoes each "name" it cannot open, which prints F's contents.
 */
const NAME_READERS = new Set(["ls", "dir", "vdir", "ll", "du", "stat", "readlink", "realpath", "basename", "dirname"]);

function readsOnlyNames(name: string, args: readonly ArgValue[]): boolean {
  if (!NAME_READERS.has(name)) return false;
  // Every unique prefix of --files0-from starts with --f (du has no other --f… option).
  return !(name === "du" && args.some((a) => a === null || a.startsWith("--f")));
}

/**
 * A read-only program is read-only only with options and operands its model
 * (programs.ts) knows to only read; a program without a model knows none, so
 * any option raises it.
 */
function readModelSpec(n: string): CommandSpec {
  return {
    category: "read-only",
    classify(args, _name, where) {
      const found: Effect[] = readModelFindings(n, args) ?? scanOptions(n, args, {}).findings;
      return [...(found.length ? found : [readOnly(`${n} only reads`)]), ...(readsOnlyNames(n, args) ? [] : secretReadFindings(args, readsRecursively(n, args), where))];
    },
  };
}
for (const n of READ_ONLY) TABLE.set(n, readModelSpec(n));
add("cat", catSpec());
add("echo", echoSpec("echo"));
add("printf", echoSpec("printf"));
add("sort", sortSpec());
add("base64 base32 basenc", decoderSpec(["-d", "--decode", "-D"]));
add("xxd", {
  category: "read-only",
  classify(args, name, where) {
    const base = decoderSpec(["-r", "-revert"]).classify(args, name, where);
    const extra: Effect[] = readModelFindings("xxd", args) ?? [];
    return extra.length ? [...extra, ...base.filter((e) => e.kind !== "finding" || e.level !== "read_only")] : base;
  },
});
/** dc's `!` runs the rest of the line as a shell command; a program file or stdin may hold one. */
add("dc", {
  category: "dynamic",
  classify(args) {
    const out: Effect[] = [];
    let program = false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i] ?? null;
      if (a === "-e" || a === "--expression" || (a ?? "").startsWith("--expression=") || /^-e./.test(a ?? "")) {
        program = true;
        const inline = a === "-e" || a === "--expression" ? null : (a ?? "").replace(/^--expression=|^-e/, "");
        const index = inline === null ? ++i : i;
        const text = inline ?? args[index] ?? null;
        if (text === null) out.push(finding("high", "dynamic.interpreter-code", "the dc program is only known at run time; `!` in dc runs shell commands", index));
        else if (text.includes("!")) out.push(finding("high", "dynamic.interpreter-code", "the dc program contains `!`, which runs a shell command", index));
      } else if (a === null || a === "-f" || a === "--file" || a.startsWith("--file=") || !a.startsWith("-") || a === "-") {
        program = true;
        if (a === "-f" || a === "--file") i++;
        out.push(finding("medium", "dynamic.script-file", "dc runs a program file, which is not analysed (`!` in dc runs shell commands)", i));
      } else if (a !== "-V" && a !== "--version" && a !== "-h" && a !== "--help") {
        out.push(finding("medium", "option.unknown", `dc ${a}: an option the catalogue does not know for dc`, i));
      }
    }
    if (!program && out.length === 0 && args.length === 0) out.push({ kind: "stdin-code", shell: false });
    if (out.length === 0) out.push(readOnly("prints dc's version"));
    return out;
  },
});
add("uudecode", {
  category: "writes",
  classify(args, name, where) {
    const base = decoderSpec([], true).classify(args, name, where);
    // uudecode writes the file named inside its input unless told to print it.
    const o = readOptions(args, { flags: "chv", values: "o", longs: ["output-file=", "help", "version"], abbreviate: true });
    const toStdout = optionsNamed(o, "-o", "--output-file").some((x) => x.value === "/dev/stdout" || x.value === "-");
    if (toStdout && o.unknown.length === 0 && o.dynamic.length === 0) return base;
    return [...base.filter((e) => !(e.kind === "finding" && e.level === "read_only")), finding("low", "command.writes", "uudecode writes the file named inside its input"), finding("medium", "path.write-dynamic", "uudecode writes a path only known at run time")];
  },
});
add("openssl", {
  category: "read-only",
  classify(args, _name, where) {
    const out: Effect[] = [];
    const sub = args[0];
    // `openssl version [-a -v -b -o -f -p -d -e -m -r -c]` prints build information only.
    if (sub === "version" && args.slice(1).every((a) => a !== null && /^-[avbofpdemrc]$/.test(a))) return [readOnly("prints openssl's version")];
    if (sub === "s_client" || sub === "s_server") return [{ kind: "network" }, finding("high", "network.raw-socket", `openssl ${sub} opens a TLS connection or listener`)];
    if (args.includes("-d") && (sub === "enc" || sub === "base64" || (sub ?? "").startsWith("aes") || sub === "cms" || sub === "smime")) out.push({ kind: "decoder" });
    const outFile = args.indexOf("-out");
    if (outFile >= 0) out.push(finding("low", "command.writes", "openssl writes a file"), ...writeTargetFindings(args, [outFile + 1]));
    return [...out, finding("low", "command.crypto", "runs an openssl operation"), ...secretReadFindings(args, false, where)];
  },
});
add("gpg gpg2", simple("read-only", "medium", "command.crypto", "runs gpg (can decrypt with the host's keys)"));
add("find", findSpec());
add("xargs", xargsSpec());
add("parallel", parallelSpec());
add("sed gsed", sedSpec());
add("awk gawk mawk nawk", awkSpec());
add("rm", rmSpec());
add("unlink", touchLikeSpec("deletes a file", "high", "command.deletes"));
add("rmdir", touchLikeSpec("removes empty directories", "medium", "command.deletes"));
add("shred srm wipe", {
  category: "deletes",
  classify(args) {
    const ops = operandsOf(args, { withArg: ["-n", "--iterations", "-s", "--size", "--random-source"] });
    return [finding("high", "command.deletes", "overwrites files beyond recovery"), ...deleteTargetFindings(args, ops, false)];
  },
});
add("truncate", touchLikeSpec("truncates files (their content is lost)", "high", "command.deletes", ["-s", "--size", "-r", "--reference"]));
add("cp", copySpec("copies", "medium"));
add("mv", copySpec("moves", "medium"));
add("install", copySpec("installs", "medium"));
add("ln", copySpec("links", "medium"));
add("mkdir", touchLikeSpec("creates directories", "low", "command.writes", ["-m", "--mode"]));
add("touch", touchLikeSpec("creates or touches files", "low", "command.writes", ["-d", "--date", "-r", "--reference", "-t"]));
add("mktemp", simple("writes", "low", "command.writes", "creates a temporary file"));
add("mkfifo", touchLikeSpec("creates a named pipe", "low", "command.writes", ["-m", "--mode"]));
add("mknod", simple("system", "high", "command.system", "creates a device node"));
add("split csplit", simple("writes", "low", "command.writes", "splits a file into new files"));
add("patch", simple("writes", "medium", "command.writes", "patches files"));
add("sponge", touchLikeSpec("soaks input and writes a file", "medium"));
add("tee", teeSpec());
add("dd", ddSpec());
add("chmod", permissionSpec("chmod"));
add("chown chgrp", permissionSpec("chown"));
add("setfacl", simple("writes", "medium", "command.permissions", "changes file ACLs"));
add("chattr", simple("system", "high", "command.system", "changes file attributes (immutable, append-only)"));
add("tar bsdtar", tarSpec());
add("unzip", {
  category: "writes",
  classify(args) {
    if (args.some((a) => a === "-l" || a === "-t" || a === "-v" || a === "-Z" || a === "-p" || a === "-z")) return [readOnly("lists or tests an archive")];
    const p = readOptions(args, looseTable({ withArg: ["-d", "-x"] }));
    const d = optionValue(p, "-d");
    return [finding("medium", "command.writes", "extracts an archive"), ...(d?.index !== undefined ? writeTargetFindings(args, [d.index], "extracts into") : [])];
  },
});
add("zip 7z 7za rar unrar cpio ar", simple("writes", "medium", "command.writes", "creates or extracts an archive"));
for (const n of ["gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "compress", "uncompress", "lzma", "unlzma", "zcat", "bzcat", "xzcat", "zstdcat", "lzcat"]) add(n, compressorSpec(n));
add("vi vim nvim view nano pico emacs ed ex joe micro jed kak helix hx mcedit", simple("writes", "medium", "command.writes", "opens an editor (edits files; most can also run shell commands)"));
add("sqlite3 psql mysql mariadb mongo mongosh redis-cli influx clickhouse-client cqlsh", simple("writes", "medium", "command.database", "runs database statements (may change data)"));

// Network
add("curl", curlSpec());
add("wget wget2", wgetSpec());
add("http https httpie xh", {
  category: "network",
  classify(args) {
    const method = args.find((a) => a !== null && /^(GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS)$/.test(a));
    const uploads = (method && !["GET", "HEAD", "OPTIONS"].includes(method)) || args.some((a) => a !== null && /^[^=:/]+(:?=|:=@|=@)/.test(a));
    return [{ kind: "network" }, finding("medium", "command.network", "makes a network request"), ...(uploads ? [finding("high", "network.upload", "sends data to a remote server")] : [])];
  },
});
add("aria2c axel lftp ftp tftp", { category: "network", classify: () => [{ kind: "network" }, finding("medium", "command.network", "transfers files over the network"), finding("medium", "network.download", "saves downloaded content to a file")] });
add("ssh", sshSpec());
add("scp sftp ssh-copy-id", { category: "network", classify: (args, _name, where) => [{ kind: "network" }, finding("high", "network.transfer", "copies files to or from another machine"), ...secretReadFindings(args, args.some((a) => /^-[a-zA-Z]*r/.test(a ?? "")), where)] });
add("rsync", rsyncSpec());
add("nc ncat netcat socat telnet", netcatSpec());
add("ping ping6 dig nslookup host whois traceroute traceroute6 tracepath mtr arping drill", { category: "network", classify: () => [{ kind: "network" }, finding("low", "command.network-query", "sends network probes or DNS queries")] });
add("nmap masscan zmap nikto hping3", { category: "network", classify: () => [{ kind: "network" }, finding("high", "network.scan", "scans other machines")] });
add("tcpdump tshark wireshark dumpcap ngrep", simple("privilege", "high", "command.privilege", "captures network traffic"));

// Interpreters and shells
for (const n of SHELLS) add(n, shellSpec());
for (const key of Object.keys(INTERPRETERS)) add(key, interpreterSpec(key));
for (const alias of Object.keys(INTERPRETER_ALIASES)) add(alias, interpreterSpec(INTERPRETER_ALIASES[alias]!));
add("eval", evalSpec());
add("source .", sourceSpec());
add("trap", trapSpec());
add("alias", aliasSpec());
add("enable", { category: "dynamic", classify: (args) => (args.includes("-f") ? [finding("high", "dynamic.script-file", "enable -f loads a shared object into the shell")] : [finding("low", "command.shell-state", "changes which builtins are enabled")]) });
add("declare typeset export local readonly", {
  category: "read-only",
  classify: (args) => {
    const injected = subscriptInjection(args);
    return injected.length ? injected : [readOnly("changes shell variables only")];
  },
});
add("umask", simple("read-only", "low", "command.shell-state", "changes the default permission mask"));
add("script", {
  category: "dynamic",
  classify(args) {
    const p = readOptions(args, looseTable({ withArg: ["-c", "--command", "-t", "--timing", "-I", "-O", "-B", "-T", "-E", "-m"] }));
    const c = optionValue(p, "-c", "--command");
    const out: Effect[] = [finding("low", "command.writes", "script records a typescript file")];
    if (c?.index !== undefined) out.push({ kind: "shell-code", arg: c.index, rule: "dynamic.shell-code", floor: "medium", what: "script -c" });
    else out.push({ kind: "stdin-code", shell: true });
    return out;
  },
});
add("tmux screen", {
  category: "dynamic",
  classify(args) {
    if (args.some((a) => a === "ls" || a === "list-sessions" || a === "-ls" || a === "-list" || a === "list-windows" || a === "has-session" || a === "-V")) return [readOnly("lists sessions")];
    return [finding("high", "dynamic.background-session", "starts or drives a terminal session that outlives the action")];
  },
});
add("watch", {
  category: "dynamic",
  classify(args) {
    const p = readOptions(args, looseTable({ withArg: ["-n", "--interval", "-d", "-q", "--equexit", "--differences"], stopAtOperand: true }));
    if (p.end >= args.length) return [readOnly("watch without a command")];
    if (has(p, "-x", "--exec")) return [{ kind: "exec", from: p.end, via: "watch" }];
    return [{ kind: "shell-code", arg: p.end, join: true, rule: "dynamic.shell-code", floor: "medium", what: "watch (runs its arguments with sh -c)" }];
  },
});
add("at batch", atSpec());
add(
  "make gmake bmake ninja meson cmake mvn gradle ant sbt bazel bazelisk buck just task rake pytest py.test tox nox jest vitest mocha phpunit ctest scons invoke fab",
  unknownWithPrefixSpec("dynamic", "high", "dynamic.project-code", "runs project build or test code, which can do anything", (args) => args.length === 1 && (args[0] === "--version" || args[0] === "--help")),
);
add("npx pnpx bunx uvx pipx", {
  category: "dynamic",
  classify(args, name) {
    if (name === "pipx" && args[0] !== "run") return packageManager({ read: ["list", "environment", "--version"], install: ["install", "uninstall", "upgrade", "inject", "reinstall", "upgrade-all", "uninstall-all", "ensurepath"] })(args, name);
    if (onlyVersionOrHelp(args)) return [readOnly("prints version")];
    return [finding("high", "dynamic.project-code", `${name} downloads and runs a package`)];
  },
});
add("npm", { category: "package-manager", classify: packageManager(NPM) });
add("pnpm yarn bun", { category: "package-manager", classify: packageManager(NODE_PACKAGES) });
add("pip pip2 pip3", { category: "package-manager", classify: packageManager(PIP) });
add("apt apt-get aptitude", { category: "package-manager", classify: packageManager({ read: ["list", "search", "show", "showsrc", "policy", "depends", "rdepends", "madison", "changelog", "help", "moo", "show-versions", "why", "why-not", "showhold"], install: ["install", "remove", "purge", "autoremove", "upgrade", "dist-upgrade", "full-upgrade", "update", "build-dep", "source", "clean", "autoclean", "reinstall", "download", "satisfy", "edit-sources", "markauto", "hold", "unhold", "check"] }) });
add("apt-cache apt-file apt-mark-showmanual dpkg-query rpmquery", {
  category: "read-only",
  classify(args, name) {
    const dynamic = args.findIndex((a) => a === null);
    if (dynamic !== -1) return [finding("medium", "option.dynamic", `${name}: an argument only known at run time may be a subcommand that writes`, dynamic)];
    // apt-file update / apt-cache gencaches rebuild caches.
    if (args.some((a) => a === "update" || a === "gencaches" || a === "purge")) return [finding("medium", "command.writes", `${name} rebuilds or removes its cache`)];
    return [readOnly("queries the package database")];
  },
});
add("dpkg", unknownWithPrefixSpec("package-manager", "high", "command.package-manager", "dpkg changes installed packages", (args) => args.some((a) => a !== null && /^(-l|-L|-s|-S|-p|-c|-I|--list|--listfiles|--status|--search|--print-avail|--contents|--info|--get-selections|--print-architecture|--version|-W|--show)$/.test(a))));
add("rpm", { category: "package-manager", classify: (args) => rpmFindings(args) });
add("dnf yum microdnf tdnf", { category: "package-manager", classify: packageManager({ read: ["list", "info", "search", "provides", "whatprovides", "repolist", "repoinfo", "check-update", "history", "deplist", "repoquery", "help", "updateinfo", "module"], install: ["install", "remove", "erase", "update", "upgrade", "downgrade", "reinstall", "autoremove", "distro-sync", "groupinstall", "group", "swap", "makecache", "clean", "config-manager", "localinstall"] }) });
add("zypper", { category: "package-manager", classify: packageManager({ read: ["search", "se", "info", "if", "list-updates", "lu", "repos", "lr", "packages", "pa", "patches", "products", "pd", "patterns", "pt", "what-provides", "wp"], install: ["install", "in", "remove", "rm", "update", "up", "dist-upgrade", "dup", "patch", "refresh", "ref", "addrepo", "ar", "removerepo", "rr"] }) });
add("pacman yay paru", unknownWithPrefixSpec("package-manager", "high", "command.package-manager", "pacman changes installed packages", (args) => args.length > 0 && args.every((a) => a !== null && !/^-[a-zA-Z]*[SRU]/.test(a) || /^-S[si]+$/.test(a ?? "") || /^-Q/.test(a ?? "")) && args.some((a) => /^-(Q|Ss|Si|F|V|h)/.test(a ?? "") || a === "--version")));
add("apk", { category: "package-manager", classify: packageManager({ read: ["info", "search", "list", "policy", "stats", "dot", "audit", "version", "verify"], install: ["add", "del", "upgrade", "update", "fix", "cache", "fetch"] }) });
add("brew", { category: "package-manager", classify: packageManager({ read: ["list", "ls", "info", "search", "outdated", "deps", "uses", "config", "doctor", "leaves", "desc", "home", "--prefix", "--cellar", "--repository", "commands", "log", "cat", "formulae", "casks", "shellenv"], install: ["install", "uninstall", "remove", "rm", "upgrade", "update", "reinstall", "tap", "untap", "link", "unlink", "pin", "unpin", "cleanup", "autoremove", "bundle", "services"] }) });
add("snap flatpak", { category: "package-manager", classify: packageManager({ read: ["list", "info", "find", "version", "services", "changes", "search", "remotes", "remote-ls", "connections", "interfaces", "ps", "history"], install: ["install", "remove", "uninstall", "refresh", "update", "revert", "enable", "disable", "connect", "disconnect", "run", "set", "start", "stop", "restart", "remote-add", "remote-delete"] }) });
add("gem", { category: "package-manager", classify: packageManager({ read: ["list", "search", "info", "query", "contents", "environment", "which", "specification", "help", "dependency", "outdated"], install: ["install", "uninstall", "update", "build", "push", "yank", "cleanup", "pristine", "sources", "owner"] }) });
add("cargo", { category: "package-manager", classify: packageManager(CARGO) });
add("go", { category: "package-manager", classify: (args) => goFindings(args) });
add("composer conda mamba micromamba poetry uv pipenv pdm hatch rye nix-env nix guix opam cabal stack mix dotnet nuget deno", { category: "package-manager", classify: packageManager(PROJECT_TOOLS) });

// Wrappers
for (const n of Object.keys(WRAPPERS)) add(n, wrapperSpec(n));

// Privilege and accounts
add("passwd chpasswd chage useradd userdel usermod adduser deluser groupadd groupdel groupmod gpasswd newusers vipw vigr visudo pwck grpck addgroup delgroup", simple("privilege", "high", "command.privilege", "changes user accounts, passwords or sudo rules"));
add("setcap capsh setpriv newgrp sg", simple("privilege", "high", "command.privilege", "changes process or file capabilities"));
add("setenforce aa-disable aa-complain apparmor_parser semanage setsebool", simple("privilege", "high", "command.privilege", "weakens mandatory access control"));

// System administration
add("systemctl", systemctlSpec());
add("service", serviceSpec());
add("update-rc.d chkconfig rc-update rc-service sv runsv initctl", simple("system", "high", "command.service-control", "changes services or their start-up"));
/** journalctl options that change the journal (getopt_long: an unambiguous prefix counts). */
const JOURNALCTL_MAINTENANCE = ["vacuum-size", "vacuum-time", "vacuum-files", "rotate", "flush", "sync", "relinquish-var", "smart-relinquish-var", "setup-keys", "update-catalog", "cursor-file"];
add("journalctl", unknownWithPrefixSpec("system", "medium", "command.writes", "journalctl maintenance removes logs", (args) => !args.some((a) => a === null || (a.startsWith("--") && a.length > 3 && JOURNALCTL_MAINTENANCE.some((m) => m.startsWith(a.slice(2).split("=")[0]!))))));
add("crontab", crontabSpec());
add("mount umount swapon swapoff losetup modprobe insmod rmmod depmod kexec ldconfig update-alternatives update-grub grub-mkconfig tune2fs e2fsck fsck xfs_repair mdadm lvcreate lvextend lvresize pvcreate vgcreate quotaon quotaoff", {
  category: "system",
  classify: (args, name) => (["mount", "swapon", "losetup", "findmnt"].includes(name) && args.length === 0) || args.includes("--version") || (name === "swapon" && args.includes("--show")) ? [readOnly(`${name} lists`)] : [finding("high", "command.system", `${name} changes the running system`)],
});
add("sysctl", sysctlSpec());
add("iptables ip6tables iptables-legacy nft ufw firewall-cmd ebtables arptables iptables-save iptables-restore", systemToggle("firewall", FIREWALL_READ, "changes firewall rules"));
add("ip", ipSpec());
add("ifconfig route iwconfig brctl ethtool nmcli tc", systemToggle("network config", (args) => args.length === 0 || args.every((a) => a !== null && (a.startsWith("-") || a === "show" || a === "list" || a === "status" || a === "-n"))  || (args.length === 1 && !(args[0] ?? "").includes("=")), "changes network configuration"));
// `-H host` / `-M machine` run the same verb on another host over ssh or in a container.
add("hostnamectl timedatectl localectl", systemToggle("host settings", (args) => !args.some((a) => a === null || /^(-[a-zA-Z]*[HM]|--host|--machine)/.test(a)) && (args.length === 0 || args.every((a) => a !== null && ((a.startsWith("-") && a !== "-F" && a !== "--file") || a === "status" || a.startsWith("list") || a === "show"))), "changes host identity, time or locale"));
add("date hostname dmesg", {
  category: "system",
  classify(args, name) {
    const found = hostSettingFindings(name, args) ?? [];
    return found.length ? found : [readOnly(`${name} only prints`)];
  },
});
add("hwclock", systemToggle("hwclock", (args) => args.length === 0 || args.every((a) => a === "-r" || a === "--show" || a === "--get" || a === "--verbose"), "sets the hardware clock"));
add("kill pkill killall skill slay killall5 xkill", killSpec("kill"));
for (const n of ["pkill", "killall", "skill", "slay", "killall5", "xkill"]) add(n, killSpec(n));
add("renice", simple("process", "medium", "command.process-control", "changes process priority"));
add("docker podman nerdctl kubectl oc helm crictl ctr minikube kind k3s lxc incus virsh vagrant terraform ansible ansible-playbook pulumi", {
  category: "system",
  classify(args, name, where) {
    const effects = containerSpec(name).classify(args, name, where);
    const elsewhere = containerEndpointFindings(args);
    // Pointed elsewhere, even a query is not read-only: it runs or reaches something we cannot see.
    return elsewhere.length ? [...elsewhere, ...effects.filter((e) => !(e.kind === "finding" && e.level === "read_only"))] : effects;
  },
});
add("shutdown reboot halt poweroff init telinit", {
  category: "destructive",
  classify: (args, name, where) => powerSpec(name).classify(args, name, where),
});
add("mkfs mkfs.ext2 mkfs.ext3 mkfs.ext4 mkfs.xfs mkfs.btrfs mkfs.vfat mkfs.fat mkfs.ntfs mke2fs mkswap wipefs blkdiscard fdisk sfdisk gdisk sgdisk cfdisk parted cryptsetup lvremove vgremove pvremove zpool zfs grub-install efibootmgr flashrom badblocks hdparm nvme sg_format", {
  category: "destructive",
  classify: (args, name, where) => diskSpec(name).classify(args, name, where),
});

// Misc with specific handling
add("git", gitSpec());
add("gh", { category: "network", classify: (args) => ghFindings(args) });
add([...COMPILERS, ...RUNTIMES], { category: "dynamic", classify: (args, name) => toolchainFindings(name, args) });
add("fd fdfind", {
  category: "read-only",
  classify(args, name, where) {
    const exec = fdExecIndex(args);
    if (exec === null) return [readOnly(`${name} searches for files`), ...secretReadFindings(args, false, where)];
    if (args[exec] === null) return [finding("medium", "option.dynamic", `${name}: a word only known at run time may be --exec`, exec)];
    return [finding("medium", "dynamic.find-exec", `${name} ${args[exec]} runs a command for every match`, exec), { kind: "exec", from: exec + 1, via: `${name} ${args[exec]}`, argsUnknown: true }];
  },
});
add("ssh-keygen", unknownWithPrefixSpec("writes", "medium", "command.writes", "ssh-keygen writes key files", (args) => args.some((a) => a === "-l" || a === "-F" || a === "-y" || a === "-L" || a === "-Q")));
add("ssh-add ssh-agent", simple("privilege", "medium", "command.credentials", "handles SSH keys in an agent"));
// `jobs -x COMMAND ARGS…` runs COMMAND (jobspecs in it replaced by process group ids).
add("jobs", {
  category: "read-only",
  classify(args) {
    const read = readOptions(args, { flags: "lnprsx", stopAtOperand: true });
    if (read.dynamic.length) return [finding("medium", "option.dynamic", "jobs: an argument only known at run time may be -x, which runs a command", read.dynamic[0])];
    if (read.unknown.length) return [finding("medium", "option.unknown", "jobs: an option the catalogue does not know", read.unknown[0])];
    if (optionsNamed(read, "-x").length === 0) return [readOnly("lists the shell's jobs")];
    if (read.end >= args.length) return [finding("high", "parse.error", "jobs -x without a command")];
    return [{ kind: "exec", from: read.end, via: "jobs -x" }];
  },
});
add("history", { category: "read-only", classify: (args) => (args.some((a) => a === null || (a.startsWith("-") && /[cdwanrsp]/.test(a))) ? [finding("low", "command.shell-state", "changes shell history")] : [readOnly("prints history")]) });

export function lookupCommand(name: string): CommandSpec | undefined {
  const direct = TABLE.get(name);
  if (direct) return direct;
  const key = interpreterKey(name);
  if (key) return interpreterSpec(key);
  if (/^mkfs\./.test(name)) return diskSpec(name);
  return undefined;
}

export function catalogueNames(): string[] {
  return [...TABLE.keys()];
}

export function isShellName(name: string): boolean {
  return SHELLS.has(name);
}

/** Code-running programs: a pipe into one of these executes whatever flows in. */
export function isInterpreterName(name: string): boolean {
  return SHELLS.has(name) || interpreterKey(name) !== null;
}
