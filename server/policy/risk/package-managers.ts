import type { RiskLevel } from "./levels";
import { readOptions, type ArgValue } from "./options";
import type { ProgramFinding } from "./programs";

/**
 * Package managers and language toolchains, by subcommand. A subcommand is
 * read-only when the model names it a query AND, where the same subcommand
 * also writes (`pip config set`, `npm pkg set`, `conda env remove`), the
 * sub-verb that follows is one of its queries. Printing a version or help is
 * read-only only as the sole argument: `-v` elsewhere is usually "verbose"
 * (`go test -v`, `pip install -v`, `apt-get install -V`).
 */
export interface PackageManagerModel {
  read: readonly string[];
  /** Read subcommands that also write: the next word must be one of these queries. */
  readVerbs?: Readonly<Record<string, readonly string[]>>;
  install: readonly string[];
  run?: readonly string[];
  /** With no subcommand the program installs the project's dependencies (yarn, pnpm). */
  bareIsInstall?: boolean;
  /** An unknown subcommand runs a project script (`yarn build`). */
  unknownIsRun?: boolean;
}

function finding(level: RiskLevel, rule: string, message: string, arg?: number): ProgramFinding {
  return arg === undefined ? { kind: "finding", level, rule, message } : { kind: "finding", level, rule, message, arg };
}
const readOnly = (message: string): ProgramFinding => finding("read_only", "command.read-only", message);

const VERSION_OR_HELP = new Set(["--version", "-v", "-V", "--help", "-h", "-version", "-help"]);

/** A lone `--version` / `-v` / `--help`: the only spelling of "print the version" that is not also a flag of some subcommand. */
export function onlyVersionOrHelp(args: readonly ArgValue[]): boolean {
  return args.length === 1 && args[0] !== null && VERSION_OR_HELP.has(args[0]!);
}

/** Words that, after a query subcommand, turn it into a change. */
const WRITE_WORDS = new Set(["set", "unset", "delete", "del", "edit", "add", "remove", "rm", "fix", "purge", "prune", "use", "create", "update", "clean", "--set", "--add", "--append", "--prepend", "--remove", "--remove-key", "--write-default", "--unset", "--edit"]);

const GLOBAL_WITH_ARG = ["-C", "--prefix", "--cwd", "--dir", "-w", "--workspace", "--filter", "--index-url", "-i", "--target"];

export function packageManagerFindings(model: PackageManagerModel, args: readonly ArgValue[], name: string): ProgramFinding[] {
  if (onlyVersionOrHelp(args)) return [readOnly(`${name} prints its version or help`)];
  let at = 0;
  while (at < args.length && args[at] !== null && args[at]!.startsWith("-") && args[at] !== "--") at += GLOBAL_WITH_ARG.includes(args[at]!) ? 2 : 1;
  if (at >= args.length) return model.bareIsInstall ? [finding("high", "command.package-manager", `${name} installs dependencies (their install scripts run)`)] : [readOnly(`${name} prints usage`)];
  const sub = args[at];
  if (sub === null || sub === undefined) return [finding("high", "command.dynamic-subcommand", "the subcommand is only known at run time", at)];
  const rest = args.slice(at + 1);
  if (model.read.includes(sub)) {
    const verbs = model.readVerbs?.[sub];
    if (rest.some((a) => a === null)) return [finding("medium", "option.dynamic", `${name} ${sub}: a word only known at run time may turn the query into a change`, at)];
    const write = rest.findIndex((a) => WRITE_WORDS.has(a!));
    if (write !== -1) return [finding("high", "command.package-manager", `${name} ${sub} ${rest[write]} changes configuration or installed software`, at + 1 + write)];
    if (verbs && !(rest.length > 0 && verbs.includes(rest[0]!))) return [finding("high", "command.package-manager", `${name} ${sub} ${rest[0] ?? ""} is not one of its queries (${verbs.join(", ")})`.trim(), at)];
    return [readOnly(`${name} ${sub} only queries`)];
  }
  if (model.install.includes(sub)) return [finding("high", "command.package-manager", `${name} ${sub} changes installed software (install scripts may run)`, at)];
  if (model.run?.includes(sub) || model.unknownIsRun) return [finding("high", "dynamic.project-code", `${name} ${sub} runs project or package code`, at)];
  return [finding("high", "command.package-manager", `${name} ${sub} is not a known query`, at)];
}

