import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { LeaseholdError } from "../../server/trust";
import { openTrustedDir as openTrustedDirectory } from "./trusted-dir";

/**
 * The workspace's own file system: what bounds it ("bounded
 * workspace"). Tier: kernel — the size and inode limits are those of an ext4
 * file system in a sparse image file, mounted through a loop device, so a
 * workload that fills it gets ENOSPC from the kernel and the host file system
 * (and the hub's data directory on it) loses at most the image's size.
 *
 * Life cycle (the daemon calls mountWorkspace at start, before any job, and
 * unmountWorkspace at stop):
 *   1 tools and loop support present (mkfs.ext4, e2fsck, resize2fs from
 *     e2fsprogs; mount, umount; /dev/loop-control) — otherwise UNENFORCEABLE
 *     with the reason: the guest runs no job without its bounded workspace;
 *   2 the workspace_root's ancestors contain no symlink and none is writable
 *     by others without the sticky bit; its parent is root-owned and writable
 *     by root only (so no other user can swap the mount point while root acts
 *     on it) — otherwise CONFIG_INVALID;
 *   3 the image `<stateDir>/workspace.img` (root-only 0700 state dir; opened
 *     O_NOFOLLOW, must be a root-owned regular file with one link) is created
 *     sparse and `mkfs.ext4 -q -m 0 -N <inodes>`'ed on first start;
 *   4 if workspace_root is already a mount of this image with nosuid,nodev
 *     (a guest that was killed before it could unmount), it is reused; a
 *     mount of anything else, or a non-empty directory that is not our mount,
 *     is refused with one line (CONFIG_INVALID; nothing is touched);
 *   5 `mount -o loop,nosuid,nodev`: loop's autoclear detaches the loop device
 *     when the file system is unmounted. nosuid,nodev: a setuid file or a
 *     device node made inside a lease is inert on the host too;
 *   6 on a fresh file system, lost+found is removed and the root is 0755
 *     root:root; the mounted root's device must be the loop device.
 * At stop: a lazy unmount of the mount we hold (see unmountWorkspace); the
 * loop device goes with the last reference.
 *
 * The descriptor rule: root hands the image and the mount point to mkfs,
 * e2fsck, resize2fs and mount as `/proc/self/fd/N` of descriptors it opened
 * with O_NOFOLLOW (never a path a workload could have swapped), with
 * `--no-canonicalize` so mount does not turn them back into path strings.
 *
 * Changed limits (the ceiling's workspace_max_bytes / workspace_max_inodes),
 * kept in `<stateDir>/workspace.json`:
 *   - bytes grown: done at start, offline (ftruncate, e2fsck -f -y,
 *     resize2fs); ext4 allocates inodes per block group, so the inode limit
 *     grows in the same proportion (the new figure is logged and stored);
 *     refused if the old mount is still there (unmount it first);
 *   - bytes shrunk, or inodes changed: refused (CONFIG_INVALID) with what to
 *     do — ext4 fixes the inode count at mkfs, and shrinking could lose data.
 */

export interface WorkspaceVolumeSpec {
  /** The ceiling's workspace_root: where the file system is mounted. */
  root: string;
  /** The guest's root-only state directory: holds the image and its limits. */
  stateDir: string;
  maxBytes: number;
  maxInodes: number;
}

export interface WorkspaceVolumeOptions {
  /** Directories searched for the tools, in order (absolute; never PATH). Test seam. */
  toolDirs?: readonly string[];
  log?: (line: string) => void;
}

export interface MountedWorkspace {
  root: string;
  image: string;
  /** /dev/loopN */
  device: string;
  /** True when an existing mount of this image was kept. */
  reused: boolean;
  /** What the kernel reports for the mounted file system. */
  bytes: number;
  inodes: number;
  /** Milliseconds spent in mkfs (0 when the image existed) and in mount (0 when reused). */
  timing: { mkfs_ms: number; mount_ms: number };
}

