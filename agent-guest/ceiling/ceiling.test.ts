import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { thrownBy } from "../../test/support/refusals";
import type { SandboxPolicy } from "../../native/index";
import { checkEgressBeforeResolution, checkHostPaths, grantedMounts, intersectPolicy, loadCeiling, parseCeiling, type HostCeiling } from "./index";

const MiB = 1024 * 1024;

const ceilingJson = {
  version: 1,
  workspace_root: "/srv/leasehold/work",
  exec_dirs: ["/usr/bin", "/bin"],
  read_only_paths: ["/usr/share"],
  egress: ["10.0.0.0/8:443", "[2001:db8::/32]:443"],
  tcp_bind_ports: [8080],
  max: { memory_bytes: 512 * MiB, cpus: 2, pids: 128, timeout_ms: 60_000, output_bytes: MiB, tmpfs_bytes: 64 * MiB, tmpfs_inodes: 16384 },
};

/** A compiled policy as the hub would send it (all fields explicit). */
function job(over: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return {
    argv: ["/bin/true"],
    env: {},
    workdir: "/srv/leasehold/work/job-1",
    cwd: "/work",
    stdin: "",
    network: "none",
    memory_bytes: 256 * MiB,
    cpus: 1,
    pids_max: 64,
    tmpfs_tmp_bytes: 64 * MiB,
    tmpfs_tmp_inodes: 16384,
    timeout_ms: 30_000,
    stdout_max_bytes: MiB,
    stderr_max_bytes: MiB,
    exec_allow: ["/usr/bin", "/bin"],
    ro_binds: [],
    host_paths: [],
    landlock: { required: true, min_abi: 1, fs: [], tcp_connect: [], tcp_bind: [], scope: true },
    ...over,
  };
}


const ceiling: HostCeiling = parseCeiling(ceilingJson);

