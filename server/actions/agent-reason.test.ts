/**
 * The agent's reason (docs/design.md#agent-reason): bounded and one line,
 * refused with the field named before anything is held; sealed with the
 * action — the prepared action and so action_hash carry it, decision/1 its
 * digest — so that a changed reason is a different hash; shown escaped.
 */
import { describe, expect, it } from "vitest";
import { approvals } from "../db/schema";
import { canonicalDigest } from "../canonical";
import { digestOf } from "../ledger/entry";
import { approvalViewOf, buildApprovalView, renderApproval } from "../approvals/view";
import { showApproval } from "../approvals";
import { describeEachDatabase } from "../../test/support/databases";
import { rejectionOf } from "../../test/support/refusals";
import { entriesOf, insertHost, insertToken, testDeps } from "../../test/pipeline/support";
import { AGENT_REASON_MAX_CHARS, checkAgentReason, splitAgentReason, toolInputSchema } from "./agent-reason";
import { submitAction } from "./pipeline";

const RUN = { mutating: true, input_schema: { type: "object" as const, additionalProperties: false as const, properties: { command: { type: "string" as const, maxLength: 10 } } } };

describe("checkAgentReason / splitAgentReason", () => {
  it("accepts one line up to the bound (counted in code points) and refuses empty, longer, non-string and any control or line separator", () => {
    expect(checkAgentReason(undefined)).toEqual({ ok: true, reason: undefined });
    expect(checkAgentReason("rotate logs")).toEqual({ ok: true, reason: "rotate logs" });
    expect(checkAgentReason("😀".repeat(AGENT_REASON_MAX_CHARS)).ok).toBe(true);
    expect(checkAgentReason("x".repeat(AGENT_REASON_MAX_CHARS + 1))).toMatchObject({ ok: false });
    expect(checkAgentReason("")).toMatchObject({ ok: false });
    expect(checkAgentReason(42)).toMatchObject({ ok: false });
    for (const bad of ["a\nb", "a\rb", "a\u001b[31m", "a\u007f", "a\u0085", "a\u2028b", "a\u2029b", "tab\there"]) expect(checkAgentReason(bad), JSON.stringify(bad)).toMatchObject({ ok: false });
    // Invisible characters are not refused: they are escaped wherever a person reads the reason.
    expect(checkAgentReason("ok\u202egnp.exe").ok).toBe(true);
  });

  it("only a mutating operation without its own `reason` argument takes one; its tool schema lists it, the others are unchanged", () => {
    expect(splitAgentReason(RUN, { command: "ls", reason: "why" })).toEqual({ reason: "why", rest: { command: "ls" } });
    const readOnly = { ...RUN, mutating: false };
    expect(splitAgentReason(readOnly, { command: "ls", reason: "why" })).toEqual({ reason: undefined, rest: { command: "ls", reason: "why" } });
    expect(toolInputSchema(RUN).properties?.["reason"]).toMatchObject({ type: "string", maxLength: AGENT_REASON_MAX_CHARS });
    expect(toolInputSchema(readOnly)).toBe(readOnly.input_schema);
    const own = { mutating: true, input_schema: { ...RUN.input_schema, properties: { reason: { type: "string" as const, maxLength: 3 } } } };
    expect(toolInputSchema(own)).toBe(own.input_schema);
    expect(splitAgentReason(own, { reason: "abc" })).toEqual({ reason: undefined, rest: { reason: "abc" } });
  });
});

describeEachDatabase("the agent's reason in the pipeline", (db) => {
  async function holdWith(reason: string | undefined) {
    const { handle } = db();
    const host = await insertHost(handle.db);
    const caller = await insertToken(handle.db);
    const args = { host: host.name, command: "chmod -f 600 lh-reason", ...(reason === undefined ? {} : { reason }) };
    const refusal = await rejectionOf(submitAction(testDeps(handle), caller, { operation: "run_command", arguments: args, channel: "mcp" }, { waitMs: 0 }));
    return { refusal, host };
  }

  it("is sealed with the action: the prepared action carries it, action_hash covers it (another reason, another hash), decision/1 seals its digest", async () => {
    const reason = "free up space for the deploy \u202e(checked)";
    const { refusal } = await holdWith(reason);
    expect(refusal.code).toBe("APPROVAL_PENDING");
    const listing = await showApproval(db().handle.db, String(refusal.details?.["approval_id"]));
    expect(listing.prepared.reason).toBe(reason);
    expect(canonicalDigest(listing.prepared)).toBe(listing.action_hash);
    const changed = { ...listing.prepared, reason: `${reason}!` };
    expect(canonicalDigest(changed)).not.toBe(listing.action_hash);
    const { reason: _dropped, ...without } = listing.prepared;
    expect(canonicalDigest(without)).not.toBe(listing.action_hash);
    const [decision] = (await entriesOf(db().handle.db, listing.action_id)).filter((e) => e.type === "decision/1");
    expect(decision?.data).toMatchObject({ action_hash: listing.action_hash, agent_reason_digest: digestOf(reason) });

    // Shown escaped by Unicode property, on the card and in `approvals show`.
    const view = buildApprovalView(approvalViewOf(listing));
    expect(view.agent_reason).toBe("free up space for the deploy ⟨U+202E⟩(checked)");
    expect(renderApproval(approvalViewOf(listing))).toContain("  agent's reason: free up space for the deploy ⟨U+202E⟩(checked)");
  });

  it("an action without a reason carries none (its hash is as before) and decision/1 has no digest", async () => {
    const { refusal } = await holdWith(undefined);
    const listing = await showApproval(db().handle.db, String(refusal.details?.["approval_id"]));
    expect("reason" in listing.prepared).toBe(false);
    const [decision] = (await entriesOf(db().handle.db, listing.action_id)).filter((e) => e.type === "decision/1");
    expect(decision?.data).not.toHaveProperty("agent_reason_digest");
    expect(buildApprovalView(approvalViewOf(listing)).agent_reason).toBeNull();
  });

  it("a reason with a control character or over the bound is INVALID_ARGUMENT naming `reason`, and nothing is held", async () => {
    const before = await db().handle.db.select({ id: approvals.id }).from(approvals);
    for (const bad of ["line one\nline two", "x".repeat(AGENT_REASON_MAX_CHARS + 1), "bell\u0007"]) {
      const { refusal } = await holdWith(bad);
      expect(refusal.code).toBe("INVALID_ARGUMENT");
      expect(refusal.message).toMatch(/^reason /);
      expect(refusal.details).toMatchObject({ field: "reason" });
    }
    const after = await db().handle.db.select({ id: approvals.id }).from(approvals);
    expect(after.length).toBe(before.length);
  });

  it("a read-only operation takes no reason (its schema refuses the unknown field)", async () => {
    const { handle } = db();
    const host = await insertHost(handle.db);
    const caller = await insertToken(handle.db);
    const refusal = await rejectionOf(submitAction(testDeps(handle), caller, { operation: "fs_list", arguments: { host: host.name, reason: "look" }, channel: "mcp" }, { waitMs: 0 }));
    expect(refusal.code).toBe("INVALID_ARGUMENT");
    expect(refusal.message).toContain("reason");
  });
});