export const IMAGE_NAME = "workspace.img";
export const LIMITS_NAME = "workspace.json";
const DEFAULT_TOOL_DIRS = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];
const C = fs.constants;
const O_DIR = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
const MIN_BYTES = 4 * 1024 * 1024;

function unenforceable(message: string): never {
  throw new LeaseholdError("UNENFORCEABLE", `bounded workspace (kernel): ${message}; the guest runs no job without it`, { tier: "kernel" });
}

function configInvalid(message: string): never {
  throw new LeaseholdError("CONFIG_INVALID", `bounded workspace: ${message}`, { tier: "guest" });
}

const fdPath = (fd: number, name?: string) => (name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`);

function closeQuietly(fd: number | undefined): void {
  if (fd === undefined || fd < 0) return;
  try {
    fs.closeSync(fd);
  } catch {
    /* closed */
  }
}

function findTool(name: string, dirs: readonly string[]): string {
  for (const dir of dirs) {
    const p = path.join(dir, name);
    try {
      const st = fs.statSync(p);
      if (st.isFile() && (st.mode & 0o111) !== 0) return p;
    } catch {
      /* next */
    }
  }
  return unenforceable(`${name} is missing (looked in ${dirs.join(", ")}); install it: apt-get install -y ${name === "mount" || name === "umount" ? "mount" : "e2fsprogs"}`);
}

interface Tools {
  mkfs: string;
  e2fsck: string;
  resize2fs: string;
  mount: string;
  umount: string;
}

function tools(dirs: readonly string[]): Tools {
  const t = { mkfs: findTool("mkfs.ext4", dirs), e2fsck: findTool("e2fsck", dirs), resize2fs: findTool("resize2fs", dirs), mount: findTool("mount", dirs), umount: findTool("umount", dirs) };
  let loopControl: fs.Stats | undefined;
  try {
    loopControl = fs.statSync("/dev/loop-control");
  } catch {
    /* absent */
  }
  if (loopControl === undefined || !loopControl.isCharacterDevice()) unenforceable("this machine has no loop device support (/dev/loop-control is missing; load the loop module)");
  return t;
}

/**
 * Runs a tool with `fds` as its descriptors 3, 4, ... (so it can be given
 * /proc/self/fd/3 instead of a path). Returns stdout; throws with its stderr.
 */
function run(tool: string, args: string[], fds: number[] = [], okCodes: number[] = [0]): string {
  const r = spawnSync(tool, args, { stdio: ["ignore", "pipe", "pipe", ...fds], encoding: "utf8", env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL: "C" } as unknown as NodeJS.ProcessEnv, timeout: 120_000 });
  if (r.error) throw r.error;
  if (r.status === null || !okCodes.includes(r.status)) {
    throw new Error(`${path.basename(tool)} ${args.join(" ")} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout).trim().split("\n").slice(-2).join(" ")}`);
  }
  return r.stdout;
}

/**
 * Opens `dir` through the trusted walk (trusted-dir.ts). Returns the fd
 * (caller closes), or null when the last component is missing.
 */
function openTrustedDir(dir: string, what: string): number | null {
  // The configured spelling may carry a trailing "/": the walk wants the normalised path.
  const opened = openTrustedDirectory(path.posix.resolve(dir));
  if (opened.ok) return opened.fd;
  const p = opened.problem;
  switch (p.kind) {
    case "not_absolute":
      return configInvalid(`${what} ${dir} must be a normalised absolute path`);
    case "world_writable":
      return configInvalid(`${what} ${dir}: ${p.ancestor} is writable by every user without the sticky bit; another user could swap ${p.at}`);
    case "symlink":
      return configInvalid(`${what} ${dir}: ${p.at} is a symlink; configure the real path`);
    case "not_directory":
      return configInvalid(`${what} ${dir}: ${p.at} is not a directory`);
    case "missing":
      return p.last ? null : configInvalid(`${what} ${dir}: ${p.at} does not exist`);
  }
}

interface MountEntry {
  mountPoint: string;
  fstype: string;
  source: string;
  options: string[];
}

const unescapeMount = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/** The top-most mount at `target` in this process's mount namespace, or null. */
export function mountAt(target: string): MountEntry | null {
  let top: MountEntry | null = null;
  for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const f = line.split(" ");
    const dash = f.indexOf("-");
    if (dash < 6) continue;
    if (unescapeMount(f[4]!) !== target) continue;
    top = { mountPoint: target, fstype: f[dash + 1]!, source: unescapeMount(f[dash + 2]!), options: f[5]!.split(",") };
  }
  return top;
}

function loopBackingFile(device: string): string | null {
  const m = /^\/dev\/(loop\d+)$/.exec(device);
  if (m === null) return null;
  try {
    return fs.readFileSync(`/sys/block/${m[1]}/loop/backing_file`, "utf8").trim();
  } catch {
    return null;
  }
}

interface StoredLimits {
  version: 1;
  max_bytes: number;
  max_inodes: number;
}

function readLimits(stateFd: number): StoredLimits | null {
  let fd: number;
  try {
    fd = fs.openSync(fdPath(stateFd, LIMITS_NAME), C.O_RDONLY | C.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
  try {
    return JSON.parse(fs.readFileSync(fd, "utf8")) as StoredLimits;
  } finally {
    fs.closeSync(fd);
  }
}

function writeLimits(stateFd: number, limits: StoredLimits): void {
  const temp = `${LIMITS_NAME}.${process.pid}.tmp`;
  const fd = fs.openSync(fdPath(stateFd, temp), C.O_WRONLY | C.O_CREAT | C.O_TRUNC | C.O_NOFOLLOW, 0o600);
  try {
    fs.writeSync(fd, `${JSON.stringify(limits)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(fdPath(stateFd, temp), fdPath(stateFd, LIMITS_NAME));
  fs.fsyncSync(stateFd);
}