export const PIP: PackageManagerModel = {
  read: ["list", "show", "freeze", "check", "search", "help", "index", "inspect", "debug", "config", "cache", "hash"],
  readVerbs: { config: ["list", "get", "debug"], cache: ["dir", "info", "list"], index: ["versions"] },
  install: ["install", "uninstall", "download", "wheel"],
};

export const NPM: PackageManagerModel = {
  read: ["ls", "list", "ll", "la", "view", "info", "show", "v", "search", "s", "outdated", "audit", "config", "c", "root", "prefix", "bin", "whoami", "why", "explain", "help", "fund", "query", "get", "pkg"],
  readVerbs: { config: ["get", "list", "ls"], c: ["get", "list", "ls"], pkg: ["get"] },
  install: ["install", "i", "ci", "add", "uninstall", "remove", "rm", "un", "r", "update", "up", "upgrade", "link", "ln", "publish", "unpublish", "dedupe", "prune", "rebuild", "version", "deprecate", "dist-tag", "owner", "cache", "set", "login", "logout", "adduser", "token", "install-test", "it", "install-ci-test", "cit", "doctor"],
  run: ["run", "run-script", "rum", "urn", "test", "t", "tst", "start", "stop", "restart", "exec", "x", "create", "init", "innit", "explore", "edit"],
};

export const NODE_PACKAGES: PackageManagerModel = {
  read: ["ls", "list", "ll", "la", "view", "info", "show", "why", "outdated", "audit", "config", "root", "bin", "licenses", "help", "store", "whoami", "search"],
  readVerbs: { config: ["get", "list"], store: ["path", "status"], licenses: ["list", "ls"] },
  install: ["install", "i", "ci", "add", "remove", "rm", "uninstall", "un", "update", "up", "upgrade", "link", "unlink", "publish", "dedupe", "prune", "rebuild", "import", "patch", "pm", "global"],
  run: ["run", "test", "t", "start", "exec", "x", "dlx", "create", "init", "node"],
  bareIsInstall: true,
  unknownIsRun: true,
};

export const CARGO: PackageManagerModel = {
  read: ["version", "search", "tree", "metadata", "locate-project", "pkgid", "verify-project", "help", "read-manifest"],
  install: ["install", "uninstall", "add", "remove", "rm", "update", "publish", "yank", "owner", "login", "vendor", "fetch", "generate-lockfile"],
  run: ["run", "build", "b", "test", "t", "bench", "check", "c", "clippy", "doc", "d", "r", "miri", "nextest", "fix", "fmt", "new", "init"],
};

export const PROJECT_TOOLS: PackageManagerModel = {
  read: ["list", "show", "info", "search", "outdated", "help", "env", "config", "version", "tree", "why", "check", "licenses", "status", "diagnose"],
  readVerbs: { env: ["list", "info", "export"], config: ["get", "list", "show", "--list", "--show", "--get", "--describe", "--show-sources"] },
  install: ["install", "add", "remove", "uninstall", "update", "upgrade", "require", "sync", "lock", "create", "publish", "self-update", "pip", "build", "restore", "i"],
  run: ["run", "exec", "shell", "script", "test", "repl", "eval", "x", "task", "serve", "develop"],
};

/**
 * go's reading subcommands take build flags, and some of those run programs
 * (`-toolexec`, `-exec`, `-vettool`) or write (`go env -w`, `-o`). Each
 * query is modelled by the flags it is known to take harmlessly.
 */
const GO_QUERY_FLAGS: Readonly<Record<string, readonly string[]>> = {
  version: ["m", "v", "json"],
  env: ["json", "changed"],
  list: ["json", "m", "f=", "e", "deps", "test", "find", "u", "versions", "retracted", "reuse=", "tags=", "mod=", "C="],
  vet: ["json", "n", "x", "v", "c=", "tags=", "mod=", "C="],
  doc: ["all", "c", "cmd", "short", "src", "u", "C="],
  help: [],
};
const GO_RUNS = new Set(["toolexec", "exec", "vettool", "overlay"]);
const GO_WRITES = new Set(["w", "u", "o", "pkgdir", "modfile"]);

