import type { RiskLevel } from "./levels";

/**
 * The risk of an action's `env` (docs/design.md#risk: a variable outside a
 * short allow-list raises risk). Programs read far more of the environment
 * than their manuals admit — tar reads TAR_OPTIONS, git reads GIT_* and
 * GIT_CONFIG_COUNT/KEY/VALUE (`core.fsmonitor` runs a command), less runs
 * LESSOPEN, man runs MANPAGER, iconv loads modules from GCONV_PATH, the
 * loader honours LD_PRELOAD — so a command that only reads can be made to run
 * anything by its environment. Only variables that purely change how output
 * is presented are allowed, and only with plain values.
 */

export interface EnvFinding {
  level: RiskLevel;
  rule: string;
  name: string;
  message: string;
}

/** Presentational variables, each with the values it may take (anything else is `env.unknown`). */
const PRESENTATIONAL: ReadonlyArray<{ name: RegExp; value: RegExp; what: string }> = [
  // Locale names only (no `/`, so no path to a locale file: CVE-2014-0475).
  { name: /^(LANG|LANGUAGE|LC_[A-Z]+)$/, value: /^[A-Za-z0-9_.@:-]{0,64}$/, what: "the locale (language, formats)" },
  // A zone name or POSIX rule; no `..` so it cannot climb out of the zone database.
  { name: /^TZ$/, value: /^:?(?!.*\.\.)[A-Za-z0-9_+\-,./:<>]{0,64}$/, what: "the time zone" },
  { name: /^(TERM|COLORTERM)$/, value: /^[A-Za-z0-9_.+-]{0,64}$/, what: "the terminal type" },
  { name: /^(COLUMNS|LINES)$/, value: /^[0-9]{1,5}$/, what: "the terminal size" },
  { name: /^(NO_COLOR|FORCE_COLOR|CLICOLOR|CLICOLOR_FORCE)$/, value: /^[A-Za-z0-9]{0,8}$/, what: "colour output" },
];

interface Executor {
  name: RegExp;
  message: string;
}

/** Variables that make programs run, load or configure code: each is `high` with its own reason. */
const EXECUTORS: readonly Executor[] = [
  { name: /^TAR_OPTIONS$/, message: "tar reads extra options from TAR_OPTIONS (--to-command, --checkpoint-action=exec run commands)" },
  { name: /^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+|PARAMETERS|GLOBAL|SYSTEM|NOSYSTEM)$|^GIT_CONFIG$/, message: "git reads settings from it (core.fsmonitor, core.pager, diff.external... name commands git runs)" },
  { name: /^GIT_(EXTERNAL_DIFF|SSH|SSH_COMMAND|PAGER|EDITOR|SEQUENCE_EDITOR|ASKPASS|PROXY_COMMAND|EXEC_PATH|TEMPLATE_DIR)$/, message: "git runs the program it names" },
  { name: /^GIT_/, message: "git reads its repository, configuration and helper programs from GIT_* variables" },
  { name: /^(LESSOPEN|LESSCLOSE|LESS|LESSKEY|LESSKEYIN|LESSKEY_CONTENT|LESSEDIT|LESSSECURE|LESSCHARSET|LESSCHARDEF|LESSMETACHARS|LESSMETAESCAPE)$/, message: "less runs LESSOPEN/LESSCLOSE commands and takes options and key bindings from its LESS* variables" },
  { name: /^(PAGER|MANPAGER|MANOPT|MANROFFOPT|MANROFFSEQ|MANPATH|BROWSER|EDITOR|VISUAL|SYSTEMD_PAGER|SYSTEMD_EDITOR|SUDO_EDITOR|SUDO_ASKPASS|SSH_ASKPASS|DIFF_PAGER|GIT_PAGER|SHELL)$/, message: "programs run the command it names (pagers, editors, man's preprocessors, `!` escapes)" },
  { name: /^(GCONV_PATH|LOCPATH|NLSPATH)$/, message: "glibc loads conversion modules or locale data from the directory it names (GCONV_PATH loads shared libraries into iconv and others)" },
  { name: /^LD_/, message: "the dynamic loader reads it (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT load code into every program)" },
  { name: /^(BASH_ENV|ENV|PROMPT_COMMAND|PS4|SHELLOPTS|BASHOPTS|BASH_XTRACEFD|CDPATH|GLOBIGNORE|IFS|BASH_LOADABLES_PATH)$|^BASH_FUNC_/, message: "the shell runs or reinterprets code because of it (start-up files, exported functions, word splitting)" },
  { name: /^PYTHON[A-Z0-9_]*$/, message: "Python loads start-up code or modules from it (PYTHONSTARTUP, PYTHONPATH, PYTHONHOME)" },
  { name: /^(PERL5OPT|PERL5LIB|PERLLIB|PERL5DB|PERL_MB_OPT|PERL_MM_OPT|PERL_USE_UNSAFE_INC)$/, message: "perl loads code from it" },
  { name: /^(RUBYOPT|RUBYLIB)$/, message: "ruby loads code from it" },
  { name: /^(NODE_OPTIONS|NODE_PATH|NODE_REPL_EXTERNAL_MODULE)$/, message: "node loads code from it (--require, --import)" },
  { name: /^(PATH|HOME|XDG_CONFIG_HOME|XDG_CONFIG_DIRS|XDG_DATA_HOME|XDG_DATA_DIRS|TMPDIR)$/, message: "changes which program a name runs or which configuration files programs read (a ~/.gitconfig or ~/.lessfilter elsewhere)" },
  { name: /^(OPENSSL_CONF|OPENSSL_ENGINES|OPENSSL_MODULES|SSL_CERT_FILE|SSL_CERT_DIR|CURL_CA_BUNDLE|SSLKEYLOGFILE)$/, message: "openssl and TLS clients load configuration, engines or write key logs from it" },
  { name: /^(MALLOC_|GLIBC_TUNABLES$|GCONV_|HOSTALIASES$|RESOLV_)/, message: "glibc changes its own behaviour from it (GLIBC_TUNABLES has had exploitable parsers)" },
];

export function envFindings(env: unknown): EnvFinding[] {
  if (env === null || env === undefined || typeof env !== "object") return [];
  const out: EnvFinding[] = [];
  for (const [name, raw] of Object.entries(env as Record<string, unknown>)) {
    const value = typeof raw === "string" ? raw : null;
    const executor = EXECUTORS.find((e) => e.name.test(name));
    if (executor) {
      out.push({ level: "high", rule: "env.executes", name, message: `environment variable ${name}: ${executor.message}` });
      continue;
    }
    const presentational = PRESENTATIONAL.find((p) => p.name.test(name));
    if (presentational && value !== null && presentational.value.test(value)) {
      out.push({ level: "read_only", rule: "env.presentational", name, message: `environment variable ${name} only sets ${presentational.what}` });
      continue;
    }
    if (presentational) {
      out.push({ level: "medium", rule: "env.unknown", name, message: `environment variable ${name} has a value outside the plain form allowed for ${presentational.what}` });
      continue;
    }
    out.push({ level: "medium", rule: "env.unknown", name, message: `environment variable ${name} is not on the presentational allow-list (LANG, LC_*, TZ, TERM, COLUMNS, LINES, NO_COLOR...); programs may read it to change what they do` });
  }
  return out;
}
