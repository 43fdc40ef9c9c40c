import type { RiskLevel } from "./levels";
import { readOptions, type ArgValue, type OptionRead, type OptionTable } from "./options";
import { writeTarget, type ProgramFinding } from "./programs";

/**
 * Options of wrappers that act on their own rather than on the command they
 * run: `time -o` and `strace -o` write a file (strace's `-o |cmd` runs a
 * shell), `strace -p` attaches to another process, and `taskset -p`,
 * `chrt -p`, `ionice -p` query another process — or, given a new value,
 * change it. Options are read with each program's getopt table, so bundles
 * (`-cp`) and attached values (`-oFILE`) are seen.
 */

function finding(level: RiskLevel, rule: string, message: string, arg?: number): ProgramFinding {
  return arg === undefined ? { kind: "finding", level, rule, message } : { kind: "finding", level, rule, message, arg };
}

export interface WrapperOptionVerdict {
  /** Findings about the wrapper's own options. */
  findings: ProgramFinding[];
  /** The wrapper only queries (no command follows): read-only unless `findings` says otherwise. */
  queryOnly: boolean;
}

const TABLES: Readonly<Record<string, OptionTable>> = {
  time: { flags: "apqv", values: "fo", longs: ["append", "format=", "output=", "portability", "quiet", "verbose", "help", "version"], abbreviate: true, stopAtOperand: true },
  strace: { flags: "cCdDfFhiknqrtTvVwxyYzZ", values: "abeEIopPsSuUX", longs: ["output=", "attach=", "inject=", "fault=", "trace=", "signal=", "status=", "summary-only", "summary", "follow-forks", "output-separately", "env=", "user=", "string-limit=", "kill-on-exit", "seccomp-bpf", "help", "version"], abbreviate: true, stopAtOperand: true },
  ltrace: { flags: "bcCfhiLrStTV", values: "aeFlnopsuwxA", longs: ["output=", "help", "version", "demangle", "library=", "indent=", "align="], abbreviate: true, stopAtOperand: true },
  taskset: { flags: "acphV", longs: ["all-tasks", "cpu-list", "pid", "help", "version"], abbreviate: true, stopAtOperand: true },
  chrt: { flags: "abdfiorRemphvV", values: "TPD", longs: ["all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "reset-on-fork", "ext", "max", "pid", "verbose", "sched-runtime=", "sched-period=", "sched-deadline=", "help", "version"], abbreviate: true, stopAtOperand: true },
  ionice: { flags: "thV", values: "cnpPu", longs: ["class=", "classdata=", "pid=", "pgid=", "uid=", "ignore", "help", "version"], abbreviate: true, stopAtOperand: true },
};

const has = (read: OptionRead, ...names: string[]): boolean => read.options.some((o) => names.includes(o.name));

function outputFile(name: string, read: OptionRead, keys: string[]): ProgramFinding[] {
  const out: ProgramFinding[] = [];
  for (const o of read.options.filter((x) => keys.includes(x.name))) {
    const value = o.value ?? null;
    if (name === "strace" && value !== null && /^[|!]/.test(value)) out.push(finding("high", "dynamic.shell-code", `strace ${o.name} ${value}: pipes the trace to a shell command`, o.valueIndex ?? o.index));
    else out.push(finding("low", "command.writes", `${name} ${o.name} writes its report to a file`, o.valueIndex ?? o.index), ...writeTarget(value, o.valueIndex ?? o.index, `${name} writes`));
  }
  return out;
}

/** Null for wrappers without a table here; otherwise what their own options do. */
export function wrapperOptionVerdict(name: string, args: readonly ArgValue[]): WrapperOptionVerdict | null {
  const table = TABLES[name];
  if (!table) return null;
  const read = readOptions(args, table);
  const findings: ProgramFinding[] = [];
  for (const i of read.unknown) findings.push(finding("medium", "option.unknown", `${name} ${args[i]}: an option the catalogue does not know for ${name}`, i));
  const rest = args.length - read.end;
  switch (name) {
    case "time":
      findings.push(...outputFile(name, read, ["-o", "--output"]));
      return { findings, queryOnly: false };
    case "strace":
    case "ltrace": {
      findings.push(...outputFile(name, read, ["-o", "--output"]));
      if (has(read, "-p", "--attach")) findings.push(finding("medium", "command.process-control", `${name} -p attaches to another process and reads its memory and system calls`));
      const tamper = read.options.some((o) => o.name === "--inject" || o.name === "--fault" || (o.name === "-e" && /^(inject|fault)=/.test(o.value ?? "inject=")));
      if (tamper) findings.push(finding("high", "command.process-control", `${name} injects faults or changed results into system calls`));
      return { findings, queryOnly: rest === 0 && has(read, "-p", "--attach") };
    }
    case "taskset":
    case "chrt": {
      if (name === "chrt" && has(read, "-m", "--max")) return { findings, queryOnly: true };
      if (!has(read, "-p", "--pid")) return { findings, queryOnly: false };
      // `-p PID` prints the setting; `-p VALUE PID` sets it on a process that is not ours to change.
      if (rest >= 2) findings.push(finding("medium", "command.process-control", `${name} -p changes the ${name === "taskset" ? "CPU affinity" : "scheduling policy"} of a running process`, read.end));
      return { findings, queryOnly: true };
    }
    case "ionice": {
      const target = has(read, "-p", "--pid", "-P", "--pgid", "-u", "--uid");
      if (!target) return { findings, queryOnly: false };
      if (has(read, "-c", "--class", "-n", "--classdata")) findings.push(finding("medium", "command.process-control", "ionice changes the I/O priority of running processes"));
      return { findings, queryOnly: true };
    }
    default:
      return { findings, queryOnly: false };
  }
}
