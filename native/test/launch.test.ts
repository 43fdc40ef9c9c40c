// The launcher's API contract: refusals, read-back enforcement, stdio, and
// 200 concurrent launches while Node's thread is busy without leaks.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaseholdError } from "../../server/errors/index";
import { bpfStatus, checkEnforceable, launch, leaseCgroupPrefix, probeKernel, SandboxPolicy } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";
import { currentLayout } from "./layout";

let wd = "";
beforeAll(() => { setupNative(); wd = makeWorkdir(); });
afterAll(() => removeWorkdir(wd));

const fdCount = () => readdirSync("/proc/self/fd").length;
const mountCount = () => readFileSync("/proc/self/mountinfo", "utf8").split("\n").length;
const layout = currentLayout();
function leaseDirs(): number {
  let n = 0;
  for (const d of layout.leaseParents) {
    // Only this process's leases: other test files (and the sweep test's fakes) may run alongside.
    if (existsSync(d)) n += readdirSync(d, { withFileTypes: true }).filter((e) => e.isDirectory() && e.name.startsWith(leaseCgroupPrefix())).length;
  }
  return n;
}

describe("probe and refusals", () => {
  it("probeKernel reports Landlock, seccomp, user namespaces and the cgroup layout the tests read for themselves", () => {
    const p = probeKernel();
    expect(p.landlock_abi).toBeGreaterThanOrEqual(1);
    expect(p.seccomp).toBe(true);
    expect(p.user_namespaces).toBe(true);
    // v1 here (controller-less cgroup2 at /sys/fs/cgroup/unified); v2 on a host that delegates memory/pids/cpu.
    expect(layout.kind).not.toBeNull();
    expect({ memory: p.cgroup.memory, pids: p.cgroup.pids, cpu: p.cgroup.cpu }).toEqual({ memory: layout.kind, pids: layout.kind, cpu: layout.kind });
    expect(p.cgroup.v2_mount).toBe(layout.v2Mount);
    expect(p.cgroup.unavailable_reason).toBeNull();
  });
  it("an egress allow-list needs BPF tier A or B: UNENFORCEABLE on tier C, under the programs where the host has them", async () => {
    const policy = SandboxPolicy.parse({ ...basePolicy(wd), network: { egress: ["10.0.0.0/8:443"] } });
    const tierC = () => ({ tier: "C" as const, object_sha256: null, detail: "test" });
    expect(() => checkEnforceable(policy, probeKernel(), tierC)).toThrow(/need BPF tier A or B/);
    if (bpfStatus().tier === "C") {
      await expect(launch(policy)).rejects.toMatchObject({ code: "UNENFORCEABLE" });
    } else {
      expect((await launch(policy)).bpf).toMatchObject({ tier: bpfStatus().tier, enforced: true, denials: [] });
    }
  });
  it("a Landlock rule on a kernel without Landlock is refused, not run weaker", () => {
    const policy = SandboxPolicy.parse({ ...basePolicy(wd), landlock: { fs: [{ path: "/work", access: "rw" }] } });
    const noLandlock = { ...probeKernel(), landlock_abi: 0 };
    expect(() => checkEnforceable(policy, noLandlock)).toThrow(LeaseholdError);
    try { checkEnforceable(policy, noLandlock); } catch (e) { expect((e as LeaseholdError).code).toBe("UNENFORCEABLE"); }
    const tcp = SandboxPolicy.parse({ ...basePolicy(wd), landlock: { tcp_connect: [443] } });
    expect(() => checkEnforceable(tcp, { ...probeKernel(), landlock_abi: 3 })).toThrow(/ABI 4/);
  });
  it("containment that fails inside the helper is UNENFORCEABLE with the stage", async () => {
    await expect(launch({ ...basePolicy(wd), ro_binds: ["/nonexistent/leasehold"] })).rejects.toMatchObject({
      code: "UNENFORCEABLE", details: { stage: "ro-bind", errno: "ENOENT", withdrawn: true },
    });
  });
  it("malformed policies are INVALID_ARGUMENT (unknown fields, relative paths)", async () => {
    await expect(launch({ ...basePolicy(wd), bogus: 1 } as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(launch({ ...basePolicy(wd), workdir: "rel/dir" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});

describe("one real run", () => {
  it("reads enforcement back from the kernel", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", "cat; echo err >&2; ls /proc/self/fd | wc -l"], stdin: "from-stdin\n" });
    expect(r.stdout.toString()).toBe("from-stdin\n4\n"); // 0,1,2 + the directory fd ls opens: nothing leaked in
    expect(r.stderr.toString()).toBe("err\n");
    expect(r.exit).toEqual({ code: 0, signal: null, timed_out: false, oom_killed: false, pids_exhausted: false });
    const e = r.enforcement;
    expect(e.namespaces).toEqual(["user", "mnt", "pid", "net", "ipc", "uts", "cgroup"]);
    expect(e.uid.inside).toBe(1000);
    expect(e.uid.host).toBeGreaterThanOrEqual(0x60000000);
    expect(e.uid.host).not.toBe(process.getuid?.());
    expect(e.cgroup).toMatchObject({ hierarchy: layout.kind, memory_max: 128 << 20, pids_max: 32, cpu_quota_us: 100000, cpu_period_us: 100000 });
    // memory+swap: v1 reads memsw back where the kernel accounts swap; v2 reports memory.max once memory.swap.max read back 0.
    const memswFile = layout.kind === "v1" ? join(dirname(layout.leaseParents[0]!), "memory.memsw.limit_in_bytes") : null;
    if (memswFile !== null && existsSync(memswFile)) expect(e.cgroup.memsw_max).toBe(128 << 20);
    else if (e.cgroup.memsw_max === null) expect(r.limitations).toContain("memory+swap limit not available (no memsw accounting)");
    else expect(e.cgroup.memsw_max).toBe(128 << 20);
    // Every counter was read: measured zeros, and no "not measured" line.
    expect(r.cgroup_stats).toMatchObject({ oom_kill: 0, pids_events_max: 0 });
    for (const v of Object.values(r.cgroup_stats)) expect(typeof v).toBe("number");
    expect(r.limitations.filter((l) => l.startsWith("cgroup_stats."))).toEqual([]);
    expect(e.cgroup.cgroup_id).toBeGreaterThan(1);
    expect(e).toMatchObject({ seccomp: true, no_new_privs: true, landlock_abi: probeKernel().landlock_abi, cap_effective: "0000000000000000", cap_bounding: "0000000000000000" });
    expect(r.withdrawal).toEqual({ verified_empty: true, removed: true });
    console.log(`[native enforcement] ${JSON.stringify({ exit: r.exit, enforcement: r.enforcement, timing: r.timing })}`);
  });
  it("the cgroup namespace is rooted at the lease: the workload sees \"/\" in every hierarchy", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/cat", "/proc/self/cgroup"] });
    const paths = r.stdout.toString().trim().split("\n").map((l) => l.split(":").slice(2).join(":"));
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => p === "/")).toBe(true);
  });
  it("reports output progress while the workload runs, not only at exit; totals count past the caps", async () => {
    const seen: { at: number; stdout_bytes: number; stderr_bytes: number }[] = [];
    const started = Date.now();
    // Output, a pause, more output: a report must arrive during the pause (before the exit).
    const r = await launch(
      { ...basePolicy(wd), argv: ["/bin/sh", "-c", "head -c 3000 /dev/zero; echo e >&2; sleep 1; head -c 5000 /dev/zero"], stdout_max_bytes: 4000 },
      { progressEveryMs: 100, onProgress: (p) => seen.push({ at: Date.now() - started, ...p }) },
    );
    const ended = Date.now() - started;
    expect(r.exit.code).toBe(0);
    expect(seen.length).toBeGreaterThanOrEqual(1);
    const early = seen.filter((p) => p.at < ended - 500);
    expect(early.length).toBeGreaterThanOrEqual(1);
    expect(early[0]!.stdout_bytes).toBe(3000);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.stdout_bytes).toBeGreaterThanOrEqual(seen[i - 1]!.stdout_bytes);
    expect(seen.at(-1)!.stdout_bytes).toBeLessThanOrEqual(8000);
    expect(r.stdout.length).toBe(4000);
    expect(r.stdout_bytes).toBe(8000);
  });
  it("a throwing progress callback does not disturb the launch", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", "echo one; sleep 0.3; echo two"] }, { progressEveryMs: 50, onProgress: () => { throw new Error("caller bug"); } });
    expect(r.stdout.toString()).toBe("one\ntwo\n");
  });
  it("bounds output and reports truncation", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", "head -c 100000 /dev/zero; head -c 10 /dev/zero >&2"], stdout_max_bytes: 1000, stderr_max_bytes: 100 });
    expect(r.stdout.length).toBe(1000);
    expect(r.stdout_bytes).toBe(100000);
    expect(r.stdout_truncated).toBe(true);
    expect(r.stderr_truncated).toBe(false);
  });
  it("reports a failed exec by errno", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/no/such/binary"] });
    expect(r.exec_error).toBe("ENOENT");
    expect(r.exit.code).toBe(127);
  });
  it("a daemonised grandchild does not outlive the lease", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", "(sleep 30 &) ; echo started"] });
    expect(r.stdout.toString()).toBe("started\n");
    expect(r.timing.wall_ms).toBeLessThan(3000);
    expect(r.withdrawal).toEqual({ verified_empty: true, removed: true });
  });
});