describe("intersectPolicy", () => {
  it("returns the job's own policy (a copy) when it lies within the ceiling", () => {
    const j = job({ network: { egress: ["10.1.2.0/24:443"] }, ro_binds: ["/usr/share/zoneinfo"] });
    const out = intersectPolicy(j, ceiling, { tier: "A" });
    expect(out).toEqual(j);
    expect(out).not.toBe(j);
    expect(intersectPolicy(job({ memory_bytes: 512 * MiB, cpus: 2, pids_max: 128, timeout_ms: 60_000 }), ceiling, { tier: "C" }).memory_bytes).toBe(512 * MiB);
  });

  it.each<[string, Partial<SandboxPolicy>]>([
    ["memory_bytes", { memory_bytes: 512 * MiB + 1 }],
    ["cpus", { cpus: 2.5 }],
    ["pids_max", { pids_max: 129 }],
    ["timeout_ms", { timeout_ms: 60_001 }],
    ["stdout_max_bytes", { stdout_max_bytes: 2 * MiB }],
    ["stderr_max_bytes", { stderr_max_bytes: 2 * MiB }],
    ["tmpfs_tmp_bytes", { tmpfs_tmp_bytes: 128 * MiB }],
    ["tmpfs_tmp_inodes", { tmpfs_tmp_inodes: 20000 }],
    ["workdir", { workdir: "/srv/leasehold/workshop" }],
    ["workdir", { workdir: "/etc" }],
    ["exec_allow[1]", { exec_allow: ["/usr/bin", "/usr/local/bin"] }],
    ["exec_allow[0]", { exec_allow: ["/usr/bin2"] }],
    ["ro_binds[0]", { ro_binds: ["/etc"] }],
    ["landlock.required", { landlock: { required: false, min_abi: 1, fs: [], tcp_connect: [], tcp_bind: [], scope: true } }],
    ["landlock.fs[0].path", { landlock: { required: true, min_abi: 1, fs: [{ path: "/usr/bin", access: "rw" }], tcp_connect: [], tcp_bind: [], scope: true } }],
    ["landlock.fs[0].path", { landlock: { required: true, min_abi: 1, fs: [{ path: "/home", access: "ro" }], tcp_connect: [], tcp_bind: [], scope: true } }],
    ["landlock.tcp_connect[0]", { landlock: { required: true, min_abi: 1, fs: [], tcp_connect: [22], tcp_bind: [], scope: true } }],
    ["landlock.tcp_bind[0]", { landlock: { required: true, min_abi: 1, fs: [], tcp_connect: [], tcp_bind: [9090], scope: true } }],
    ["network.egress[0]", { network: { egress: ["10.0.0.0/7:443"] } }],
    ["network.egress[0]", { network: { egress: ["11.0.0.0/8:443"] } }],
    ["network.egress[1]", { network: { egress: ["10.0.0.0/8:443", "10.0.0.0/8:80"] } }],
    ["network.egress[0]", { network: { egress: ["[2001:db9::/48]:443"] } }],
  ])("refuses %s beyond the ceiling, never clamps", (field, over) => {
    const e = thrownBy(() => intersectPolicy(job(over), ceiling, { tier: "A" }));
    expect(e.code).toBe("POLICY_REFUSED");
    expect(e.tier).toBe("guest");
    expect(e.details?.field).toBe(field);
    expect(e.message).toContain(field);
    expect(e.message).toContain("host ceiling (guest check)");
  });

  it("refuses egress as UNENFORCEABLE on a tier-C host when it is within the ceiling", () => {
    const e = thrownBy(() => intersectPolicy(job({ network: { egress: ["10.0.0.0/8:443"] } }), ceiling, { tier: "C" }));
    expect(e.code).toBe("UNENFORCEABLE");
    expect(e.message).toContain("tier C");
    // Beyond the ceiling is reported as such on every tier.
    expect(thrownBy(() => intersectPolicy(job({ network: { egress: ["8.8.8.8/32:53"] } }), ceiling, { tier: "C" })).code).toBe("POLICY_REFUSED");
    // Tier B can enforce it.
    expect(intersectPolicy(job({ network: { egress: ["10.0.0.0/8:443"] } }), ceiling, { tier: "B" }).network).toEqual({ egress: ["10.0.0.0/8:443"] });
  });

  it("refuses a name left in the sandbox policy's egress (the sandbox takes resolved addresses only) as INVALID_ARGUMENT", () => {
    expect(thrownBy(() => intersectPolicy(job({ network: { egress: ["example.com:443"] } }), ceiling, { tier: "A" })).code).toBe("INVALID_ARGUMENT");
  });

  it("an empty ceiling egress list allows only network none", () => {
    const none = parseCeiling({ ...ceilingJson, egress: [] });
    expect(intersectPolicy(job(), none, { tier: "C" }).network).toBe("none");
    expect(thrownBy(() => intersectPolicy(job({ network: { egress: ["10.0.0.1/32:443"] } }), none, { tier: "A" })).code).toBe("POLICY_REFUSED");
  });
});

describe("egress entries: the hub's one format (server/trust/egress.ts)", () => {
  it("admits an IPv6 rule spelled as the hub compiles it when a ceiling entry covers it", () => {
    const j = job({ network: { egress: ["[2001:db8:1::/48]:443", "10.20.0.0/16:443"] } });
    expect(intersectPolicy(j, ceiling, { tier: "A" }).network).toEqual({ egress: ["[2001:db8:1::/48]:443", "10.20.0.0/16:443"] });
  });
  it.each(["[2001:db8::]/32:443", "[::ffff:10.0.0.0]/104:443", "[2001:DB8::/32]:443", "[2001:db8:0::/32]:443", "10.0.0.1/8:443", "10.0.0.0/8:0443"])(
    "a ceiling refuses %s (not the one spelling jobs use)",
    (text) => {
      expect(() => parseCeiling({ ...ceilingJson, egress: [text] })).toThrow(/egress\.0/);
    },
  );
  it("refuses a job rule in another spelling as INVALID_ARGUMENT naming the format", () => {
    const e = thrownBy(() => intersectPolicy(job({ network: { egress: ["[2001:db8::]/32:443"] } }), ceiling, { tier: "A" }));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain("[<ipv6>/<len>]:<port>");
  });
});

