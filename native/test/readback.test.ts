// Evidence never reports an unread value as measured: when a cgroup counter
// file cannot be read after the run, its cgroup_stats field is null, the exit
// flag it feeds (oom_killed, pids_exhausted) is null — unknown, not false —
// and a `limitations` line names the file. The read is made to fail through
// the addon's fault-injection seam (LEASEHOLD_NATIVE_FAULT_INJECTION=1 at
// load time, see native/SECURITY.md), in a child process of its own; the
// files are this host's layout's own (v1 memory.oom_control, v2 memory.events).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LaunchResult, SandboxPolicyInput } from "../index";
import { PROBE, basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";
import { currentLayout } from "./layout";

const here = dirname(fileURLToPath(import.meta.url));
const layout = currentLayout();
const kind = layout.kind ?? "v1";
/** Where each counter of cgroup_stats comes from on this layout: [file, line or null]. */
const SOURCES: Record<keyof LaunchResult["cgroup_stats"], [string, string | null]> = kind === "v2"
  ? {
      oom_kill: ["memory.events", "oom_kill"], memory_failcnt: ["memory.events", "max"], memory_max_usage: ["memory.peak", null],
      pids_events_max: ["pids.events", "max"], cpu_nr_periods: ["cpu.stat", "nr_periods"], cpu_nr_throttled: ["cpu.stat", "nr_throttled"],
      cpu_throttled_ms: ["cpu.stat", "throttled_usec"],
    }
  : {
      oom_kill: ["memory.oom_control", "oom_kill"], memory_failcnt: ["memory.failcnt", null], memory_max_usage: ["memory.max_usage_in_bytes", null],
      pids_events_max: ["pids.events", "max"], cpu_nr_periods: ["cpu.stat", "nr_periods"], cpu_nr_throttled: ["cpu.stat", "nr_throttled"],
      cpu_throttled_ms: ["cpu.stat", "throttled_time"],
    };
const OOM_FILE = SOURCES.oom_kill[0];
const ALL_FILES = [...new Set(Object.values(SOURCES).map(([f]) => f))];
const unknownOf: Partial<Record<keyof LaunchResult["cgroup_stats"], string>> = { oom_kill: "exit.oom_killed", pids_events_max: "exit.pids_exhausted" };
const limitation = (field: keyof LaunchResult["cgroup_stats"]): string => {
  const [file, key] = SOURCES[field];
  const what = key === null ? `cgroup ${kind} ${file}` : `"${key}" from cgroup ${kind} ${file}`;
  const unknown = unknownOf[field];
  return `cgroup_stats.${field} not measured${unknown ? ` (${unknown} unknown)` : ""}: could not read ${what} (EIO)`;
};

type Outcome = { ok: true; result: Omit<LaunchResult, "stdout" | "stderr"> & { stdout: string; stderr: string } } | { ok: false; error: { code: string | null; message: string } };
function runInChild(runs: { policy: SandboxPolicyInput; unreadable?: string[] }[], faultInjection: boolean): Outcome[] {
  const env = { ...process.env };
  if (faultInjection) env["LEASEHOLD_NATIVE_FAULT_INJECTION"] = "1";
  else delete env["LEASEHOLD_NATIVE_FAULT_INJECTION"];
  const out = execFileSync(process.execPath, ["--import", "tsx", join(here, "fixtures", "launch-with-faults.ts"), JSON.stringify(runs)], {
    cwd: join(here, "..", ".."), env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 120_000,
  });
  return JSON.parse(out.trim().split("\n").pop() ?? "[]") as Outcome[];
}
function launched(o: Outcome | undefined): Extract<Outcome, { ok: true }>["result"] {
  if (!o?.ok) throw new Error(`launch failed: ${JSON.stringify(o)}`);
  return o.result;
}

let wd = "";
let results: Outcome[] = [];
beforeAll(() => {
  setupNative();
  wd = makeWorkdir();
  const p = basePolicy(wd);
  results = runInChild([
    { policy: { ...p, argv: [PROBE, "mem_bomb"], memory_bytes: 48 << 20 }, unreadable: [OOM_FILE] },
    { policy: { ...p, argv: [PROBE, "mem_bomb"], memory_bytes: 48 << 20 }, unreadable: [] },
    { policy: { ...p, argv: [PROBE, "fork_bomb"], pids_max: 16 }, unreadable: ["pids.events"] },
    { policy: { ...p, argv: [PROBE, "fork_bomb"], pids_max: 16 }, unreadable: [] },
    { policy: p, unreadable: ALL_FILES },
    { policy: p },
  ], true);
}, 180_000);
afterAll(() => removeWorkdir(wd));

describe(`unread cgroup counters are unknown, never false or 0 (cgroup ${kind})`, () => {
  it(`an OOM-killed workload whose ${OOM_FILE} cannot be read: oom_killed null, oom_kill null, a limitation names ${OOM_FILE}`, () => {
    const r = launched(results[0]);
    expect(r.exit.signal).toBe("SIGKILL"); // it was OOM-killed (the control run below measures it)
    expect(r.exit.oom_killed).toBeNull();
    expect(r.cgroup_stats.oom_kill).toBeNull();
    expect(r.limitations).toContain(limitation("oom_kill"));
    expect(r.exit.pids_exhausted).toBe(false); // pids.events was read: still measured
    const control = launched(results[1]);
    expect(control.exit).toMatchObject({ signal: "SIGKILL", oom_killed: true });
    expect(control.cgroup_stats.oom_kill).toBeGreaterThanOrEqual(1);
    expect(control.limitations.filter((l) => l.startsWith("cgroup_stats."))).toEqual([]);
  });

  it("a fork bomb stopped at pids.max whose pids.events cannot be read: pids_exhausted null, a limitation names pids.events", () => {
    const r = launched(results[2]);
    expect(r.stdout).toMatch(/ERR EAGAIN/); // it did hit pids.max
    expect(r.exit.pids_exhausted).toBeNull();
    expect(r.cgroup_stats.pids_events_max).toBeNull();
    expect(r.limitations).toContain(limitation("pids_events_max"));
    const control = launched(results[3]);
    expect(control.exit.pids_exhausted).toBe(true);
    expect(control.cgroup_stats.pids_events_max).toBeGreaterThanOrEqual(1);
  });

  it("every counter file unreadable: every cgroup_stats field null, one limitation per counter naming its file", () => {
    const r = launched(results[4]);
    expect(r.exit.code).toBe(0);
    expect(r.exit).toMatchObject({ oom_killed: null, pids_exhausted: null });
    for (const v of Object.values(r.cgroup_stats)) expect(v).toBeNull();
    const lines = r.limitations.filter((l) => l.startsWith("cgroup_stats."));
    expect(lines.sort()).toEqual((Object.keys(SOURCES) as (keyof typeof SOURCES)[]).map(limitation).sort());
    // Limits were read back at creation, not from these files: still reported.
    expect(r.enforcement.cgroup).toMatchObject({ memory_max: 128 << 20, pids_max: 32 });
  });

  it("with the seam loaded but no fault, a normal launch reports false and 0 as measured", () => {
    const r = launched(results[5]);
    expect(r.exit).toEqual({ code: 0, signal: null, timed_out: false, oom_killed: false, pids_exhausted: false });
    expect(r.cgroup_stats).toMatchObject({ oom_kill: 0, pids_events_max: 0 });
    for (const v of Object.values(r.cgroup_stats)) expect(typeof v).toBe("number");
    expect(r.limitations.filter((l) => l.startsWith("cgroup_stats."))).toEqual([]);
  });

  it("without LEASEHOLD_NATIVE_FAULT_INJECTION=1 at load the fault option is refused and nothing runs", () => {
    const marker = join(wd, "ran-without-seam");
    const [o] = runInChild([{ policy: { ...basePolicy(wd), argv: ["/bin/sh", "-c", "echo x > /work/ran-without-seam"] }, unreadable: [OOM_FILE] }], false);
    expect(o).toEqual({ ok: false, error: { code: null, message: "fault injection is off (LEASEHOLD_NATIVE_FAULT_INJECTION=1 was not set when the addon loaded)" } });
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});
