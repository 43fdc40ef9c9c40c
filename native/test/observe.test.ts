// "Observe" leases (workdir_access "ro") change nothing that outlives them:
// every write into the workspace — including a 0777 sub-directory another
// uid made — is EROFS and the tree is byte-for-byte unchanged; writes to the
// throwaway /tmp are measured and reported.
import { createHash } from "node:crypto";
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, type SandboxPolicyInput } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";

const here = dirname(fileURLToPath(import.meta.url));
const fsOps = readFileSync(join(here, "workloads", "fs_ops.py"), "utf8");
const OTHER_UID = 4242;

/** Names, types, modes, owners, sizes, link targets and contents of a tree, as seen from the host. */
function treeHash(root: string): string {
  const h = createHash("sha256");
  const walk = (rel: string) => {
    const p = join(root, rel);
    const st = lstatSync(p);
    h.update(`${rel}\0${st.mode}\0${st.uid}\0${st.gid}\0${st.size}\0${st.mtimeMs}\0`);
    if (st.isSymbolicLink()) h.update(readlinkSync(p));
    else if (st.isFile()) h.update(readFileSync(p));
    else if (st.isDirectory()) for (const e of readdirSync(p).sort()) walk(join(rel, e));
  };
  walk(".");
  return h.digest("hex");
}

/** A workspace as earlier exclusive jobs leave it: a file, and a 0777 sub-directory owned by another uid. */
function seededWorkdir(): string {
  const wd = makeWorkdir();
  writeFileSync(join(wd, "a.txt"), "original\n");
  chmodSync(join(wd, "a.txt"), 0o666); // writable by any uid: only the mount stands in the way
  mkdirSync(join(wd, "shared"));
  writeFileSync(join(wd, "shared", "s.txt"), "shared original\n");
  chmodSync(join(wd, "shared", "s.txt"), 0o666);
  chownSync(join(wd, "shared", "s.txt"), OTHER_UID, OTHER_UID);
  chownSync(join(wd, "shared"), OTHER_UID, OTHER_UID);
  chmodSync(join(wd, "shared"), 0o777);
  return wd;
}

const writeOps = [
  "append:/work/a.txt", "trunc:/work/a.txt", "create:/work/new.txt", "mkdir:/work/newdir", "rename:/work/a.txt:/work/b.txt",
  "chmod:/work/a.txt", "utime:/work/a.txt", "symlink:/work/ln", "link:/work/a.txt:/work/a2.txt", "unlink:/work/a.txt",
  "rmdir:/work/shared", "mkfifo:/work/fifo",
  "append:/work/shared/s.txt", "create:/work/shared/new.txt", "mkdir:/work/shared/d", "rename:/work/shared/s.txt:/work/shared/t.txt",
  "chmod:/work/shared/s.txt", "utime:/work/shared/s.txt", "unlink:/work/shared/s.txt",
];

const run = (wd: string, argv: string[], extra: Partial<SandboxPolicyInput> = {}) =>
  launch({ ...basePolicy(wd), argv, ...extra });

const wds: string[] = [];
beforeAll(() => setupNative());
afterAll(() => wds.forEach(removeWorkdir));
const fresh = (): string => { const d = seededWorkdir(); wds.push(d); return d; };

describe("observe lease (workdir_access \"ro\")", () => {
  it("every write into the workspace and its 0777 sub-directory of another uid is EROFS; the tree is unchanged", async () => {
    const wd = fresh();
    const before = treeHash(wd);
    const r = await run(wd, ["/usr/bin/python3", "-c", fsOps, ...writeOps], { workdir_access: "ro" });
    expect(r.exit.code).toBe(0);
    const lines = r.stdout.toString().trim().split("\n");
    expect(lines).toHaveLength(writeOps.length);
    for (const l of lines) expect(l).toMatch(/ EROFS$/);
    expect(treeHash(wd)).toBe(before);
  });
  it("the workspace is still readable", async () => {
    const wd = fresh();
    const r = await run(wd, ["/bin/cat", "/work/a.txt", "/work/shared/s.txt"], { workdir_access: "ro" });
    expect(r.stdout.toString()).toBe("original\nshared original\n");
  });
  it("an \"rw\" lease (the default) still writes, also into the 0777 sub-directory", async () => {
    const wd = fresh();
    const r = await run(wd, ["/usr/bin/python3", "-c", fsOps, "create:/work/new.txt", "create:/work/shared/new.txt", "rename:/work/a.txt:/work/b.txt"]);
    expect(r.stdout.toString().trim().split("\n").every((l) => l.endsWith(" OK"))).toBe(true);
    expect(readdirSync(wd).sort()).toEqual(["b.txt", "new.txt", "shared"]);
  });
  it("throwaway writes: `touch /tmp/x` in an ro lease is reported (tmp_inodes > 0), a lease writing nothing reports 0", async () => {
    const wd = fresh();
    const touched = await run(wd, ["/bin/sh", "-c", "touch /tmp/x && head -c 10000 /dev/zero > /tmp/y"], { workdir_access: "ro" });
    expect(touched.exit.code).toBe(0);
    expect(touched.throwaway_writes).not.toBeNull();
    expect(touched.throwaway_writes!.tmp_inodes).toBe(2);
    expect(touched.throwaway_writes!.tmp_bytes).toBeGreaterThanOrEqual(10000);
    const idle = await run(wd, ["/bin/true"], { workdir_access: "ro" });
    expect(idle.throwaway_writes).toEqual({ tmp_bytes: 0, tmp_inodes: 0 });
  });
  it("a workload killed at its deadline has throwaway_writes null and says so under limitations", async () => {
    const wd = fresh();
    const r = await run(wd, ["/bin/sh", "-c", "touch /tmp/x; sleep 20"], { timeout_ms: 500 });
    expect(r.exit.timed_out).toBe(true);
    expect(r.throwaway_writes).toBeNull();
    expect(r.limitations.some((l) => /throwaway/.test(l))).toBe(true);
  });
  it("workdir_access accepts only \"rw\" and \"ro\"", async () => {
    await expect(run(fresh(), ["/bin/true"], { workdir_access: "none" as never })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});