describe("names in the ceiling and in jobs (name:port)", () => {
  const named = parseCeiling({ ...ceilingJson, egress: ["10.0.0.0/8:443", "api.example.test:443", "db.example.test:5432"] });
  const resolved = (rule: string, addresses: string[]) => {
    const [name = "", port = "0"] = rule.split(":");
    return { rule, name, port: Number(port), addresses };
  };

  it("a ceiling accepts name rules and refuses names not in canonical form", () => {
    expect(named.egress).toContain("api.example.test:443");
    expect(() => parseCeiling({ ...ceilingJson, egress: ["API.example.test:443"] })).toThrow(/egress\.0/);
    expect(() => parseCeiling({ ...ceilingJson, egress: ["api.example.test.:443"] })).toThrow(/egress\.0/);
  });

  it("before resolution: a name the ceiling names passes; a name it does not name passes only when the ceiling has address rules on its port", () => {
    expect(() => checkEgressBeforeResolution(["api.example.test:443", "10.1.0.0/16:443"], named, { tier: "B" })).not.toThrow();
    // Not named, but 10.0.0.0/8:443 may cover what it resolves to: decided after resolution.
    expect(() => checkEgressBeforeResolution(["other.example.test:443"], named, { tier: "B" })).not.toThrow();
    const e = thrownBy(() => checkEgressBeforeResolution(["other.example.test:8080"], named, { tier: "B" }));
    expect(e.code).toBe("POLICY_REFUSED");
    expect(e.details).toMatchObject({ field: "network.egress[0]" });
    // Same name, another port: not covered.
    expect(thrownBy(() => checkEgressBeforeResolution(["db.example.test:5433"], named, { tier: "B" })).code).toBe("POLICY_REFUSED");
  });

  it("before resolution on tier C: within the ceiling is UNENFORCEABLE, beyond it is POLICY_REFUSED (the ceiling is checked first, no lookup either way)", () => {
    expect(thrownBy(() => checkEgressBeforeResolution(["api.example.test:443"], named, { tier: "C" })).code).toBe("UNENFORCEABLE");
    expect(thrownBy(() => checkEgressBeforeResolution(["elsewhere.test:22"], named, { tier: "C" })).code).toBe("POLICY_REFUSED");
    expect(() => checkEgressBeforeResolution([], named, { tier: "C" })).not.toThrow();
  });

  it("after resolution: addresses of a name the ceiling names are allowed wherever they are; of an unnamed name only inside ceiling address rules", () => {
    const api = resolved("api.example.test:443", ["203.0.113.7", "2001:db9::7"]);
    const out = intersectPolicy(job({ network: { egress: ["203.0.113.7/32:443", "[2001:db9::7/128]:443"] } }), named, { tier: "B", names: [api] });
    expect(out.network).toEqual({ egress: ["203.0.113.7/32:443", "[2001:db9::7/128]:443"] });

    const inside = resolved("other.example.test:443", ["10.9.9.9"]);
    expect(intersectPolicy(job({ network: { egress: ["10.9.9.9/32:443"] } }), named, { tier: "B", names: [inside] }).network).toEqual({ egress: ["10.9.9.9/32:443"] });

    // One address outside 10.0.0.0/8: the whole name is refused, naming the address.
    const straddles = resolved("other.example.test:443", ["10.9.9.9", "198.51.100.1"]);
    const e = thrownBy(() => intersectPolicy(job({ network: { egress: ["10.9.9.9/32:443", "198.51.100.1/32:443"] } }), named, { tier: "B", names: [straddles] }));
    expect(e.code).toBe("POLICY_REFUSED");
    expect(e.message).toContain("198.51.100.1");
  });

  it("a named name vouches only for its own addresses and port", () => {
    const api = resolved("api.example.test:443", ["203.0.113.7"]);
    expect(thrownBy(() => intersectPolicy(job({ network: { egress: ["203.0.113.8/32:443"] } }), named, { tier: "B", names: [api] })).code).toBe("POLICY_REFUSED");
    expect(thrownBy(() => intersectPolicy(job({ network: { egress: ["203.0.113.7/32:80"] } }), named, { tier: "B", names: [api] })).code).toBe("POLICY_REFUSED");
  });
});

