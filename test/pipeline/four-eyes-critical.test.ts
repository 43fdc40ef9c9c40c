/**
 * Optional four-eyes for critical actions (LEASEHOLD_FOUR_EYES_CRITICAL=1):
 * the first approval is recorded and sealed but the action stays held; the
 * same person cannot approve twice; a second, different approver completes it.
 */
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { submitAction } from "../../server/actions";
import { approve, pageApprovals } from "../../server/approvals";
import { approvals } from "../../server/db/schema";
import { describeEachDatabase } from "../support/databases";
import { rejectionOf } from "../support/refusals";
import { allEntries, insertAdmin, insertHost, insertToken, testDeps } from "./support";

describeEachDatabase("four-eyes for critical actions", (db) => {
  async function heldCritical() {
    const d = db().handle.db;
    const host = await insertHost(d);
    const caller = await insertToken(d);
    const error = await rejectionOf(submitAction(testDeps(db().handle), caller, { operation: "run_command", arguments: { host: host.name, command: "rm -rf /" }, channel: "mcp" }, { waitMs: 0 }));
    expect(error.details?.["risk"]).toBe("critical");
    return { approvalId: String(error.details?.["approval_id"]), actionId: String(error.details?.["action_id"]) };
  }

  it("the first approval leaves the action held and is sealed; the same approver is refused; a second approver completes it", async () => {
    const d = db().handle.db;
    const first = await insertAdmin(d);
    const second = await insertAdmin(d);
    const held = await heldCritical();
    const once = await approve(d, held.approvalId, first, null, { fourEyesCritical: true });
    expect(once.state).toBe("pending");
    expect(once.firstApprovedBy).toBe(first.id);
    const sealed = (await allEntries(d)).filter((e) => e.action_id === held.actionId);
    expect(sealed.some((e) => e.type === "admin/1" && e.data.operation === "approval.first")).toBe(true);
    expect(sealed.some((e) => e.type === "approval/1")).toBe(false);
    expect((await pageApprovals(d, { state: "pending" })).items.find((i) => i.id === held.approvalId)?.first_approved_at).not.toBeNull();

    const again = await rejectionOf(approve(d, held.approvalId, first, null, { fourEyesCritical: true }));
    expect(again.code).toBe("POLICY_REFUSED");
    expect(again.message).toContain("a second, different approver");

    const done = await approve(d, held.approvalId, second, "checked twice", { fourEyesCritical: true });
    expect(done.state).toBe("approved");
    expect(done.decidedBy).toBe(second.id);
    const [row] = await d.select().from(approvals).where(eq(approvals.id, held.approvalId));
    expect(row?.firstApprovedBy).toBe(first.id);
    expect((await allEntries(d)).filter((e) => e.action_id === held.actionId && e.type === "approval/1").map((e) => e.type === "approval/1" && e.data.outcome)).toEqual(["approved"]);
  });

  it("without the setting one approver decides a critical action, and a denial by the first person needs no second", async () => {
    const d = db().handle.db;
    const admin = await insertAdmin(d);
    expect((await approve(d, (await heldCritical()).approvalId, admin, null)).state).toBe("approved");
    const { deny } = await import("../../server/approvals");
    expect((await deny(d, (await heldCritical()).approvalId, admin, "no", { fourEyesCritical: true })).state).toBe("denied");
  });
});
