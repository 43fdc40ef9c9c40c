/**
 * When the hub may trust the guest's workspace listing to refuse a cwd
 * (docs/design.md#prechecks): only while no job was claimed after the one
 * the listing was taken after, and that one completed. Hostile: a job
 * claimed later, or still running, makes every cwd pass to the guest.
 */
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { actions, jobs } from "../db/schema";
import { describeEachDatabase } from "../../test/support/databases";
import { insertHost } from "../../test/pipeline/support";
import { checkCwdReported, workspaceListingSettled } from "./workspace-dirs";

describeEachDatabase("workspace listing for cwd pre-checks", (db) => {
  async function job(hostId: string, claimedAt: Date | null, completedAt: Date | null): Promise<string> {
    const d = db().handle.db;
    const [action] = await d
      .insert(actions)
      .values({ channel: "mcp", callerKey: "token:x", operation: "run_command", capabilityId: "shell", hostId, actionHash: `sha256:${"0".repeat(64)}`, prepared: {}, riskLevel: "low", state: "dispatched" })
      .returning({ id: actions.id });
    const [row] = await d
      .insert(jobs)
      .values({ actionId: String(action?.id), hostId, payload: {}, signature: "x", state: completedAt === null ? "claimed" : "completed", claimedAt, completedAt, deadline: new Date(Date.now() + 60_000) })
      .returning({ id: jobs.id });
    return String(row?.id);
  }

  it("settled: no job ever claimed and none named; the latest claimed job named and completed — and not otherwise", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    expect(await workspaceListingSettled(d, host.id, { after_job: null })).toBe(true);
    const first = await job(host.id, new Date(Date.now() - 2000), new Date(Date.now() - 1000));
    expect(await workspaceListingSettled(d, host.id, { after_job: null })).toBe(false);
    expect(await workspaceListingSettled(d, host.id, { after_job: first })).toBe(true);
    expect(await workspaceListingSettled(d, host.id, { after_job: randomUUID() })).toBe(false);
    // A later job claimed (and still running) since the listing: nothing certain.
    const second = await job(host.id, new Date(), null);
    expect(await workspaceListingSettled(d, host.id, { after_job: first })).toBe(false);
    expect(await workspaceListingSettled(d, host.id, { after_job: second })).toBe(false);
  });

  it("checkCwdReported refuses a missing cwd only from a complete, settled listing; the root, a listed cwd, an incomplete or missing report pass", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const health = (dirs: string[], complete = true) => ({ workspace_dirs: { after_job: null, complete, dirs } });
    const target = (h: unknown) => ({ id: host.id, name: host.name, health: h });
    await expect(checkCwdReported(d, target(health(["build", "build/out"])), "build/missing")).rejects.toMatchObject({ code: "INVALID_ARGUMENT", details: { field: "cwd", cwd: "build/missing" } });
    await expect(checkCwdReported(d, target(health(["build", "build/out"])), "build/out")).resolves.toBeUndefined();
    await expect(checkCwdReported(d, target(health([])), ".")).resolves.toBeUndefined();
    await expect(checkCwdReported(d, target(health([], false)), "build/missing")).resolves.toBeUndefined();
    await expect(checkCwdReported(d, target({}), "build/missing")).resolves.toBeUndefined();
    await expect(checkCwdReported(d, target(null), "build/missing")).resolves.toBeUndefined();
    // A job claimed since: the tree may have that directory now.
    await job(host.id, new Date(), null);
    await expect(checkCwdReported(d, target(health(["build"])), "build/missing")).resolves.toBeUndefined();
  });
});
