import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildNative } from "../../native/build.mjs";
import { launch, type SandboxPolicyInput } from "../../native/index";
import { thrownBy } from "../../test/support/refusals";
import { IMAGE_NAME, mountAt, mountWorkspace, unmountWorkspace, type MountedWorkspace } from "./index";

/**
 * The bounded workspace: an ext4 image on a loop device, mounted
 * nosuid,nodev at workspace_root. With a small limit (8 MiB, 256 inodes) a
 * real sandbox launch that fills it gets ENOSPC from the kernel for bytes and
 * for inodes, while the host file system loses at most the image's size and
 * the "hub data" beside it is untouched. Then the life cycle: reuse of our
 * own mount, refusal of a foreign mount / a non-empty directory / a parent
 * others can write, growth by resize2fs, refusal of a shrink or an inode
 * change, a missing mkfs.ext4 is UNENFORCEABLE, and unmount leaves no mount
 * and no loop device. Needs root (mount, loop devices, the sandbox).
 */

const MiB = 1024 * 1024;
const LIMIT_BYTES = 8 * MiB;
const LIMIT_INODES = 256;
/** What the fill tries to write: far above the limit, bounded so an unbounded workspace fails the test instead of filling the host. */
const FILL_ATTEMPT_MIB = 64;

let dataDir: string;
let stateDir: string;
let ws: string;
let hubFile: string;
let mounted: MountedWorkspace | undefined;

const spec = () => ({ root: ws, stateDir, maxBytes: LIMIT_BYTES, maxInodes: LIMIT_INODES });
/**
 * Bytes allocated under `dir` on its own file system (`du -x` does not enter
 * the mounted image): where a fill that missed the mount would land. The
 * disk's free space is no measure here, as other processes (the browser
 * tests' hub beside this file) write to the same disk meanwhile.
 */
const hostBytesUnder = (dir: string) => Number(execFileSync("du", ["-sx", "--block-size=1", dir], { encoding: "utf8" }).split("\t")[0]);
const freeBytes = (p: string) => {
  const s = fs.statfsSync(p);
  return s.bavail * s.bsize;
};
const sha = (p: string) => createHash("sha256").update(fs.readFileSync(p)).digest("hex");
const loopsOf = (image: string) => execFileSync("losetup", ["-a"], { encoding: "utf8" }).split("\n").filter((l) => l.includes(image));

const policy = (argv: string[]): SandboxPolicyInput => ({
  argv,
  workdir: ws,
  memory_bytes: 128 << 20,
  cpus: 1,
  pids_max: 32,
  timeout_ms: 60_000,
  tmpfs_tmp_bytes: 8 << 20,
  env: { PATH: "/usr/bin:/bin" },
  exec_allow: ["/usr/bin", "/bin"],
});

