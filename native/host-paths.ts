/**
 * Host paths (native/README.md "Host paths"): whether this kernel and the
 * file system holding a directory take the idmapped bind an "rw" host path
 * needs, asked of the helper itself so the probe runs the very code a
 * launch runs (openat2 without symlinks, a detached open_tree clone,
 * mount_setattr with MOUNT_ATTR_IDMAP), attaching nothing.
 */
import { spawnSync } from "node:child_process";
import { HELPER_PATH } from "./addon";

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