describe("loadCeiling", () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-ceiling-"));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, body: unknown, mode = 0o644, uid = 0) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, typeof body === "string" ? body : JSON.stringify(body));
    fs.chmodSync(p, mode);
    if (process.getuid?.() === 0) fs.chownSync(p, uid, 0);
    return p;
  };
  const isRoot = process.getuid?.() === 0;

  it("loads a root-owned 0644 file", () => {
    if (!isRoot) return; // the owner rule can only be satisfied by root
    expect(loadCeiling(write("ok.json", ceilingJson)).max.pids).toBe(128);
    expect(loadCeiling(write("ok600.json", ceilingJson, 0o600)).egress).toHaveLength(2);
  });

  it.each<[string, () => string, RegExp]>([
    ["not owned by root", () => write("user.json", ceilingJson, 0o644, 1000), /not root/],
    ["group-writable", () => write("g.json", ceilingJson, 0o664), /writable by group or others/],
    ["world-writable", () => write("o.json", ceilingJson, 0o646), /writable by group or others/],
    ["a symlink to a good file", () => {
      const target = write("target.json", ceilingJson);
      const link = path.join(dir, "link.json");
      fs.symlinkSync(target, link);
      return link;
    }, /symlink/],
    ["missing", () => path.join(dir, "missing.json"), /does not exist/],
    ["a directory", () => {
      fs.mkdirSync(path.join(dir, "d.json"));
      return path.join(dir, "d.json");
    }, /not a regular file/],
    ["not JSON", () => write("bad.json", "{version: 1"), /not JSON/],
    ["an unknown field", () => write("extra.json", { ...ceilingJson, allow_everything: true }), /Unrecognized key/],
    ["a missing maximum", () => write("nomax.json", { ...ceilingJson, max: { ...ceilingJson.max, pids: undefined } }), /max\.pids/],
    ["a relative exec dir", () => write("rel.json", { ...ceilingJson, exec_dirs: ["usr/bin"] }), /exec_dirs\.0/],
    ["an egress entry with host bits", () => write("eg.json", { ...ceilingJson, egress: ["10.0.0.1/8:443"] }), /egress\.0/],
    ["workspace root /", () => write("root.json", { ...ceilingJson, workspace_root: "/" }), /workspace_root/],
    ["a version 2 file", () => write("v2.json", { ...ceilingJson, version: 2 }), /version/],
    ["a relative path argument", () => "ceiling.json", /absolute/],
    ["too large", () => write("big.json", " ".repeat(70_000)), /larger than/],
  ])("refuses a file that is %s", (_name, make, message) => {
    if (!isRoot) return;
    const e = thrownBy(() => loadCeiling(make()));
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.tier).toBe("guest");
    expect(e.message).toMatch(message);
  });
});

describe("workspace bound fields", () => {
  it("default to 1 GiB and 100 000 inodes when absent; explicit values are kept", () => {
    expect([ceiling.workspace_max_bytes, ceiling.workspace_max_inodes]).toEqual([1024 * MiB, 100_000]);
    const set = parseCeiling({ ...ceilingJson, workspace_max_bytes: 8 * MiB, workspace_max_inodes: 256 });
    expect([set.workspace_max_bytes, set.workspace_max_inodes]).toEqual([8 * MiB, 256]);
  });

  it.each<[string, Record<string, unknown>]>([
    ["a size below 4 MiB", { workspace_max_bytes: 4 * MiB - 1 }],
    ["a fractional size", { workspace_max_bytes: 8 * MiB + 0.5 }],
    ["a size as a string", { workspace_max_bytes: "1G" }],
    ["fewer than 16 inodes", { workspace_max_inodes: 15 }],
    ["the fields inside max (strict)", { max: { ...ceilingJson.max, workspace_max_bytes: 8 * MiB } }],
  ])("refuse %s (CONFIG_INVALID)", (_name, over) => {
    expect(thrownBy(() => parseCeiling({ ...ceilingJson, ...over })).code).toBe("CONFIG_INVALID");
  });
});

