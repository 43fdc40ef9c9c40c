/**
 * Host paths (native/README.md "Host paths"): whether this kernel and the
 * file system holding a directory take the idmapped bind an "rw" host path
 * needs, asked of the helper itself so the probe runs the very code a
 * launch runs (openat2 without symlinks, a detached open_tree clone,
 * mount_setattr with MOUNT_ATTR_IDMAP), attaching nothing.
 */
import { spawnSync } from "node:child_process";
import { errnoName, HELPER_PATH, loadAddon } from "./addon";

export type IdmapProbe = { ok: true } | { ok: false; reason: string };

/** `dir`: an absolute directory. Needs root (the helper refuses otherwise). */
export function probeIdmappedMount(dir: string): IdmapProbe {
  const r = spawnSync(HELPER_PATH, ["--probe-idmap", dir], { encoding: "utf8", env: {} as NodeJS.ProcessEnv, timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] });
  if (r.error !== undefined) return { ok: false, reason: `the helper did not run: ${r.error.message}` };
  const out = r.stdout.trim();
  if (r.status === 0 && out === "ok") return { ok: true };
  const m = /^E (\S+) (\d+) (.*)$/m.exec(out);
  return { ok: false, reason: m ? `${m[3]} (errno ${m[2]} at ${m[1]})` : `probe exited ${r.status ?? r.signal}: ${out || r.stderr.trim()}` };
}

export type ExchangeResult = { ok: true } | { ok: false; errno: string };

/**
 * Swaps two entries of the directory held by `dirFd` in one step
 * (renameat2 RENAME_EXCHANGE): a restore builds a tree beside the label and
 * swaps it in, so a crash leaves the old tree or the new one, never a mix.
 * `a` and `b` are single names inside that directory; EXDEV when either is a
 * mount point, ENOENT when one is missing, EINVAL for a name with "/".
 */
export function renameExchangeAt(dirFd: number, a: string, b: string): ExchangeResult {
  const errno = loadAddon().renameExchangeAt(dirFd, a, b);
  return errno === 0 ? { ok: true } : { ok: false, errno: errnoName(errno) };
}