export function goFindings(args: readonly ArgValue[]): ProgramFinding[] {
  if (onlyVersionOrHelp(args)) return [readOnly("go prints its version or help")];
  const sub = args[0];
  if (sub === undefined) return [readOnly("go prints usage")];
  if (sub === null) return [finding("high", "command.dynamic-subcommand", "the go subcommand is only known at run time", 0)];
  const known = GO_QUERY_FLAGS[sub];
  if (!known) {
    if (["get", "install", "mod", "work", "clean"].includes(sub)) return [finding("high", "command.package-manager", `go ${sub} changes modules or installed programs`, 0)];
    return [finding("high", "dynamic.project-code", `go ${sub} builds or runs project code`, 0)];
  }
  if (sub === "help") return [readOnly("go help prints documentation")];
  const out: ProgramFinding[] = [];
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (a === null || a === undefined) {
      out.push(finding("medium", "option.dynamic", `go ${sub}: a word only known at run time may be a flag that runs a program`, i));
      continue;
    }
    if (a === "--") break;
    if (!a.startsWith("-") || a === "-") continue;
    const body = a.replace(/^--?/, "");
    const flag = body.split("=")[0]!;
    if (GO_RUNS.has(flag)) out.push(finding("high", "dynamic.interpreter-code", `go ${sub} -${flag} runs the named program`, i));
    else if (GO_WRITES.has(flag) && !(sub === "list" && flag === "u")) out.push(finding("medium", "command.writes", `go ${sub} -${flag} writes files or go's configuration`, i));
    else if (known.includes(flag + "=")) {
      if (!body.includes("=")) i++;
    } else if (!known.includes(flag)) out.push(finding("medium", "option.unknown", `go ${sub} ${a}: a flag the catalogue does not know for go ${sub}`, i));
  }
  return out.length ? out : [readOnly(`go ${sub} only queries`)];
}

/** rpm's query and verify modes, and the macro language that can run shell (`%(…)`) or Lua. */
const RPM_TABLE = {
  flags: "qaficlsdpRKVvh",
  values: "EDr",
  longs: ["query", "all", "file", "info", "configfiles", "list", "state", "docfiles", "package", "requires", "provides", "conflicts", "obsoletes", "changelog", "scripts", "triggers", "whatprovides", "whatrequires", "qf=", "queryformat=", "checksig", "verify", "nosignature", "nodigest", "noscripts", "nofiles", "nodeps", "dump", "last", "filesbypkg", "version", "help", "quiet", "verbose", "eval=", "define=", "pipe=", "macros=", "rcfile=", "load=", "dbpath=", "root=", "showrc", "xml", "nomanifest", "nocontexts"],
  abbreviate: true,
};

export function rpmFindings(args: readonly ArgValue[]): ProgramFinding[] {
  if (onlyVersionOrHelp(args)) return [readOnly("rpm prints its version or help")];
  const read = readOptions(args, RPM_TABLE);
  const seen = (...names: string[]): boolean => read.options.some((o) => names.includes(o.name));
  const out: ProgramFinding[] = [];
  for (const i of read.unknown) out.push(finding("high", "command.package-manager", `rpm ${args[i]}: not one of rpm's query options`, i));
  for (const i of read.dynamic) out.push(finding("medium", "option.dynamic", "rpm: a word only known at run time may be an option that installs or runs something", i));
  for (const o of read.options) {
    if (o.name === "--pipe") out.push(finding("high", "dynamic.shell-code", "rpm --pipe hands its output to a shell command", o.index));
    if (o.name === "-E" || o.name === "--eval") {
      // Expanding a plain macro name prints a setting; anything else may be %(shell) or %{lua:…}.
      if (o.value === null || o.value === undefined || !/^%\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(o.value)) out.push(finding("high", "dynamic.interpreter-code", "rpm --eval expands macros, which can run shell commands (%(…)) and Lua", o.valueIndex ?? o.index));
    }
    if (["-D", "--define", "--macros", "--rcfile", "--load"].includes(o.name)) out.push(finding("high", "dynamic.interpreter-code", `rpm ${o.name} loads macro definitions, which can run shell commands when expanded`, o.index));
  }
  const verify = seen("-V", "--verify");
  if (verify && !seen("--noscripts")) out.push(finding("high", "dynamic.project-code", "rpm -V runs the packages' %verifyscript scriptlets (add --noscripts to only compare files)"));
  if (!verify && !seen("-q", "--query", "-K", "--checksig", "-E", "--eval", "--showrc")) out.push(finding("high", "command.package-manager", "rpm changes installed packages"));
  return out.length ? out : [readOnly("rpm queries the package database")];
}
