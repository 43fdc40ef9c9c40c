import { describe, expect, it } from "vitest";
import type { ActionOutcome } from "../../actions";
import { LeaseholdError } from "../../errors";
import { shapeOutcome } from "./actions";
import { toolError } from "./result";

const dispatched: ActionOutcome = {
  status: "dispatched",
  action_id: "0f0e0d0c-0b0a-4908-8706-050403020100",
  action_hash: `sha256:${"1".repeat(64)}`,
  operation: "run_command",
  host: "h1",
  risk: { level: "low", reasons: [] },
  decision: "approved",
  grant_id: null,
  approval_id: "10000000-0000-4000-8000-000000000001",
  lease_id: "20000000-0000-4000-8000-000000000002",
  job: { id: "30000000-0000-4000-8000-000000000003", deadline: "2026-12-01T01:00:00.000Z" },
  replayed: false,
};

describe("tool result shapes", () => {
  it("a completed action carries output, exit, the evidence summary with the host-signed envelope, and the ledger receipt", () => {
    const shaped = shapeOutcome({
      ...dispatched,
      status: "completed",
      result: {
        state: "completed",
        exit: { code: 0, signal: null, timed_out: false, oom_killed: false },
        output: { stdout: "hi\n", stderr: "", stdout_bytes: 3, stderr_bytes: 0, stdout_truncated: false, stderr_truncated: false },
        structured: null,
        evidence: { digest: `sha256:${"2".repeat(64)}`, key_id: "k1", state: "completed", tier: "A", worker_digest: `sha256:${"3".repeat(64)}`, redactions: { count: 0, kinds: [] }, limitations: [], envelope: { big: true }, signature: { alg: "Ed25519", key_id: "k1", sig: "c2ln" } },
        ledger_entry_id: "42",
        receipt: { leaf_index: 41, tree_size: 50, inclusion_proof: ["aGFzaA=="], checkpoint: "hub\n50\nroot\n" },
      },
    });
    expect(shaped).toMatchObject({
      action_id: dispatched.action_id,
      status: "completed",
      result: { state: "completed", exit: { code: 0 }, output: { stdout: "hi\n" } },
      evidence: { digest: `sha256:${"2".repeat(64)}`, tier: "A", redactions: { count: 0 } },
      receipt: { leaf_index: 41, tree_size: 50, checkpoint: "hub\n50\nroot\n" },
      ledger_entry_id: "42",
    });
    // The envelope once, in its signed form (as the guest sent it), not beside the summary.
    expect(shaped.evidence).not.toHaveProperty("envelope");
    expect(shaped.evidence).toMatchObject({ key_id: "k1", signed: { envelope: { big: true }, signature: { alg: "Ed25519", key_id: "k1", sig: "c2ln" } } });
    expect(shaped.hint).toMatch(/audit_proof/);
  });

  it("a dispatched action says honestly that no result exists yet", () => {
    const shaped = shapeOutcome(dispatched);
    expect(shaped).toMatchObject({ status: "dispatched", job: dispatched.job, lease_id: dispatched.lease_id });
    expect(shaped).not.toHaveProperty("result");
    expect(shaped).not.toHaveProperty("receipt");
    expect(shaped.hint).toMatch(/approval_wait/);
  });

  it("errors are {code, message, retryable, hint} with the held action's id, risk, reasons and deadline (or a lease holder) at the top", () => {
    const pending = toolError(
      new LeaseholdError("APPROVAL_PENDING", "held", { retryable: true, hint: "wait", details: { action_id: "a", approval_id: "b", risk: "high", reasons: [{ rule: "r" }], deadline: "2026-12-01T00:05:00.000Z" } }),
    );
    expect(pending.isError).toBe(true);
    expect(pending.structuredContent).toMatchObject({ code: "APPROVAL_PENDING", message: "held", retryable: true, hint: "wait", action_id: "a", approval_id: "b", risk: "high", reasons: [{ rule: "r" }], deadline: "2026-12-01T00:05:00.000Z" });
    const busy = toolError(new LeaseholdError("HOST_BUSY", "busy", { retryable: true, details: { holder: 'agent token "ci"', lease_id: "l" } }));
    expect(busy.structuredContent).toMatchObject({ code: "HOST_BUSY", retryable: true, holder: 'agent token "ci"', lease_id: "l" });
    expect(toolError(new Error("boom")).structuredContent).toMatchObject({ code: "INTERNAL", retryable: false });
  });
});
