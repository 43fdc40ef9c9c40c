import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildNative } from "../../native/build.mjs";
import { TEST_ROOT } from "../../native/test/helpers";
import { computeHostReadiness } from "../../server/capabilities/readiness";
import { parseManifest } from "../../server/capabilities/manifest-schema";
import { ALL_FEATURES, validManifest } from "../../server/capabilities/test-fixtures";
import { thrownBy } from "../../test/support/refusals";
import { testRunnerContext } from "../../test/support/runner-context";
import { testVerifiedJob } from "../../test/support/shell-policy";
import { healthReport, summariseCeiling, type Measured } from "./health";
import { runJob, sandboxPolicyFor, type RunnerContext } from "./runner";
import { AGENT_SHELL, SHELL_START_UP_VARIABLES, agentShellProblem } from "./shell";
import type { VerifiedJob } from "./verify-job";

/**
 * Agent shell text runs under the dialect the hub's gate parses: bash, with
 * no start-up files and no parsing switches from the environment. A host
 * without bash refuses (UNENFORCEABLE) and reports its shell capabilities
 * not ready, rather than running the text under /bin/sh.
 */

const isRoot = process.getuid?.() === 0;
let ws: string;
let ctx: RunnerContext;

function shellJob(command: string, env: Record<string, string> = {}, net = false): VerifiedJob {
  return testVerifiedJob({
    arguments: { host: "local", command, env, stdin: "" },
    ...(net ? { operation: "run_command_net", capability: { id: "egress-shell", version: "1.0.0" } } : {}),
  });
}

beforeAll(() => {
  mkdirSync(TEST_ROOT, { recursive: true });
  chmodSync(TEST_ROOT, 0o755);
  ws = mkdtempSync(join(TEST_ROOT, "runner-shell-"));
  chmodSync(ws, 0o755);
  ctx = testRunnerContext(ws);
  if (isRoot) buildNative({ quiet: true });
});

afterAll(() => rmSync(ws, { recursive: true, force: true }));

describe("agent shell: one dialect", () => {
  it("run_command and run_command_net run /bin/bash --norc --noprofile -c TEXT", () => {
    expect(sandboxPolicyFor(shellJob("((id))"), ctx).argv).toEqual(["/bin/bash", "--norc", "--noprofile", "-c", "((id))"]);
    expect(sandboxPolicyFor(shellJob("ls", {}, true), ctx).argv).toEqual(["/bin/bash", "--norc", "--noprofile", "-c", "ls"]);
  });

  it.each(SHELL_START_UP_VARIABLES)("an action env naming %s is refused INVALID_ARGUMENT naming it, before any launch", async (name) => {
    const e = thrownBy(() => sandboxPolicyFor(shellJob("true", { [name]: "/work/x" }), ctx));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain(`env ${name} is refused`);
    expect(e.details).toMatchObject({ field: `env.${name}` });
    let launched = false;
    const outcome = await runJob(shellJob("true", { [name]: "x" }), ctx, { onLaunch: () => (launched = true) });
    expect(outcome).toMatchObject({ kind: "refused", error: { code: "INVALID_ARGUMENT" } });
    expect(launched).toBe(false);
  });

  it("the list covers start-up code and parsing switches; other variables pass unchanged", () => {
    expect([...SHELL_START_UP_VARIABLES].sort()).toEqual(["BASHOPTS", "BASH_COMPAT", "BASH_ENV", "ENV", "POSIXLY_CORRECT", "SHELLOPTS"]);
    expect(sandboxPolicyFor(shellJob("true", { LANG: "C", MY_VAR: "1" }), ctx).env).toEqual({ LANG: "C", MY_VAR: "1" });
  });

  it("a host without bash refuses UNENFORCEABLE naming the path, and launches nothing (no fallback to /bin/sh)", async () => {
    const missing = join(ws, "no-such-bash");
    const noBash = testRunnerContext(ws, { agentShellPath: missing });
    const e = thrownBy(() => sandboxPolicyFor(shellJob("true"), noBash));
    expect(e.code).toBe("UNENFORCEABLE");
    expect(e.message).toContain(missing);
    expect(e.message).toContain("never under /bin/sh");
    let launched = false;
    const outcome = await runJob(shellJob("true", {}, true), noBash, { onLaunch: () => (launched = true) });
    expect(outcome).toMatchObject({ kind: "refused", error: { code: "UNENFORCEABLE" } });
    expect(launched).toBe(false);
  });

  it("the probe: this machine's /bin/bash is usable; a missing file, a directory and a file others cannot execute are not", () => {
    expect(AGENT_SHELL).toBe("/bin/bash");
    expect(agentShellProblem()).toBeNull();
    expect(agentShellProblem(join(ws, "missing"))).toMatch(/not available on this host \(ENOENT\)/);
    expect(agentShellProblem(ws)).toMatch(/not a regular file/);
    const privateFile = join(ws, "private-bash");
    writeFileSync(privateFile, "");
    chmodSync(privateFile, 0o700);
    expect(agentShellProblem(privateFile)).toMatch(/not executable by other users/);
  });

  it("health: without bash, shell and egress-shell report not_run with the reason and the hub finds them not ready; the other workers are unaffected", () => {
    const ceiling = testRunnerContext(ws).ceiling;
    const m: Measured = {
      tier: "B", bpf: null, ceiling: summariseCeiling(ceiling), host_paths: [], kernel_features: ALL_FEATURES, probe: { error: "not probed in this test" },
      self_test: "pass", self_test_detail: "", digest: `sha256:${"2".repeat(64)}`, bundles: {}, agent_shell: agentShellProblem(join(ws, "missing")),
    };
    const workers = healthReport(m, { size: 0, failure: null }, true).workers;
    const byCap = Object.fromEntries(workers.map((w) => [w.capability, w]));
    for (const cap of ["shell", "egress-shell"]) expect(byCap[cap]).toMatchObject({ self_test: "not_run", detail: expect.stringContaining("runs only under bash") });
    for (const cap of ["code", "host", "workspace"]) expect(byCap[cap]).toMatchObject({ self_test: "pass" });
    const report = { host: "h", online: true, reported_at: new Date().toISOString(), tier: m.tier, kernel_features: m.kernel_features, workers };
    const shell = computeHostReadiness(parseManifest(validManifest({ id: "shell", version: "1.0.0" }), "test:shell"), report);
    expect(shell.state).not.toBe("ready");
    expect(shell.reasons.join("; ")).toContain("guest says:");
    const withBash = healthReport({ ...m, agent_shell: null }, { size: 0, failure: null }, true).workers;
    expect(withBash.find((w) => w.capability === "shell")).toMatchObject({ self_test: "pass" });
  });

  it.skipIf(!isRoot)("launched: `((id))` is arithmetic, as the gate reads it — it prints nothing (dash would run id); bash features work (launched; needs root)", async () => {
    const arith = await runJob(shellJob("((id)); echo status=$?"), ctx);
    expect(arith.kind).toBe("ran");
    expect(arith.streams.stdout.toString()).toBe("status=1\n");
    const features = await runJob(shellJob('[[ a == a ]] && x=$(cat <<< "here"); echo "$x ${BASH_VERSION%%.*}" {1,2}'), ctx);
    expect(features.streams.stdout.toString()).toMatch(/^here \d+ 1 2\n$/);
  });
});
