// Where `npm test` spends CPU. On a 2-core machine most of the suite keeps
// both cores busy, so wall time follows CPU work: these figures say which
// steps are bound by CPU (busy share near 100%) and which files do the work.
//
//   machineCpu()      the machine's busy and total ticks (/proc/stat)
//   busyShare(a, b)   the busy fraction between two readings
//   processCpu()      this process's CPU seconds: its own and its reaped children's
//
// The per-file figures come from tools/lib/cpu-probe.mjs, a vitest set-up
// file that appends one JSON line per test file to TEST_CPU_LOG.
import fs from "node:fs";

/** Clock ticks per second of /proc (USER_HZ): 100 on every Linux architecture Node runs on. */
const USER_HZ = 100;

/**
 * The first line of /proc/stat as busy and total ticks. Idle and iowait are
 * not busy; steal is (the machine wanted the CPU and did not get it).
 * @param {string} [text] /proc/stat's contents (tests)
 */
export function machineCpu(text) {
  const line = (text ?? fs.readFileSync("/proc/stat", "utf8")).split("\n", 1)[0] ?? "";
  const fields = line.trim().split(/\s+/);
  if (fields[0] !== "cpu") throw new Error(`/proc/stat: unexpected first line ${JSON.stringify(line)}`);
  // user nice system idle iowait irq softirq steal (guest time is already in user)
  const ticks = fields.slice(1, 9).map((v) => Number(v));
  if (ticks.length < 8 || ticks.some((v) => !Number.isFinite(v))) throw new Error(`/proc/stat: unreadable cpu line ${JSON.stringify(line)}`);
  const total = ticks.reduce((s, v) => s + v, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: total - idle, total };
}

/** The busy fraction (0..1) of all cores between two machineCpu() readings. */
export function busyShare(before, after) {
  const total = after.total - before.total;
  return total > 0 ? (after.busy - before.busy) / total : 0;
}

/**
 * CPU seconds of the calling process from /proc/self/stat: `self` (user +
 * system) and `children` (of the children it has waited for, and theirs).
 * @param {string} [text] /proc/self/stat's contents (tests)
 */
export function processCpu(text) {
  const stat = text ?? fs.readFileSync("/proc/self/stat", "utf8");
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).trim().split(/\s+/);
  const at = (n) => Number(fields[n - 3]);
  return { self: (at(14) + at(15)) / USER_HZ, children: (at(16) + at(17)) / USER_HZ };
}

/**
 * The files of a TEST_CPU_LOG (one JSON object per line) that used the most
 * CPU, and the total. A line that does not parse is counted, not fatal: a
 * file killed mid-write leaves half a line.
 * @param {string} text
 */
export function readCpuLog(text, count = 10) {
  const files = [];
  let unreadable = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const row = JSON.parse(line);
      if (typeof row.file === "string" && typeof row.self === "number" && typeof row.children === "number") files.push({ file: row.file, self: row.self, children: row.children, cpu: row.self + row.children });
      else unreadable += 1;
    } catch {
      unreadable += 1;
    }
  }
  const total = files.reduce((s, f) => s + f.cpu, 0);
  return { total, files: files.length, unreadable, top: files.sort((a, b) => b.cpu - a.cpu).slice(0, count) };
}
