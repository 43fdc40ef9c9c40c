/**
 * CPU time of a process and of its direct children, from /proc (Linux): what
 * the fast-path bench divides by the calls of a phase to print CPU ms per
 * call for the hub and its guest. utime + stime, plus cutime + cstime (the
 * children it has waited for, e.g. the guest's finished sandbox launches).
 */
import fs from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function statCpuMs(pid: number): number | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Fields after the parenthesised command name (which may hold spaces).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      out.push(...fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** CPU ms so far of `pid` and of each direct child, keyed by the child's command line (shortened). */
export function processTreeCpu(pid: number): { self: number; children: Map<string, number> } {
  const children = new Map<string, number>();
  for (const child of childrenOf(pid)) {
    const ms = statCpuMs(child);
    if (ms === null) continue;
    let name = String(child);
    try {
      name = fs.readFileSync(`/proc/${child}/cmdline`, "utf8").split("\0").filter(Boolean).slice(1, 3).join(" ").replace(/.*\//, "");
    } catch {
      // keep the pid
    }
    children.set(name, (children.get(name) ?? 0) + ms);
  }
  return { self: statCpuMs(pid) ?? NaN, children };
}
