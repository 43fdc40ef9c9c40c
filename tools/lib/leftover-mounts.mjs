// Workspace images a test run left mounted (a guest killed before it could
// unmount): found after the run, unmounted lazily, and named, so a leak shows
// in the log instead of piling up loop devices on the machine.
// Only node builtins: runs from tools/test.mjs.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Mount points under `roots` whose source is a loop device backed by a `workspace.img`. */
export function leftoverWorkspaceMounts(roots) {
  const found = [];
  for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [pre, post] = line.split(" - ");
    if (!pre || !post) continue;
    const target = (pre.split(" ")[4] ?? "").replace(/\\040/g, " ");
    const source = post.split(" ")[1] ?? "";
    const loop = /^\/dev\/(loop\d+)$/.exec(source);
    if (!loop || !roots.some((r) => target === r || target.startsWith(`${r}/`))) continue;
    let backing = "";
    try { backing = fs.readFileSync(`/sys/block/${loop[1]}/loop/backing_file`, "utf8").trim(); } catch { /* detached */ }
    if (path.basename(backing.replace(/ \(deleted\)$/, "")) === "workspace.img") found.push(target);
  }
  return found;
}

/**
 * Returns a function that, called after the run, unmounts the workspace
 * images under the checkout or the temporary directory that appeared since
 * this call and are still mounted (those present before belong to someone
 * else: a hub the developer is running).
 */
export function watchForLeftoverWorkspaces(root) {
  const roots = [root, os.tmpdir()];
  const before = new Set(leftoverWorkspaceMounts(roots));
  return () => {
    const left = leftoverWorkspaceMounts(roots).filter((t) => !before.has(t));
    for (const target of left) {
      const r = spawnSync("umount", ["-l", target], { encoding: "utf8" });
      console.log(`[cleanup] a test left the workspace image at ${target} mounted; ${r.status === 0 ? "unmounted it" : `umount failed: ${r.stderr.trim()}`}`);
    }
    return left.length;
  };
}