describe("concurrency", () => {
  it("200 concurrent launches while Node is busy: all correct, nothing leaked", async () => {
    // The BPF programs (maps, links, ring buffer) load once per process, at the first launch:
    // process-lifetime descriptors, not per-launch ones, so they are in the baseline.
    bpfStatus();
    const fds = fdCount();
    const mounts = mountCount();
    const dirs = leaseDirs();
    let busyTicks = 0;
    const busy = setInterval(() => { const t = Date.now(); while (Date.now() - t < 20) { /* keep the JS thread busy */ } busyTicks++; }, 1);
    const workdirs = Array.from({ length: 200 }, () => makeWorkdir());
    try {
      const results = await Promise.all(workdirs.map((d, i) =>
        launch({ ...basePolicy(d), argv: ["/bin/sh", "-c", `echo lease-${i}`], timeout_ms: 60_000 })));
      results.forEach((r, i) => {
        expect(r.stdout.toString()).toBe(`lease-${i}\n`);
        expect(r.exit.code).toBe(0);
        expect(r.withdrawal).toEqual({ verified_empty: true, removed: true });
      });
      expect(new Set(results.map((r) => r.enforcement.uid.host)).size).toBe(200);
    } finally {
      clearInterval(busy);
      workdirs.forEach(removeWorkdir);
    }
    expect(busyTicks).toBeGreaterThan(0);
    expect(fdCount()).toBe(fds);
    expect(mountCount()).toBe(mounts);
    expect(leaseDirs()).toBe(dirs);
  }, 120_000);
});