describe.skipIf(process.getuid?.() !== 0)("bounded workspace: ext4 image on a loop device (needs root)", () => {
  beforeAll(() => {
    buildNative({ quiet: true });
  }, 120_000);

  // Each case gets its own data directory and image, so the cases pass alone and in any order.
  beforeEach(() => {
    // The local guest's layout: <data>/guest (state, 0700) and <data>/workspace, beside the hub's data.
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-volume-"));
    fs.chmodSync(dataDir, 0o755);
    stateDir = path.join(dataDir, "guest");
    fs.mkdirSync(stateDir, { mode: 0o700 });
    ws = path.join(dataDir, "workspace");
    fs.mkdirSync(ws, { mode: 0o755 });
    hubFile = path.join(dataDir, "hub.db");
    fs.writeFileSync(hubFile, "the hub's database\n");
    mounted = undefined;
  });

  afterEach(() => {
    if (mounted && mountAt(ws) !== null) unmountWorkspace(mounted);
    mounted = undefined;
    if (mountAt(ws) === null) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("mounts an ext4 image at workspace_root with nosuid,nodev, the asked inode count, no lost+found, root 0755", () => {
    mounted = mountWorkspace(spec());
    console.log(`volume: mkfs ${mounted.timing.mkfs_ms} ms, mount ${mounted.timing.mount_ms} ms; ${mounted.bytes} bytes, ${mounted.inodes} inodes on ${mounted.device}`);
    const entry = mountAt(ws);
    expect(entry?.fstype).toBe("ext4");
    expect(entry?.options).toEqual(expect.arrayContaining(["nosuid", "nodev"]));
    const options = execFileSync("findmnt", ["-no", "OPTIONS", ws], { encoding: "utf8" });
    expect(options).toMatch(/(^|,)nosuid(,|$)/);
    expect(options).toMatch(/(^|,)nodev(,|$)/);
    expect(mounted.inodes).toBe(LIMIT_INODES);
    expect(mounted.bytes).toBeLessThanOrEqual(LIMIT_BYTES);
    expect(fs.readdirSync(ws)).toEqual([]);
    const st = fs.statSync(ws);
    expect([st.uid, st.mode & 0o7777]).toEqual([0, 0o755]);
    const image = fs.statSync(path.join(stateDir, IMAGE_NAME));
    expect([image.uid, image.mode & 0o777, image.size]).toEqual([0, 0o600, LIMIT_BYTES]);
  });

  it("a sandboxed workload that fills it gets ENOSPC for bytes, then for inodes; the host loses at most the image's size and the hub's data is untouched", async () => {
    mounted = mountWorkspace(spec());
    const image = path.join(stateDir, IMAGE_NAME);
    const hubBefore = sha(hubFile);
    const hostFreeBefore = freeBytes(dataDir);
    const hostUsedBefore = hostBytesUnder(dataDir);

    const bytes = await launch(policy(["/bin/sh", "-c", `dd if=/dev/zero of=/work/fill bs=1M count=${FILL_ATTEMPT_MIB} 2>&1; echo "size=$(stat -c %s /work/fill)"`]));
    const out = bytes.stdout.toString();
    expect(out).toContain("No space left on device");
    const written = Number(/size=(\d+)/.exec(out)?.[1]);
    expect(written).toBeGreaterThan(LIMIT_BYTES / 2);
    expect(written).toBeLessThanOrEqual(LIMIT_BYTES);

    const inodes = await launch(policy(["/bin/sh", "-c", `rm -f /work/fill; i=0; while [ $i -lt 5000 ] && true > /work/f$i 2>/dev/null; do i=$((i+1)); done; echo "files=$i"; true > /work/one-more`]));
    const iout = inodes.stdout.toString() + inodes.stderr.toString();
    expect(iout).toContain("No space left on device");
    const files = Number(/files=(\d+)/.exec(iout)?.[1]);
    expect(files).toBeGreaterThan(LIMIT_INODES / 2);
    expect(files).toBeLessThan(LIMIT_INODES);

    const hostFreeAfter = freeBytes(dataDir);
    const hostUsedAfter = hostBytesUnder(dataDir);
    const imageAllocated = fs.statSync(image).blocks * 512;
    console.log(`volume fill: ${written} bytes written before ENOSPC (limit ${LIMIT_BYTES}); ${files} files before ENOSPC (limit ${LIMIT_INODES} inodes); host free ${hostFreeBefore} → ${hostFreeAfter} (drop ${hostFreeBefore - hostFreeAfter}, of which ${hostUsedAfter - hostUsedBefore} under the data directory); image allocates ${imageAllocated} bytes`);
    expect(imageAllocated).toBeLessThanOrEqual(LIMIT_BYTES);
    // The fill's 64 MiB never reaches the host's file system: under the data directory (the image's blocks included) it grows by at most the image's size.
    expect(hostUsedAfter - hostUsedBefore).toBeLessThan(LIMIT_BYTES + 16 * MiB);
    expect(sha(hubFile)).toBe(hubBefore);
    expect(fs.readdirSync(dataDir).sort()).toEqual(["guest", "hub.db", "workspace"]);
  }, 180_000);

  it("a setuid file made in a lease is inert on the host: the mount is nosuid", async () => {
    mounted = mountWorkspace(spec());
    await launch(policy(["/bin/sh", "-c", "cp /usr/bin/id /work/id-copy && chmod 6755 /work/id-copy"]));
    const copy = path.join(ws, "id-copy");
    const st = fs.statSync(copy);
    console.log(`volume setuid: the lease's copy is uid ${st.uid}, mode ${(st.mode & 0o7777).toString(8)} on the host`);
    expect(st.uid).not.toBe(65534);
    // Whatever bits the lease kept, another user executing it keeps its own euid on a nosuid mount
    // (on a suid mount a 6755 file owned by the lease uid would run as the lease uid).
    const euid = execFileSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", copy, "-u"], { encoding: "utf8" }).trim();
    expect(euid).toBe("65534");
    expect(mountAt(ws)?.options).toContain("nosuid");
  }, 60_000);

  it("a second start reuses its own mount (same device, nothing reformatted)", () => {
    mounted = mountWorkspace(spec());
    fs.writeFileSync(path.join(ws, "kept.txt"), "kept\n");
    const again = mountWorkspace(spec());
    expect(again.reused).toBe(true);
    expect(again.device).toBe(mounted!.device);
    expect(fs.readFileSync(path.join(ws, "kept.txt"), "utf8")).toBe("kept\n");
  });

  it("unmount leaves no mount and no loop device; the next start mounts the same content again", () => {
    mounted = mountWorkspace(spec());
    fs.writeFileSync(path.join(ws, "kept.txt"), "kept\n");
    expect(unmountWorkspace(mounted)).toBe(true);
    expect(mountAt(ws)).toBeNull();
    expect(loopsOf(path.join(stateDir, IMAGE_NAME))).toEqual([]);
    expect(fs.readdirSync(ws)).toEqual([]);
    mounted = mountWorkspace(spec());
    expect(mounted.reused).toBe(false);
    expect(mounted.timing.mkfs_ms).toBe(0);
    expect(fs.readFileSync(path.join(ws, "kept.txt"), "utf8")).toBe("kept\n");
  });

  it("growing workspace_max_bytes resizes the file system (offline, at start); shrinking it or changing the inode limit is refused and changes nothing", () => {
    mounted = mountWorkspace(spec());
    fs.writeFileSync(path.join(ws, "kept.txt"), "kept\n");
    expect(thrownBy(() => mountWorkspace({ ...spec(), maxBytes: 16 * MiB })).code).toBe("CONFIG_INVALID"); // still mounted: unmount first
    unmountWorkspace(mounted);
    mounted = mountWorkspace({ ...spec(), maxBytes: 16 * MiB });
    expect(mounted.bytes).toBeGreaterThan(LIMIT_BYTES);
    expect(fs.readFileSync(path.join(ws, "kept.txt"), "utf8")).toBe("kept\n");
    unmountWorkspace(mounted);
    const shrink = thrownBy(() => mountWorkspace({ ...spec(), maxBytes: LIMIT_BYTES }));
    expect(shrink.code).toBe("CONFIG_INVALID");
    expect(shrink.message).toContain("shrank");
    const inodes = thrownBy(() => mountWorkspace({ ...spec(), maxBytes: 16 * MiB, maxInodes: 512 }));
    expect(inodes.code).toBe("CONFIG_INVALID");
    expect(inodes.message).toContain("workspace_max_inodes changed");
    expect(mountAt(ws)).toBeNull();
    expect(fs.statSync(path.join(stateDir, IMAGE_NAME)).size).toBe(16 * MiB);
    mounted = mountWorkspace({ ...spec(), maxBytes: 16 * MiB });
    unmountWorkspace(mounted);
    mounted = undefined;
  });

  it("a lost+found a workload planted (a symlink to an outside directory, a directory with its files) does not stop a start that grows the image; nothing outside changes", () => {
    const outside = path.join(dataDir, "outside");
    fs.mkdirSync(outside, { mode: 0o755 });
    fs.writeFileSync(path.join(outside, "keep"), "root's\n");
    mounted = mountWorkspace(spec());
    fs.symlinkSync(outside, path.join(ws, "lost+found"));
    unmountWorkspace(mounted);
    mounted = mountWorkspace({ ...spec(), maxBytes: 16 * MiB });
    expect(mounted.bytes).toBeGreaterThan(LIMIT_BYTES);
    expect(fs.readdirSync(outside)).toEqual(["keep"]);
    expect(fs.readFileSync(path.join(outside, "keep"), "utf8")).toBe("root's\n");
    fs.rmSync(path.join(ws, "lost+found"), { recursive: true, force: true });
    fs.mkdirSync(path.join(ws, "lost+found"));
    fs.writeFileSync(path.join(ws, "lost+found", "mine"), "x");
    unmountWorkspace(mounted);
    mounted = mountWorkspace({ ...spec(), maxBytes: 24 * MiB });
    expect(fs.readdirSync(path.join(ws, "lost+found"))).toEqual(["mine"]);
    expect(fs.readdirSync(outside)).toEqual(["keep"]);
  });

  it("refuses, changing nothing: a non-empty directory that is not its mount, a foreign mount, a parent others can write, a missing mkfs.ext4 (UNENFORCEABLE)", () => {
    fs.writeFileSync(path.join(ws, "operator-file"), "x");
    const nonEmpty = thrownBy(() => mountWorkspace(spec()));
    expect(nonEmpty.code).toBe("CONFIG_INVALID");
    expect(nonEmpty.message).toContain("is not empty");
    expect(nonEmpty.message.split("\n")).toHaveLength(1);
    expect(mountAt(ws)).toBeNull();
    expect(fs.readFileSync(path.join(ws, "operator-file"), "utf8")).toBe("x");
    fs.unlinkSync(path.join(ws, "operator-file"));

    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "lh-foreign", ws]);
    try {
      const foreign = thrownBy(() => mountWorkspace(spec()));
      expect(foreign.code).toBe("CONFIG_INVALID");
      expect(foreign.message).toContain("not this guest's workspace image");
      expect(mountAt(ws)?.fstype).toBe("tmpfs");
    } finally {
      execFileSync("umount", [ws]);
    }

    // World-writable even with the sticky bit: another user could still make the mount point's name.
    fs.chmodSync(dataDir, 0o1777);
    try {
      const open = thrownBy(() => mountWorkspace(spec()));
      expect(open.code).toBe("CONFIG_INVALID");
      expect(open.message).toContain("writable by root only");
      expect(mountAt(ws)).toBeNull();
    } finally {
      fs.chmodSync(dataDir, 0o755);
    }

    const noTools = fs.mkdtempSync(path.join(os.tmpdir(), "lh-notools-"));
    try {
      const missing = thrownBy(() => mountWorkspace(spec(), { toolDirs: [noTools] }));
      expect(missing.code).toBe("UNENFORCEABLE");
      expect(missing.message).toContain("mkfs.ext4 is missing");
      expect(missing.message).toContain("apt-get install -y e2fsprogs");
    } finally {
      fs.rmSync(noTools, { recursive: true });
    }
    expect(mountAt(ws)).toBeNull();
  });
});
