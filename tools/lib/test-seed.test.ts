import { afterEach, describe, expect, it, vi } from "vitest";
import { chooseSeed, givenSeed, seedLine } from "./test-seed.mjs";

describe("the shuffle seed (vitest.config.ts, tools/test.mjs)", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it("LEASEHOLD_TEST_SEED names the seed; unset or empty picks a fresh one; anything else is refused by name", () => {
    expect(givenSeed({ LEASEHOLD_TEST_SEED: "20261201" })).toBe(20261201);
    expect(chooseSeed({ LEASEHOLD_TEST_SEED: "5" })).toBe(5);
    expect(givenSeed({})).toBeUndefined();
    expect(givenSeed({ LEASEHOLD_TEST_SEED: "" })).toBeUndefined();
    const fresh = chooseSeed({});
    expect(Number.isSafeInteger(fresh) && fresh >= 1).toBe(true);
    for (const bad of ["-1", "1.5", "abc", "1e9", "1234567890123456"]) {
      expect(() => givenSeed({ LEASEHOLD_TEST_SEED: bad }), bad).toThrow(/LEASEHOLD_TEST_SEED must be a whole number/);
    }
  });

  it("npm test prints the seed with how to rerun it", () => {
    expect(seedLine(77)).toBe("[test] shuffle seed 77 (rerun with LEASEHOLD_TEST_SEED=77)");
  });

  it("vitest.config.ts shuffles files and cases, with the seed LEASEHOLD_TEST_SEED names", async () => {
    vi.stubEnv("LEASEHOLD_TEST_SEED", "4242");
    const { default: config } = await import("../../vitest.config");
    expect(config.test?.sequence).toEqual({ shuffle: true, seed: 4242 });
    vi.stubEnv("LEASEHOLD_TEST_SEED", "");
    vi.resetModules();
    const { default: unseeded } = await import("../../vitest.config");
    expect(unseeded.test?.sequence).toEqual({ shuffle: true });
  });
});
