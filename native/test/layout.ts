// The host's cgroup layout, worked out by the tests themselves (not by the
// launcher they check) from /proc/self/mountinfo, /proc/self/cgroup and
// cgroup.controllers, so each test expects this layout's own answer:
//  - "v1": memory/pids/cpu in v1 hierarchies plus a controller-less cgroup2
//    mount (these machines: /sys/fs/cgroup/unified);
//  - "v2": memory, pids and cpu offered to this process's cgroup2 directory.
// Pure functions over the files' text, so both layouts are testable here.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface CgroupLayout {
  kind: "v1" | "v2" | null;
  /** mount point of the cgroup2 hierarchy (the lease's cgroup id lives there) */
  v2Mount: string | null;
  /** mount points of the v1 memory, pids and cpu hierarchies (absent ones left out) */
  v1Mounts: Partial<Record<"memory" | "pids" | "cpu", string>>;
  /**
   * Every directory that may hold this process's lease directories (the
   * "leasehold" parents). v1: one per hierarchy, under this process's own
   * cgroup in it (all four get the lease). v2: this process's cgroup2
   * directory and, when it is not the root, its parent (the launcher uses the
   * parent when its own cgroup holds processes, see native/README.md).
   */
  leaseParents: string[];
  /** where a fake lease for the sweep goes, one directory per hierarchy */
  fakeLeaseParents: string[];
}

export interface LayoutSources {
  mountinfo: string;
  procCgroup: string;
  /** contents of `<dir>/cgroup.controllers`, or null when absent */
  controllers: (dir: string) => string | null;
}

const V1_CONTROLLERS = ["memory", "pids", "cpu"] as const;

function ownPaths(procCgroup: string): { v2: string | null; v1: Map<string, string> } {
  let v2: string | null = null;
  const v1 = new Map<string, string>();
  for (const line of procCgroup.split("\n")) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    const [, , ctrls = "", path = "/"] = m;
    if (ctrls === "") v2 = path;
    else for (const c of ctrls.split(",")) v1.set(c, path);
  }
  return { v2, v1 };
}

const under = (mount: string, path: string) => (path === "/" ? mount : join(mount, path));

export function cgroupLayout(src: LayoutSources): CgroupLayout {
  let v2Mount: string | null = null;
  const v1Mounts: CgroupLayout["v1Mounts"] = {};
  for (const line of src.mountinfo.split("\n")) {
    const [pre, post] = line.split(" - ");
    if (!pre || !post) continue;
    const mountPoint = pre.split(" ")[4] ?? "";
    const [fstype, , superOpts = ""] = post.split(" ");
    if (fstype === "cgroup2" && v2Mount === null) v2Mount = mountPoint;
    if (fstype === "cgroup") {
      for (const c of V1_CONTROLLERS) if (superOpts.split(",").includes(c)) v1Mounts[c] ??= mountPoint;
    }
  }
  const own = ownPaths(src.procCgroup);
  const ownV2 = v2Mount !== null && own.v2 !== null ? under(v2Mount, own.v2) : null;
  const offered = ownV2 === null ? [] : (src.controllers(ownV2) ?? "").trim().split(/\s+/);
  if (ownV2 !== null && V1_CONTROLLERS.every((c) => offered.includes(c))) {
    const parents = [join(ownV2, "leasehold")];
    if (own.v2 !== "/") parents.push(join(dirname(ownV2), "leasehold"));
    return { kind: "v2", v2Mount, v1Mounts, leaseParents: parents, fakeLeaseParents: [parents[0]!] };
  }
  if (ownV2 !== null && V1_CONTROLLERS.every((c) => v1Mounts[c] !== undefined && own.v1.has(c))) {
    const parents = [
      ...V1_CONTROLLERS.map((c) => join(under(v1Mounts[c]!, own.v1.get(c)!), "leasehold")),
      join(ownV2, "leasehold"),
    ];
    return { kind: "v1", v2Mount, v1Mounts, leaseParents: parents, fakeLeaseParents: parents };
  }
  return { kind: null, v2Mount, v1Mounts, leaseParents: [], fakeLeaseParents: [] };
}

/** This host's layout, for this process. */
export function currentLayout(): CgroupLayout {
  return cgroupLayout({
    mountinfo: readFileSync("/proc/self/mountinfo", "utf8"),
    procCgroup: readFileSync("/proc/self/cgroup", "utf8"),
    controllers: (dir) => {
      const f = join(dir, "cgroup.controllers");
      return existsSync(f) ? readFileSync(f, "utf8") : null;
    },
  });
}
