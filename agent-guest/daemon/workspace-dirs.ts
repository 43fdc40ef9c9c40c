/**
 * The workspace's directories for the health report (`workspace_dirs`,
 * server/trust/protocol.ts): what lets the hub refuse a `cwd` that does not
 * exist before a person is asked (docs/design.md#prechecks).
 *
 * Walked breadth-first through the workspace's own checked listing
 * (`Workspace.list`: fd-relative, symlinks reported and never followed, no
 * mount point crossed), so a workload's tree cannot send the walk outside
 * the workspace. Only real directories with UTF-8 names are listed (a `cwd`
 * is a JSON string, and a symlinked component is refused as a cwd anyway).
 * Bounded: at most MAX_REPORTED_WORKSPACE_DIRS directories and WALK_BUDGET
 * entries read; beyond either, or on any listing error, the report says
 * `complete: false` and the hub decides nothing from it.
 */
import { MAX_REPORTED_WORKSPACE_DIRS, type WorkspaceDirsReport } from "../../server/trust";
import { GUEST_JOBS_DIR, Workspace } from "../workspace";

/** Directory entries read at most per report (a health report every 30 s must stay cheap). */
const WALK_BUDGET = 50_000;
const PAGE = 200;

export function listWorkspaceDirs(root: string, afterJob: string | null): WorkspaceDirsReport {
  const dirs: string[] = [];
  let complete = true;
  try {
    const ws = Workspace.open(root);
    const queue: string[] = [""];
    let read = 0;
    walk: while (queue.length > 0) {
      const dir = queue.shift() as string;
      for (let offset = 0; ; offset += PAGE) {
        const page = ws.list(dir === "" ? "." : dir, { offset, limit: PAGE });
        read += page.entries.length;
        for (const entry of page.entries) {
          if (entry.type !== "directory" || entry.name_encoding !== "utf8") continue;
          if (dir === "" && entry.name === GUEST_JOBS_DIR) continue;
          const rel = dir === "" ? entry.name : `${dir}/${entry.name}`;
          if (dirs.length >= MAX_REPORTED_WORKSPACE_DIRS || read > WALK_BUDGET) {
            complete = false;
            break walk;
          }
          dirs.push(rel);
          queue.push(rel);
        }
        if (!page.has_more) break;
      }
    }
  } catch {
    // A directory that cannot be listed (too many entries, removed mid-walk, not a workspace yet): say nothing certain.
    complete = false;
  }
  return { after_job: afterJob, complete, dirs: complete ? dirs.sort() : [] };
}