describe("host paths", () => {
  const withPaths = parseCeiling({
    ...ceilingJson,
    host_paths: [
      { label: "logs", path: "/var/log", mode: "ro" },
      { label: "app", path: "/srv/app", mode: "rw", owner: { uid: 1000, gid: 1000 }, max_bytes: 64 * MiB, max_inodes: 1000 },
    ],
  });

  it("lists labelled paths; none by default", () => {
    expect(ceiling.host_paths).toBeUndefined();
    expect(withPaths.host_paths?.map((h) => `${h.label}:${h.path}:${h.mode}`)).toEqual(["logs:/var/log:ro", "app:/srv/app:rw"]);
  });

  it.each<[string, unknown[], RegExp]>([
    ["a label listed twice", [{ label: "logs", path: "/var/log", mode: "ro" }, { label: "logs", path: "/srv/logs", mode: "ro" }], /label logs is listed twice/],
    ["the filesystem root", [{ label: "root", path: "/", mode: "ro" }], /host_paths\.0\.path/],
    ["a path inside the workspace root", [{ label: "ws", path: "/srv/leasehold/work/job-1", mode: "rw", owner: { uid: 1, gid: 1 } }], /overlaps the workspace root/],
    ["a path around the workspace root", [{ label: "srv", path: "/srv/leasehold", mode: "ro" }], /overlaps the workspace root/],
    ["an unnormalised path", [{ label: "logs", path: "/var//log", mode: "ro" }], /host_paths\.0\.path/],
    ["a bad label", [{ label: "Logs", path: "/var/log", mode: "ro" }], /host_paths\.0\.label/],
    ["33 entries", Array.from({ length: 33 }, (_, i) => ({ label: `l${i}`, path: `/data/${i}`, mode: "ro" })), /host_paths/],
  ])("refuses a ceiling with %s (CONFIG_INVALID)", (_why, hostPaths, message) => {
    const e = thrownBy(() => parseCeiling({ ...ceilingJson, host_paths: hostPaths }));
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.message).toMatch(message);
  });

  it("grants listed labels within their mode, sorted, with the ceiling's owner for rw only", () => {
    expect(checkHostPaths([{ label: "logs", path: "/var/log", mode: "ro" }, { label: "app", path: "/srv/app", mode: "rw" }], withPaths)).toEqual([
      { label: "app", path: "/srv/app", mode: "rw", owner: { uid: 1000, gid: 1000 } },
      { label: "logs", path: "/var/log", mode: "ro" },
    ]);
    expect(checkHostPaths([{ label: "app", path: "/srv/app", mode: "ro" }], withPaths)).toEqual([{ label: "app", path: "/srv/app", mode: "ro" }]);
    expect(grantedMounts(undefined, withPaths)).toEqual([]);
  });

  it.each<[string, { label: string; path: string; mode: "ro" | "rw" }[], RegExp]>([
    ["an unlisted label", [{ label: "etc", path: "/etc", mode: "ro" }], /etc is not a host path label/],
    ["a path other than the ceiling's", [{ label: "logs", path: "/var/log/nginx", mode: "ro" }], /logs names \/var\/log\/nginx, but the host ceiling's logs is \/var\/log/],
    ["rw on a label listed ro", [{ label: "logs", path: "/var/log", mode: "rw" }], /logs asks for rw, but the host ceiling lists logs ro/],
    ["a label asked twice", [{ label: "logs", path: "/var/log", mode: "ro" }, { label: "logs", path: "/var/log", mode: "ro" }], /names label logs twice/],
  ])("refuses %s with POLICY_REFUSED naming the label, nothing clamped", (_why, mounts, message) => {
    const e = thrownBy(() => checkHostPaths(mounts, withPaths));
    expect(e.code).toBe("POLICY_REFUSED");
    expect(e.message).toMatch(message);
    expect(thrownBy(() => intersectPolicy(job({ host_paths: mounts.map((m) => ({ ...m, ...(m.mode === "rw" ? { owner: { uid: 1000, gid: 1000 } } : {}) })) }), withPaths, { tier: "A" })).code).toBe("POLICY_REFUSED");
  });

  it("refuses every label on a ceiling that lists none", () => {
    expect(thrownBy(() => checkHostPaths([{ label: "logs", path: "/var/log", mode: "ro" }], ceiling)).message).toMatch(/logs is not a host path label/);
  });
});
