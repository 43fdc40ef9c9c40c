import fs from "node:fs";

/**
 * The one way the guest (root) opens a host directory it will write into or
 * read for a job: from "/" one component at a time, each opened relative to
 * the descriptor of its parent with O_NOFOLLOW|O_DIRECTORY, so no component
 * can be a symlink; and no ancestor may be writable by every user without
 * the sticky bit, since another user could rename a component away and put
 * their own directory in its place between two steps of ours. The workspace
 * volume's mount point, the guest's state directory and every host path
 * label are opened through here. Callers turn a problem into their own
 * error (CONFIG_INVALID at start-up, POLICY_REFUSED for a job).
 */

const C = fs.constants;
const O_DIR = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
const fdPath = (fd: number, name: string) => `/proc/self/fd/${fd}/${name}`;

function isSymlink(dirFd: number, name: string): boolean {
  try {
    return fs.lstatSync(fdPath(dirFd, name)).isSymbolicLink();
  } catch {
    return false;
  }
}

export type TrustedDirProblem =
  | { kind: "not_absolute" }
  | { kind: "symlink"; at: string }
  | { kind: "not_directory"; at: string }
  | { kind: "missing"; at: string; last: boolean }
  | { kind: "world_writable"; at: string; ancestor: string };

export type TrustedDirResult = { ok: true; fd: number } | { ok: false; problem: TrustedDirProblem };

/** Opens `dir` (absolute, normalised, not "/"); the caller closes the descriptor. */
export function openTrustedDir(dir: string): TrustedDirResult {
  const parts = dir.split("/").slice(1);
  if (!dir.startsWith("/") || dir === "/" || parts.some((p) => p === "" || p === "." || p === "..")) return { ok: false, problem: { kind: "not_absolute" } };
  let fd = fs.openSync("/", O_DIR);
  try {
    for (const [i, name] of parts.entries()) {
      const at = "/" + parts.slice(0, i + 1).join("/");
      const parent = fs.fstatSync(fd);
      if ((parent.mode & 0o002) !== 0 && (parent.mode & 0o1000) === 0) {
        return { ok: false, problem: { kind: "world_writable", at, ancestor: "/" + parts.slice(0, i).join("/") } };
      }
      let next: number;
      try {
        next = fs.openSync(fdPath(fd, name), O_DIR);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ELOOP") return { ok: false, problem: { kind: "symlink", at } };
        // O_DIRECTORY|O_NOFOLLOW on a symlink fails ENOTDIR, not ELOOP: ask what the entry is.
        if (code === "ENOTDIR") return { ok: false, problem: { kind: isSymlink(fd, name) ? "symlink" : "not_directory", at } };
        if (code === "ENOENT") return { ok: false, problem: { kind: "missing", at, last: i === parts.length - 1 } };
        throw e;
      }
      fs.closeSync(fd);
      fd = next;
    }
    const opened = fd;
    fd = -1;
    return { ok: true, fd: opened };
  } finally {
    if (fd !== -1) fs.closeSync(fd);
  }
}
