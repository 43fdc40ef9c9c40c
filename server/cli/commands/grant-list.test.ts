import { describe, expect, it } from "vitest";
import { grantLine } from "./grant";

describe("leasehold grant list: a grant prints as what it covers", () => {
  it("control, invisible and bidi characters in pattern, env and cwd print as escapes, never raw", () => {
    const line = grantLine({
      id: "g1",
      tool: "run_command",
      host: "web-1",
      maxRisk: "low",
      usesRemaining: 3,
      expiresAt: new Date("2030-01-01T00:00:00Z"),
      argumentPattern: "ftm\u202eexe\\.sh|r\u200bm -rf x|tag\u{e0041}",
      env: { LANG: "C\u2066" },
      stdinSha256: null,
      cwd: "src\u3164",
    });
    expect(line).toContain(String.raw`pattern "ftm\u202eexe\\.sh|r\u200bm -rf x|tag\u{e0041}"`);
    expect(line).toContain(String.raw`env LANG="C\u2066"`);
    expect(line).toContain(String.raw`cwd "src\u3164"`);
    expect(line).not.toMatch(/[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}]/u);
  });
});
