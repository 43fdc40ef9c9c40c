import { expect, it } from "vitest";
import { submitAction } from "../../server/actions";
import { LeaseholdError } from "../../server/errors";
import { createGrant } from "../../server/policy/grants";
import { describeEachDatabase } from "../support/databases";
import { entriesOf, insertAdmin, insertHost, insertToken, testDeps, PASSKEY_OFF } from "./support";

/**
 * Risk bounds through the pipeline: an assessment that runs out of budget is a
 * sealed hold (`high`), not INTERNAL with nothing sealed; and the action's
 * environment is part of what is assessed, so a read-only command with an
 * executor variable is held instead of auto-allowed.
 */
async function held(promise: Promise<unknown>): Promise<LeaseholdError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected the action to be held");
}

describeEachDatabase("risk assessment bounds and environment in the pipeline", (db) => {
  it("8,001 `true`s joined by && are held as high and the hold is sealed (no INTERNAL)", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const command = Array(8001).fill("true").join(" && ");
    const error = await held(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command }, channel: "mcp" }, { waitMs: 0 }));
    expect(error.code).toBe("APPROVAL_PENDING");
    expect(error.details?.["risk"]).toBe("high");
    const entries = await entriesOf(db().handle.db, String(error.details?.["action_id"]));
    expect(entries.map((e) => `${e.type}:${"outcome" in e.data ? String(e.data.outcome) : ""}`)).toEqual(["decision/1:hold"]);
  });

  it("tar -tf is auto-allowed alone and held as high with TAR_OPTIONS in its env", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const plain = await submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "tar -tf a.tar" }, channel: "mcp" }, { waitMs: 0 });
    expect(plain.decision).toBe("auto_allow");
    const error = await held(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "tar -tf a.tar", env: { TAR_OPTIONS: "--checkpoint=1 --checkpoint-action=exec=sh" } }, channel: "mcp" }, { waitMs: 0 }));
    expect(error.code).toBe("APPROVAL_PENDING");
    expect(error.details?.["risk"]).toBe("high");
  });

  it("git status with GIT_CONFIG_COUNT/KEY/VALUE (core.fsmonitor) is held as high", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const env = { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "core.fsmonitor", GIT_CONFIG_VALUE_0: "sh -c 'rm -f x'" };
    const error = await held(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "git status", env }, channel: "mcp" }, { waitMs: 0 }));
    expect(error.code).toBe("APPROVAL_PENDING");
    expect(error.details?.["risk"]).toBe("high");
  });

  it("hostile: padding past the assessor's budget, then rm -rf /, is held for a person even with a grant that would cover any high command", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const admin = await insertAdmin(db().handle.db);
    const grant = await createGrant(db().handle.db, admin, { tool: "run_command", host: host.name, maxRisk: "high", uses: 5, expiresAt: new Date(Date.now() + 3600_000) }, PASSKEY_OFF);
    const command = `${Array(8001).fill("true").join(" && ")} && rm -rf /`;
    const error = await held(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command }, channel: "mcp" }, { waitMs: 0 }));
    expect(error.code).toBe("APPROVAL_PENDING");
    const entries = await entriesOf(db().handle.db, String(error.details?.["action_id"]));
    expect(entries.map((e) => e.type)).not.toContain("grant/1");
    // The same grant still covers an analysed high-risk command.
    const granted = await submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "rm -rf build" }, channel: "mcp" }, { waitMs: 0 });
    expect(granted.decision).toBe("grant");
    expect(granted.grant_id).toBe(grant.id);
  });
});
