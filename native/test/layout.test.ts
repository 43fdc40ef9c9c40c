// The tests' own reading of the cgroup layout (layout.ts), on both layouts:
// this machine's hybrid v1 + controller-less cgroup2, and pure v2 hosts with
// the agent in the root cgroup or in a delegated service cgroup. The native
// tests expect whatever this reading says, so it must be right on each.
import { describe, expect, it } from "vitest";
import { cgroupLayout, currentLayout } from "./layout";

const mi = (id: number, mount: string, fstype: string, opts: string) =>
  `${id} 20 0:${id} / ${mount} rw,nosuid,nodev,noexec,relatime shared:${id} - ${fstype} ${fstype === "cgroup2" ? "cgroup2" : "cgroup"} ${opts}`;

// As on these machines (6.18, Firecracker): v1 controllers, cgroup2 at /sys/fs/cgroup/unified.
const HYBRID_MOUNTINFO = [
  "22 1 0:20 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755",
  mi(23, "/sys/fs/cgroup/cpu", "cgroup", "rw,cpu"),
  mi(24, "/sys/fs/cgroup/cpuacct", "cgroup", "rw,cpuacct"),
  mi(25, "/sys/fs/cgroup/memory", "cgroup", "rw,memory"),
  mi(26, "/sys/fs/cgroup/pids", "cgroup", "rw,pids"),
  mi(27, "/sys/fs/cgroup/unified", "cgroup2", "rw"),
].join("\n");
const HYBRID_CGROUP = "8:pids:/\n4:memory:/process_api/abc\n2:cpuacct:/\n1:cpu:/\n0::/\n";
const PURE_V2_MOUNTINFO = mi(30, "/sys/fs/cgroup", "cgroup2", "rw,nsdelegate,memory_recursiveprot");

describe("cgroup layout as the tests read it", () => {
  it("hybrid v1 + controller-less cgroup2: v1, leases in every hierarchy under the agent's own cgroups", () => {
    const l = cgroupLayout({ mountinfo: HYBRID_MOUNTINFO, procCgroup: HYBRID_CGROUP, controllers: () => "hugetlb\n" });
    expect(l.kind).toBe("v1");
    expect(l.v2Mount).toBe("/sys/fs/cgroup/unified");
    expect(l.leaseParents).toEqual([
      "/sys/fs/cgroup/memory/process_api/abc/leasehold",
      "/sys/fs/cgroup/pids/leasehold",
      "/sys/fs/cgroup/cpu/leasehold",
      "/sys/fs/cgroup/unified/leasehold",
    ]);
    expect(l.fakeLeaseParents).toEqual(l.leaseParents);
  });

  it("pure v2, agent in the root cgroup: v2, leases under /sys/fs/cgroup/leasehold only", () => {
    const l = cgroupLayout({ mountinfo: PURE_V2_MOUNTINFO, procCgroup: "0::/\n", controllers: (d) => (d === "/sys/fs/cgroup" ? "cpuset cpu io memory pids\n" : null) });
    expect(l.kind).toBe("v2");
    expect(l.v2Mount).toBe("/sys/fs/cgroup");
    expect(l.leaseParents).toEqual(["/sys/fs/cgroup/leasehold"]);
  });

  it("pure v2, agent in a delegated service cgroup: v2, leases in its own cgroup or next to it", () => {
    const own = "/sys/fs/cgroup/system.slice/leasehold-guest.service";
    const l = cgroupLayout({
      mountinfo: PURE_V2_MOUNTINFO,
      procCgroup: "0::/system.slice/leasehold-guest.service\n",
      controllers: (d) => (d === own ? "cpu memory pids\n" : null),
    });
    expect(l.kind).toBe("v2");
    expect(l.leaseParents).toEqual([`${own}/leasehold`, "/sys/fs/cgroup/system.slice/leasehold"]);
    expect(l.fakeLeaseParents).toEqual([`${own}/leasehold`]);
  });

  it("pure v2 without pids delegated and no v1: no layout the launcher can use", () => {
    const l = cgroupLayout({ mountinfo: PURE_V2_MOUNTINFO, procCgroup: "0::/x/y\n", controllers: () => "cpu memory\n" });
    expect(l.kind).toBeNull();
    expect(l.leaseParents).toEqual([]);
  });

  it("this machine has one of the two layouts the launcher supports", () => {
    const l = currentLayout();
    console.log(`[native layout] ${JSON.stringify(l)}`);
    expect(["v1", "v2"]).toContain(l.kind);
  });
});
