import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildNative } from "../../native/build.mjs";
import { TEST_ROOT } from "../../native/test/helpers";
import { BUILTIN_MANIFESTS } from "../../server/capabilities/builtin";
import { capabilityPolicy } from "../../server/capabilities/policy-compile";
import type { Manifest } from "../../server/capabilities/manifest-schema";
import { defaultCeiling } from "../../server/hosts/local-guest";
import { testRunnerContext } from "../../test/support/runner-context";
import { testVerifiedJob } from "../../test/support/shell-policy";
import { parseCeiling } from "../ceiling/index";
import { runJob, type RunnerContext } from "./runner";

/**
 * The operator's own installs stay out of a lease by default: with the
 * ceiling `leasehold start` writes (`defaultCeiling`) and the shipped
 * manifests, `run_command` and `run_code` see an empty `/usr/local` — a
 * marker file this test puts in the host's `/usr/local/bin` is not there,
 * and cannot be run. `/usr/local/*` shows only where an operator lists it
 * (ceiling and a manifest both). Real sandbox launches; needs root.
 */

const manifest = (id: string): Manifest => {
  const found = BUILTIN_MANIFESTS.find((m) => (m.manifest as { id: string }).id === id);
  if (found === undefined) throw new Error(`no builtin manifest ${id}`);
  return found.manifest as unknown as Manifest;
};

let ws: string;
let marker: string;
let ctx: RunnerContext;

describe.skipIf(process.getuid?.() !== 0)("the default ceiling and the shipped manifests show nothing of /usr/local (real sandbox; needs root)", () => {
  beforeAll(() => {
    buildNative({ quiet: true });
    fs.mkdirSync(TEST_ROOT, { recursive: true });
    fs.chmodSync(TEST_ROOT, 0o755);
    ws = fs.mkdtempSync(path.join(TEST_ROOT, "usr-local-"));
    fs.chmodSync(ws, 0o755);
    fs.mkdirSync("/usr/local/bin", { recursive: true });
    marker = `/usr/local/bin/leasehold-marker-${randomBytes(6).toString("hex")}`;
    fs.writeFileSync(marker, "#!/bin/sh\necho marker ran\n", { mode: 0o755 });
    ctx = testRunnerContext(ws, { ceiling: parseCeiling(defaultCeiling(ws)) });
  }, 120_000);

  afterAll(() => {
    fs.rmSync(marker, { force: true });
    fs.rmSync(ws, { recursive: true, force: true });
  });

  it("neither the default ceiling nor any shipped manifest names a directory under /usr/local", () => {
    const underUsrLocal = (d: string) => d === "/usr/local" || d.startsWith("/usr/local/");
    expect(parseCeiling(defaultCeiling(ws)).exec_dirs.filter(underUsrLocal)).toEqual([]);
    for (const { manifest: m } of BUILTIN_MANIFESTS) {
      const sandbox = (m as { sandbox?: { exec_allow?: string[] } }).sandbox;
      expect({ id: (m as { id: string }).id, under: (sandbox?.exec_allow ?? []).filter(underUsrLocal) }).toEqual({ id: (m as { id: string }).id, under: [] });
    }
  });

  it("run_command under the shipped shell manifest and the default ceiling: /usr/local is empty, the marker is neither listed nor runnable", async () => {
    const name = path.basename(marker);
    const out = await runJob(
      testVerifiedJob({ arguments: { host: "local", command: `ls -A /usr/local; echo --; ls -A /usr/local/bin 2>&1; echo --; ${marker} 2>&1; echo exit=$?`, env: {}, stdin: "" }, policy: capabilityPolicy(manifest("shell"), "run_command") }),
      ctx,
    );
    expect(out.error, JSON.stringify(out.error)).toBeNull();
    const text = out.streams.stdout.toString();
    expect(text).not.toContain("marker ran");
    expect(text).not.toMatch(new RegExp(`^${name}$`, "m"));
    expect(text.split("--\n")[0]).toBe("");
    expect(text).toMatch(/exit=(126|127)/);
  });

  it("run_code (python3) under the shipped code manifest and the default ceiling: /usr/local is empty", async () => {
    const out = await runJob(
      testVerifiedJob({
        operation: "run_code",
        capability: { id: "code", version: "1.0.0" },
        arguments: { host: "local", language: "python3", code: "import os\nprint(sorted(os.listdir('/usr/local')))\nprint(os.path.exists(" + JSON.stringify(marker) + "))" },
        policy: capabilityPolicy(manifest("code"), "run_code"),
      }),
      ctx,
    );
    expect(out.error, JSON.stringify(out.error)).toBeNull();
    expect(out.streams.stdout.toString()).toBe("[]\nFalse\n");
  });

  it("run_code (node) whose node lies outside the exec_allow is UNENFORCEABLE naming it, nothing launched; under the shipped manifest a distribution node runs and sees an empty /usr/local", async () => {
    const nodeJob = testVerifiedJob({
      operation: "run_code",
      capability: { id: "code", version: "1.0.0" },
      arguments: { host: "local", language: "node", code: "console.log(require('node:fs').readdirSync('/usr/local').length)" },
      policy: { ...capabilityPolicy(manifest("code"), "run_code"), exec_allow: ["/bin"] },
    });
    let launched = false;
    const refused = await runJob(nodeJob, ctx, { onLaunch: () => (launched = true) });
    expect(refused.error?.code).toBe("UNENFORCEABLE");
    expect(refused.error?.message).toContain(process.execPath);
    expect(launched).toBe(false);
    // Under the shipped manifest: a distribution node (/usr/bin, /bin) runs and sees an empty /usr/local;
    // a node of the operator's own (/usr/local/bin, /opt, a home) is refused the same way, never bound.
    const shipped = await runJob({ ...nodeJob, policy: capabilityPolicy(manifest("code"), "run_code") }, ctx);
    if (["/usr/bin/", "/bin/"].some((d) => process.execPath.startsWith(d))) {
      expect(shipped.error, JSON.stringify(shipped.error)).toBeNull();
      expect(shipped.streams.stdout.toString()).toBe("0\n");
    } else {
      expect(shipped.error?.code).toBe("UNENFORCEABLE");
      expect(shipped.error?.message).toContain(process.execPath);
    }
  });
});
