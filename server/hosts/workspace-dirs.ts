/**
 * A `cwd` the guest will certainly refuse, refused at the hub before a person
 * is asked (docs/design.md#prechecks).
 *
 * The hub does not own the workspace tree: every action may change it, and
 * only the guest can look. So the guest reports it — every directory, listed
 * while no job ran, after the last job it finished (`workspace_dirs` in its
 * health report, sent after each job and every 30 s) — and the hub refuses a
 * cwd missing from that list only when no job can have changed the tree
 * since: the report is complete, and the job it was taken after is this
 * host's most recently claimed job and has completed (or no job was ever
 * claimed and the report names none). In every other case the hub lets the
 * action through and the guest decides (it refuses a missing cwd
 * INVALID_ARGUMENT before launching). A directory made on the host by hand,
 * outside any job, is the one change this cannot see until the next report.
 */
import { and, desc, eq, isNotNull } from "drizzle-orm";
import type { Database } from "../db";
import { jobs } from "../db/schema";
import { LeaseholdError } from "../errors";
import type { WorkspaceDirsReport } from "../trust/protocol";

/** Whether the listing still describes the workspace: no job was claimed after the one it was taken after, and that one completed. */
export async function workspaceListingSettled(db: Database, hostId: string, report: Pick<WorkspaceDirsReport, "after_job">): Promise<boolean> {
  const [latest] = await db
    .select({ id: jobs.id, completedAt: jobs.completedAt })
    .from(jobs)
    .where(and(eq(jobs.hostId, hostId), isNotNull(jobs.claimedAt)))
    .orderBy(desc(jobs.claimedAt))
    .limit(1);
  if (report.after_job === null) return latest === undefined;
  return latest !== undefined && latest.id === report.after_job && latest.completedAt !== null;
}

/**
 * Refuses `cwd` (already normalised: "." or `a/b`) with INVALID_ARGUMENT
 * naming the field when the host's settled, complete listing lacks it.
 * Anything uncertain passes.
 */
export async function checkCwdReported(db: Database, host: { id: string; name: string; health: unknown }, cwd: unknown): Promise<void> {
  if (typeof cwd !== "string" || cwd === "." || cwd === "") return;
  const report = (host.health as { workspace_dirs?: WorkspaceDirsReport } | null)?.workspace_dirs;
  if (report === undefined || !report.complete || report.dirs.includes(cwd)) return;
  if (!(await workspaceListingSettled(db, host.id, report))) return;
  throw new LeaseholdError("INVALID_ARGUMENT", `cwd: ${JSON.stringify(cwd)} is not a directory of host ${host.name}'s workspace (refused by a hub check against the directories the host reported)`, {
    tier: "hub",
    hint: "fs_list shows the workspace; create the directory first, or leave cwd out to run at the workspace root",
    details: { field: "cwd", path: "/cwd", cwd },
  });
}
