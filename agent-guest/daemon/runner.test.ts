import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { thrownBy } from "../../test/support/refusals";
import { testShellPolicy, testVerifiedJob } from "../../test/support/shell-policy";
import { cwdInside, runJob, sandboxPolicyFor, type RunnerContext } from "./runner";
import type { VerifiedJob } from "./verify-job";
import { testRunnerContext } from "../../test/support/runner-context";

/**
 * run_command's cwd is checked by the workspace path rules before anything is
 * launched: an existing sub-directory becomes the sandbox's working directory
 * (/work/<sub>); a missing one is INVALID_ARGUMENT naming it, never an
 * UNENFORCEABLE launch failure.
 */

let base: string;
let ws: string;
let outside: string;
let ctx: RunnerContext;

const policy = testShellPolicy();

function job(cwd: unknown): VerifiedJob {
  return testVerifiedJob({ mutating: true, writesWorkspace: true, arguments: { host: "local", command: "pwd", cwd, env: {}, stdin: "" }, policy });
}

beforeAll(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "lh-runner-cwd-"));
  ws = path.join(base, "ws");
  outside = path.join(base, "outside");
  fs.mkdirSync(path.join(ws, "sub", "deeper"), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(ws, "file.txt"), "x");
  fs.symlinkSync(outside, path.join(ws, "link"));
  ctx = testRunnerContext(ws);
});

afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe("runner: run_command cwd", () => {
  it("an existing sub-directory becomes /work/<sub> (normalised), the root and '.' stay /work", () => {
    expect(sandboxPolicyFor(job("sub/deeper"), ctx).cwd).toBe("/work/sub/deeper");
    expect(sandboxPolicyFor(job("./sub//deeper/"), ctx).cwd).toBe("/work/sub/deeper");
    expect(sandboxPolicyFor(job("."), ctx).cwd).toBe("/work");
    expect(sandboxPolicyFor(job(undefined), ctx).cwd).toBe("/work");
  });

  it("a missing cwd is INVALID_ARGUMENT naming it, and nothing is created", () => {
    const e = thrownBy(() => cwdInside("sub/missing", ws));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain('"sub/missing"');
    expect(fs.existsSync(path.join(ws, "sub", "missing"))).toBe(false);
  });

  it("a missing cwd through runJob is a signed refusal with INVALID_ARGUMENT (no launch, not UNENFORCEABLE)", async () => {
    let launched = false;
    const outcome = await runJob(job("nope"), ctx, { onLaunch: () => (launched = true) });
    expect(outcome.kind).toBe("refused");
    expect(outcome.error?.code).toBe("INVALID_ARGUMENT");
    expect(outcome.error?.message).toContain('"nope"');
    expect(launched).toBe(false);
  });

  it("a file, a symlinked directory, '..' and an absolute path are refused by the path rules", () => {
    expect(thrownBy(() => cwdInside("file.txt", ws)).code).toBe("INVALID_ARGUMENT");
    expect(thrownBy(() => cwdInside("link", ws)).code).toBe("POLICY_REFUSED");
    expect(thrownBy(() => cwdInside("sub/../sub", ws)).code).toBe("POLICY_REFUSED");
    expect(thrownBy(() => cwdInside("/etc", ws)).code).toBe("POLICY_REFUSED");
    expect(thrownBy(() => cwdInside(42, ws)).code).toBe("INVALID_ARGUMENT");
  });
});
