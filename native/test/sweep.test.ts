// Start-up sweep of lease cgroups left by dead launches: stale leases are
// killed, verified empty and removed; live leases (ours or another live
// process's) and anything not named by our scheme are never touched.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, leaseCgroupPrefix, sweepStaleLeases } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";
import { currentLayout } from "./layout";

const here = dirname(fileURLToPath(import.meta.url));
const layout = currentLayout();
/** Where a fake lease goes: v1 memory (under our memcg), pids, cpu and the cgroup2 mount; v2 our cgroup2 directory. */
const parents = () => layout.fakeLeaseParents;
/** A lease of ours (name starts with `prefix`) that holds a process, and its directory in every hierarchy. */
function runningLease(prefix: string): { name: string; dirs: string[] } | undefined {
  for (const p of layout.leaseParents) {
    if (!existsSync(p)) continue;
    const name = readdirSync(p).find((n) => n.startsWith(prefix));
    if (name && procs(join(p, name))) return { name, dirs: layout.leaseParents.map((q) => join(q, name)).filter(existsSync) };
  }
  return undefined;
}
/** How many directories one lease has: v1 one per hierarchy (memory, pids, cpu, cgroup2), v2 one. */
const dirsPerLease = layout.kind === "v1" ? 4 : 1;
const pidnsIno = () => /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "";
function startTime(pid: number): string {
  const s = readFileSync(`/proc/${pid}/stat`, "utf8");
  return s.slice(s.lastIndexOf(")") + 2).split(" ")[19] ?? "";
}
function makeLease(name: string, pids: number[]): string[] {
  const dirs = parents().map((p) => { mkdirSync(p, { recursive: true }); return join(p, name); });
  for (const d of dirs) {
    mkdirSync(d);
    for (const pid of pids) writeFileSync(join(d, "cgroup.procs"), `${pid}\n`);
  }
  return dirs;
}
function removeLease(dirs: string[]): void {
  for (const d of dirs) if (existsSync(d)) rmdirSync(d);
}
const procs = (d: string) => readFileSync(join(d, "cgroup.procs"), "utf8").trim();
function sleeper(): Promise<ChildProcess> {
  const c = spawn("/bin/sleep", ["300"], { stdio: "ignore" });
  return new Promise((res, rej) => { c.once("spawn", () => res(c)); c.once("error", rej); });
}
const exitOf = (c: ChildProcess) =>
  new Promise<string | null>((res) => { if (c.exitCode !== null || c.signalCode) res(c.signalCode); else c.once("exit", (_code, sig) => res(sig)); });
async function waitFor<T>(f: () => T | undefined, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}
let seq = 0;
const uniqueId = () => `ltest${process.pid}x${Date.now().toString(36)}x${seq++}`;

let wd = "";
beforeAll(() => { setupNative(); wd = makeWorkdir(); });
afterAll(() => removeWorkdir(wd));

