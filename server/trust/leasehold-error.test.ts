import { describe, expect, it, vi } from "vitest";
import { LeaseholdError, isLeaseholdError, toErrorPayload } from "./leasehold-error";

describe("LeaseholdError across module copies", () => {
  it("an error made by another copy of the module (another bundle) is still a LeaseholdError with its code", async () => {
    // A second, separately evaluated copy of the module, as a Next.js route bundle has.
    vi.resetModules();
    const copy = await import("./leasehold-error");
    expect(copy.LeaseholdError).not.toBe(LeaseholdError);
    const foreign = new copy.LeaseholdError("NOT_FOUND", "no such operation", { tier: "hub" });
    expect(foreign instanceof LeaseholdError).toBe(true);
    expect(isLeaseholdError(foreign)).toBe(true);
    expect(toErrorPayload(foreign)).toEqual({ code: "NOT_FOUND", message: "no such operation", retryable: false, tier: "hub" });
    expect(new Error("plain") instanceof LeaseholdError).toBe(false);
    expect({ code: "NOT_FOUND" } instanceof LeaseholdError).toBe(false);
  });
});
