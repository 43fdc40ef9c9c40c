import type { RiskLevel } from "./levels";
import { readOptions, type ArgValue, type OptionTable } from "./options";
import type { ProgramFinding } from "./programs";

/**
 * Programs that print a host setting and, given one more option or operand,
 * change it: `date` sets the clock (`-s`, `--set`, or a bare `MMDDhhmm`
 * operand), `hostname` sets the name (an operand, `-F FILE`, `-b`), `dmesg`
 * clears or reconfigures the kernel log (`-c`, `-C`, `-D`, `-E`, `-n`). Each
 * is read with its getopt table, so `-rc`, `-s2020-01-01` and `--se=…` are
 * the options they are to the program.
 */

function finding(level: RiskLevel, rule: string, message: string, arg?: number): ProgramFinding {
  return arg === undefined ? { kind: "finding", level, rule, message } : { kind: "finding", level, rule, message, arg };
}

interface HostModel {
  table: OptionTable;
  /** Options that change the host, with what they do. */
  changes: Readonly<Record<string, string>>;
  /** What an operand means: "query" when it only selects output, or the change it makes. */
  operand: (value: ArgValue) => string | null;
}

const MODELS: Readonly<Record<string, HostModel>> = {
  date: {
    table: { flags: "IRu", values: "dfrs", optional: "I", longs: ["date=", "debug", "file=", "iso-8601?", "resolution", "rfc-email", "rfc-3339=", "reference=", "set=", "universal", "utc", "uct", "help", "version"], abbreviate: true },
    changes: { "-s": "sets the system clock", "--set": "sets the system clock" },
    // `+FORMAT` prints; any other operand is the POSIX `MMDDhhmm[[CC]YY][.ss]` form, which sets the clock.
    operand: (v) => (v !== null && v.startsWith("+") ? null : "sets the system clock (a date operand without +)"),
  },
  hostname: {
    table: { flags: "aAbdfiIsyVh", values: "F", longs: ["alias", "all-fqdns", "boot", "domain", "fqdn", "long", "file=", "ip-address", "all-ip-addresses", "short", "yp", "nis", "help", "version"], abbreviate: true },
    changes: { "-F": "sets the host name from a file", "--file": "sets the host name from a file", "-b": "sets a host name at boot", "--boot": "sets a host name at boot" },
    operand: () => "sets the host name",
  },
  dmesg: {
    table: { flags: "CcDEHJkPprSTtuwWxdehV", values: "FflnsL", optional: "L", longs: ["clear", "read-clear", "console-off", "console-on", "file=", "facility=", "human", "json", "kernel", "color?", "level=", "console-level=", "noescape", "nopager", "force-prefix", "raw", "syslog", "buffer-size=", "ctime", "notime", "time-format=", "userspace", "follow", "follow-new", "decode", "show-delta", "reltime", "since=", "until=", "help", "version"], abbreviate: true },
    changes: { "-C": "clears the kernel log", "--clear": "clears the kernel log", "-c": "clears the kernel log after printing it", "--read-clear": "clears the kernel log after printing it", "-D": "turns console logging off", "--console-off": "turns console logging off", "-E": "turns console logging on", "--console-on": "turns console logging on", "-n": "sets the console log level", "--console-level": "sets the console log level" },
    operand: () => "takes no operands; an unexpected word",
  },
};

export function hostSettingFindings(name: string, args: readonly ArgValue[]): ProgramFinding[] | null {
  const model = MODELS[name];
  if (!model) return null;
  const read = readOptions(args, model.table);
  const out: ProgramFinding[] = [];
  for (const i of read.unknown) out.push(finding("medium", "option.unknown", `${name} ${args[i]}: an option the catalogue does not know for ${name}`, i));
  for (const o of read.options) {
    const change = model.changes[o.name];
    if (change) out.push(finding("high", "command.system", `${name} ${o.name} ${change}`, o.index));
  }
  for (const i of read.operands) {
    const change = model.operand(args[i] ?? null);
    if (change) out.push(finding("high", "command.system", `${name} ${change}`, i));
  }
  return out;
}