/** Opens (creating when absent) the image file inside the held state dir: a root-owned regular file with one link. */
function openImage(stateFd: number, image: string): { fd: number; fresh: boolean } {
  let fresh = false;
  let fd: number;
  try {
    fd = fs.openSync(fdPath(stateFd, IMAGE_NAME), C.O_RDWR | C.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ELOOP") configInvalid(`${image} is a symlink`);
    if (code !== "ENOENT") throw e;
    fd = fs.openSync(fdPath(stateFd, IMAGE_NAME), C.O_RDWR | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
    fresh = true;
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile() || st.uid !== 0 || st.nlink !== 1 || (st.mode & 0o077) !== 0) {
    fs.closeSync(fd);
    configInvalid(`${image} must be a root-owned regular file, mode 0600, with one link`);
  }
  if (!fresh && st.size === 0) fresh = true;
  return { fd, fresh };
}

function fsInodes(rootFd: number): { bytes: number; inodes: number } {
  const s = fs.statfsSync(fdPath(rootFd));
  return { bytes: s.blocks * s.bsize, inodes: s.files };
}

/** Not mounted: an empty directory (or none, which is made) only — never hide files under a mount. */
function emptyMountPoint(parentFd: number, name: string, root: string, parentDev: number): void {
  let underFd: number | null;
  try {
    underFd = fs.openSync(fdPath(parentFd, name), O_DIR);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ELOOP") configInvalid(`workspace_root ${root} is a symlink; configure the real path`);
    if (code === "ENOTDIR") configInvalid(`workspace_root ${root} is not a directory`);
    if (code !== "ENOENT") throw e;
    underFd = null;
  }
  if (underFd === null) {
    fs.mkdirSync(fdPath(parentFd, name), 0o755);
    underFd = fs.openSync(fdPath(parentFd, name), O_DIR);
  }
  try {
    const entries = fs.readdirSync(fdPath(underFd));
    if (entries.length > 0) {
      configInvalid(`workspace_root ${root} is not empty (${entries.length} entries) and is not this guest's workspace mount; nothing was changed: move its contents out, start the guest (it mounts an empty bounded workspace there) and copy them back in, or set another workspace_root`);
    }
    if (fs.fstatSync(underFd).dev !== parentDev) configInvalid(`workspace_root ${root} is a mount point that /proc/self/mountinfo does not show`);
  } finally {
    fs.closeSync(underFd);
  }
}

/**
 * Makes the image when there are no stored limits (a sparse file, mkfs), grows it when the size
 * went up (e2fsck, resize2fs), and refuses a shrink or an inode change; nothing else is touched.
 */
function prepareImage(
  imageFd: number,
  stored: StoredLimits | null,
  spec: WorkspaceVolumeSpec,
  t: Tools,
  image: string,
  stateDir: string,
  log: (line: string) => void,
): { mkfsMs: number; formatted: boolean } {
  let mkfsMs = 0;
  let formatted = false;
  if (stored === null) {
    const started = performance.now();
    fs.ftruncateSync(imageFd, 0);
    fs.ftruncateSync(imageFd, spec.maxBytes);
    // lazy_journal_init/lazy_itable_init: the image was just truncated to a sparse file, whose holes
    // read as zeros already, so zeroing the journal (tens of MiB per GiB) would only cost disk and time.
    run(t.mkfs, ["-q", "-F", "-m", "0", "-N", String(spec.maxInodes), "-L", "leasehold-ws", "-E", "root_owner=0:0,lazy_itable_init=1,lazy_journal_init=1", "/proc/self/fd/3"], [imageFd]);
    mkfsMs = performance.now() - started;
    formatted = true;
  } else if (stored.max_inodes !== spec.maxInodes) {
    configInvalid(`workspace_max_inodes changed from ${stored.max_inodes} to ${spec.maxInodes}; ext4 fixes the inode count when the image is made: to apply it, stop the guest, copy the workspace out, delete ${image} and ${path.join(stateDir, LIMITS_NAME)}, start the guest and copy the content back (or keep ${stored.max_inodes})`);
  } else if (spec.maxBytes < stored.max_bytes) {
    configInvalid(`workspace_max_bytes shrank from ${stored.max_bytes} to ${spec.maxBytes}; shrinking is refused (it could lose data): keep ${stored.max_bytes}, or stop the guest, copy the workspace out, delete ${image} and ${path.join(stateDir, LIMITS_NAME)}, and start again`);
  } else if (spec.maxBytes > stored.max_bytes) {
    const started = performance.now();
    fs.ftruncateSync(imageFd, spec.maxBytes);
    // -y, not -p: the file system's content is a workload's, and a workload can make what preen
    // mode stops at (a lost+found that is a symlink): a grow must not keep the guest from starting.
    run(t.e2fsck, ["-f", "-y", "/proc/self/fd/3"], [imageFd], [0, 1]);
    run(t.resize2fs, ["/proc/self/fd/3"], [imageFd]);
    mkfsMs = performance.now() - started;
    formatted = true;
    log(`workspace image ${image} grown from ${stored.max_bytes} to ${spec.maxBytes} bytes (resize2fs)`);
  }
  return { mkfsMs, formatted };
}

/**
 * A fresh or just-checked file system: lost+found is no part of a workspace, and
 * the root is root's 0755 (a lease gets it only through the launcher's chown).
 * rmdir never follows a symlink and removes only an empty directory: an entry of
 * that name a workload made (a symlink, a directory with its files) stays its own.
 */
function tidyFreshRoot(rootFd: number): void {
  try {
    fs.rmdirSync(fdPath(rootFd, "lost+found"));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR" && code !== "ENOTEMPTY") throw e;
  }
  fs.fchownSync(rootFd, 0, 0);
  fs.fchmodSync(rootFd, 0o755);
}

/**
 * Mounts (or reuses) the bounded workspace. Throws UNENFORCEABLE when this
 * machine cannot bound it, CONFIG_INVALID when the configuration or what is
 * at workspace_root forbids it (nothing is changed then).
 */
export function mountWorkspace(spec: WorkspaceVolumeSpec, options: WorkspaceVolumeOptions = {}): MountedWorkspace {
  const { root, stateDir } = spec;
  if (!path.isAbsolute(root) || path.posix.normalize(root) !== root || root === "/") configInvalid(`workspace_root ${root} must be a normalised absolute path other than /`);
  if (!Number.isSafeInteger(spec.maxBytes) || spec.maxBytes < MIN_BYTES) configInvalid(`workspace_max_bytes must be at least ${MIN_BYTES}`);
  if (!Number.isSafeInteger(spec.maxInodes) || spec.maxInodes < 16) configInvalid("workspace_max_inodes must be at least 16");
  const t = tools(options.toolDirs ?? DEFAULT_TOOL_DIRS);
  const log = options.log ?? (() => undefined);
  const image = path.join(stateDir, IMAGE_NAME);

  const stateFd = openTrustedDir(stateDir, "guest state dir");
  if (stateFd === null) configInvalid(`guest state dir ${stateDir} does not exist`);
  let parentFd: number | null = null;
  let rootFd: number | null = null;
  let imageFd: number | undefined;
  try {
    const state = fs.fstatSync(stateFd);
    if (state.uid !== 0 || (state.mode & 0o077) !== 0) configInvalid(`guest state dir ${stateDir} must be owned by root with mode 0700`);
    parentFd = openTrustedDir(path.dirname(root), "workspace_root's parent");
    if (parentFd === null) configInvalid(`workspace_root's parent ${path.dirname(root)} does not exist`);
    const parent = fs.fstatSync(parentFd);
    if (parent.uid !== 0 || (parent.mode & 0o022) !== 0) {
      configInvalid(`workspace_root's parent ${path.dirname(root)} must be owned by root and writable by root only (it is uid ${parent.uid}, mode ${(parent.mode & 0o7777).toString(8)}): another user could swap the mount point`);
    }
    const name = path.basename(root);
    const opened = openImage(stateFd, image);
    imageFd = opened.fd;
    // Limits are kept beside the image; a fresh image ignores stale ones.
    const stored = opened.fresh ? null : readLimits(stateFd);
    if (!opened.fresh && stored === null) {
      configInvalid(`${image} exists but ${path.join(stateDir, LIMITS_NAME)} (the limits it was made with) is missing; nothing was changed: restore it, or stop the guest, copy the workspace content out of the image, delete ${image} and start again`);
    }
    const existing = mountAt(root);

    if (existing !== null) {
      const ours = existing.fstype === "ext4" && loopBackingFile(existing.source) === image;
      if (!ours) configInvalid(`workspace_root ${root} is already a mount of ${existing.source} (${existing.fstype}), not this guest's workspace image ${image}; nothing was changed: unmount it (umount ${root}) or set another workspace_root`);
      if (!existing.options.includes("nosuid") || !existing.options.includes("nodev")) {
        configInvalid(`workspace_root ${root} is this guest's image but mounted without nosuid,nodev; unmount it (umount ${root}) and start the guest again`);
      }
      if (stored === null || stored.max_bytes !== spec.maxBytes || stored.max_inodes !== spec.maxInodes) {
        configInvalid(`workspace limits changed (${stored ? `${stored.max_bytes} bytes, ${stored.max_inodes} inodes` : "unknown"} → ${spec.maxBytes} bytes, ${spec.maxInodes} inodes) while ${root} is still mounted from a previous run; unmount it (umount ${root}) and start the guest again`);
      }
      rootFd = fs.openSync(fdPath(parentFd, name), O_DIR);
      const mounted = { root, image, device: existing.source, reused: true, ...fsInodes(rootFd), timing: { mkfs_ms: 0, mount_ms: 0 } };
      log(`workspace ${root}: reusing the mount of ${image} on ${existing.source} (${mounted.bytes} bytes, ${mounted.inodes} inodes)`);
      return mounted;
    }

    emptyMountPoint(parentFd, name, root, parent.dev);
    const { mkfsMs, formatted } = prepareImage(imageFd, stored, spec, t, image, stateDir, log);
    if (formatted) writeLimits(stateFd, { version: 1, max_bytes: spec.maxBytes, max_inodes: spec.maxInodes });

    const started = performance.now();
    const underFd = fs.openSync(fdPath(parentFd, name), O_DIR);
    try {
      run(t.mount, ["--no-canonicalize", "-t", "ext4", "-o", "loop,nosuid,nodev", "/proc/self/fd/3", "/proc/self/fd/4"], [imageFd, underFd]);
    } catch (e) {
      unenforceable(`mounting ${image} at ${root} failed: ${(e as Error).message}`);
    } finally {
      fs.closeSync(underFd);
    }
    const mountMs = performance.now() - started;
    const entry = mountAt(root);
    if (entry === null || entry.fstype !== "ext4" || loopBackingFile(entry.source) !== image) unenforceable(`after mounting, ${root} does not show ${image}`);
    rootFd = fs.openSync(fdPath(parentFd, name), O_DIR);
    const device = fs.statSync(entry.source);
    if (fs.fstatSync(rootFd).dev !== device.rdev) unenforceable(`after mounting, ${root} is not on ${entry.source}`);
    if (formatted) tidyFreshRoot(rootFd);
    const size = fsInodes(rootFd);
    const mounted: MountedWorkspace = { root, image, device: entry.source, reused: false, ...size, timing: { mkfs_ms: Math.round(mkfsMs), mount_ms: Math.round(mountMs) } };
    log(`workspace ${root}: ${image} on ${entry.source}, nosuid,nodev, ${size.bytes} bytes, ${size.inodes} inodes (mkfs ${mounted.timing.mkfs_ms} ms, mount ${mounted.timing.mount_ms} ms)`);
    return mounted;
  } finally {
    closeQuietly(rootFd ?? undefined);
    closeQuietly(imageFd);
    closeQuietly(parentFd ?? undefined);
    closeQuietly(stateFd);
  }
}

/**
 * Unmounts the workspace if it is still this image's mount. Lazy (MNT_DETACH)
 * on a descriptor of the mounted root: the mount point is never looked up by
 * path again, and the descriptor itself would make a plain unmount "busy".
 * The file system (and, through loop's autoclear, the loop device) is
 * released when its last user is gone — at once when no job runs, which the
 * daemon ensures by stopping its jobs first. Returns false when there was
 * nothing of ours to unmount.
 */
export function unmountWorkspace(mounted: Pick<MountedWorkspace, "root" | "image">, options: WorkspaceVolumeOptions = {}): boolean {
  const umount = findTool("umount", options.toolDirs ?? DEFAULT_TOOL_DIRS);
  const entry = mountAt(mounted.root);
  if (entry === null || loopBackingFile(entry.source) !== mounted.image) return false;
  const parentFd = openTrustedDir(path.dirname(mounted.root), "workspace_root's parent");
  if (parentFd === null) return false;
  let rootFd: number | undefined;
  try {
    rootFd = fs.openSync(fdPath(parentFd, path.basename(mounted.root)), O_DIR);
    if (fs.fstatSync(rootFd).dev !== fs.statSync(entry.source).rdev) return false;
    run(umount, ["-l", "--no-canonicalize", "/proc/self/fd/3"], [rootFd]);
    return true;
  } finally {
    closeQuietly(rootFd);
    closeQuietly(parentFd);
  }
}