describe("sweepStaleLeases", () => {
  it("names this process's leases lh.<pidns>.<pid>.<starttime>.", () => {
    expect(leaseCgroupPrefix()).toBe(`lh.${pidnsIno()}.${process.pid}.${startTime(process.pid)}.`);
  });

  it("kills and removes a stale lease (owner dead) that still holds a process, in every hierarchy", async () => {
    // An owner that existed and is gone: a process that already exited.
    const gone = spawn("/bin/true");
    const deadPid = gone.pid!;
    await exitOf(gone);
    // Another test process's start-up sweep may catch the fake first (it is
    // stale for everyone): then try again with a fresh one.
    for (let attempt = 1; ; attempt++) {
      const s = await sleeper();
      const dirs = makeLease(`lh.${pidnsIno()}.${deadPid}.1.${uniqueId()}`, [s.pid!]);
      expect(dirs.every((d) => procs(d) === String(s.pid))).toBe(true);
      const r = sweepStaleLeases();
      expect(await exitOf(s)).toBe("SIGKILL");
      expect(dirs.filter(existsSync)).toEqual([]);
      if (attempt < 3 && (r.killed === 0 || r.removed === 0)) continue;
      expect(r.failures).toEqual([]);
      expect(r.killed).toBeGreaterThanOrEqual(1);
      expect(r.removed).toBeGreaterThanOrEqual(1);
      break;
    }
  });

  it("a launch whose process was SIGKILLed mid-run leaves a lease that the next sweep removes", async () => {
    // The lease is stale for every process: a guest starting meanwhile (the
    // browser tests' hub runs beside this file) may sweep it first. Then
    // again with a fresh launch.
    for (let attempt = 1; ; attempt++) {
      const child = spawn(process.execPath, ["--import", "tsx", join(here, "fixtures", "launch-and-hang.ts"), wd], {
        stdio: ["ignore", "pipe", "inherit"], cwd: join(here, "..", ".."),
      });
      let out = "";
      child.stdout!.on("data", (b: Buffer) => { out += b.toString(); });
      const prefix = await waitFor(() => (out.includes("\n") ? out.split("\n")[0] : undefined), 20_000);
      expect(prefix).toMatch(/^lh\.\d+\.\d+\.\d+\.$/);
      // Running: the workload sits in the lease's cgroups.
      const lease = await waitFor(() => runningLease(prefix), 20_000);
      const dirs = lease.dirs;
      expect(dirs).toHaveLength(dirsPerLease);
      child.kill("SIGKILL");
      await exitOf(child);
      const left = dirs.filter(existsSync);
      const r = sweepStaleLeases();
      if (attempt < 3 && (left.length !== dirs.length || r.removed === 0)) continue;
      expect(left).toEqual(dirs); // the dead launch withdrew nothing
      expect(r.failures).toEqual([]);
      expect(r.removed).toBeGreaterThanOrEqual(1);
      expect(dirs.filter(existsSync)).toEqual([]);
      break;
    }
  }, 120_000);

  it("never touches a live launch of this process, a live owner's lease, or foreign names", async () => {
    const running = launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", "sleep 1; echo survived"] });
    const ownPrefix = leaseCgroupPrefix();
    const live = await waitFor(() => runningLease(ownPrefix), 10_000);
    // Owner alive (another process, real start time) and a name outside our scheme.
    const owner = await sleeper();
    const inOther = await sleeper();
    const inForeign = await sleeper();
    const otherDirs = makeLease(`lh.${pidnsIno()}.${owner.pid}.${startTime(owner.pid!)}.${uniqueId()}`, [inOther.pid!]);
    const foreignDirs = makeLease(`not-a-lease-${uniqueId()}`, [inForeign.pid!]);
    try {
      const r = sweepStaleLeases();
      expect(r.untouched.live_own).toBeGreaterThanOrEqual(1);
      expect(r.untouched.live_other).toBeGreaterThanOrEqual(1);
      expect(r.untouched.foreign).toBeGreaterThanOrEqual(1);
      for (const d of [...otherDirs, ...foreignDirs]) expect(existsSync(d)).toBe(true);
      for (const d of otherDirs) expect(procs(d)).toBe(String(inOther.pid));
      for (const d of foreignDirs) expect(procs(d)).toBe(String(inForeign.pid));
      expect(live.dirs.filter(existsSync)).toEqual(live.dirs);
      const res = await running;
      expect(res.stdout.toString()).toBe("survived\n");
      expect(res.exit.code).toBe(0);
      expect(res.withdrawal).toEqual({ verified_empty: true, removed: true });
    } finally {
      for (const c of [owner, inOther, inForeign]) c.kill("SIGKILL");
      await Promise.all([owner, inOther, inForeign].map(exitOf));
      await new Promise((r) => setTimeout(r, 50));
      removeLease(otherDirs);
      removeLease(foreignDirs);
    }
  }, 30_000);
});
