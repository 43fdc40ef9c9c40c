/**
 * The dashboard, actions and console-form routers through tRPC callers with
 * real sessions, on both databases: readers get figures and pages in the
 * shapes the pages use; the console form is the owner's and offers the
 * schema's fields; a bad id is NOT_FOUND with its stable code.
 */
import { expect, it } from "vitest";
import { createAdminSession, type AdminRole } from "../../admins";
import { adminUsers } from "../../db/schema";
import type { HubRuntime } from "../../hub/runtime";
import { describeEachDatabase } from "../../../test/support/databases";
import { uniqueName } from "../../../test/pipeline/support";
import { TRPCError } from "../init";
import { appRouter } from "../root";
import type { TestDatabase } from "../../../test/support/databases";
import { sessionHeaders } from "./test-callers";

async function callerAs(db: TestDatabase, role: AdminRole) {
  const [row] = await db.handle.db.insert(adminUsers).values({ username: uniqueName(role), passwordHash: "unused", role }).returning();
  if (row === undefined) throw new Error("no admin");
  const session = await createAdminSession(db.handle.db, row.id);
  const runtime = { database: { handle: db.handle }, config: { publicUrl: "http://localhost:8700", dataDir: "/nonexistent" } } as unknown as HubRuntime;
  return appRouter.createCaller({ runtime, headers: sessionHeaders(session, runtime.config) });
}

describeEachDatabase("dashboard, actions and console-form routers", (db) => {
  it("an auditor reads the dashboard summary, 24 hourly chart buckets and an actions page", async () => {
    const auditor = await callerAs(db(), "auditor");
    const summary = await auditor.dashboard.summary();
    expect(summary.pending_approvals).toBeGreaterThanOrEqual(0);
    expect(summary.ledger.entries).toBeGreaterThanOrEqual(0);
    const charts = await auditor.dashboard.charts();
    expect(charts.actions_per_hour.length).toBe(24);
    expect(charts.latency.without_person.buckets.length).toBe(8);
    const page = await auditor.actions.list({ query: "nothing-matches-this", limit: 10 });
    expect(page).toEqual({ items: [], total: 0, offset: 0, limit: 10, has_more: false });
  });

  it("actions.get of an unknown id is NOT_FOUND with the stable code; an over-long page is refused by the input schema", async () => {
    const auditor = await callerAs(db(), "auditor");
    const error = await auditor.actions.get({ id: "00000000-0000-4000-8000-000000000000" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe("NOT_FOUND");
    const big = await auditor.actions.list({ limit: 201 }).catch((e: unknown) => e);
    expect((big as TRPCError).code).toBe("BAD_REQUEST");
  });

  it("the console form is the owner's: run_command offers command (multi-line) and its options but not host; an auditor is refused", async () => {
    const owner = await callerAs(db(), "owner");
    const targets = await owner.consoleForm.targets();
    const run = targets.operations.find((o) => o.name === "run_command");
    expect(run?.fields.find((f) => f.name === "command")).toMatchObject({ required: true, multiline: true, type: "string" });
    expect(run?.fields.map((f) => f.name)).not.toContain("host");
    expect(targets.operations.map((o) => o.name)).toEqual(expect.arrayContaining(["fs_list", "fs_read", "run_command"]));
    // Opt-in, not enabled: not offered.
    expect(targets.operations.map((o) => o.name)).not.toContain("run_command_net");
    const auditor = await callerAs(db(), "auditor");
    expect(((await auditor.consoleForm.targets().catch((e: unknown) => e)) as TRPCError).code).toBe("FORBIDDEN");
  });
});
