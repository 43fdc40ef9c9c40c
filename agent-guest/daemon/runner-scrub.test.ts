import { generateKeyPairSync } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildNative } from "../../native/build.mjs";
import { TEST_ROOT } from "../../native/test/helpers";
import { testVerifiedJob } from "../../test/support/shell-policy";
import { parseCeiling } from "../ceiling/index";
import { FAKE } from "../../server/trust/scrub/test/corpus";
import { outputLimits, runJob, sandboxPolicyFor, type RunnerContext } from "./runner";
import type { VerifiedJob } from "./verify-job";

/**
 * The runner's order for launched output: capture more than is
 * returned, scrub the whole capture (the stdout/stderr junctions included),
 * then cut; and say when the output carried terminal control sequences.
 * The launched cases need root (the sandbox launcher); they skip, by name, without it.
 */

const MiB = 1024 * 1024;
const isRoot = process.getuid?.() === 0;
let ws: string;
let ctx: RunnerContext;

function ceiling(outputBytes: number) {
  return parseCeiling({ version: 1, workspace_root: ws, exec_dirs: ["/bin", "/usr/bin"], egress: [], max: { memory_bytes: 1 << 30, cpus: 2, pids: 512, timeout_ms: 3600_000, output_bytes: outputBytes, tmpfs_bytes: 256 << 20, tmpfs_inodes: 65_536 } });
}

function job(command: string, env: Record<string, string> = {}): VerifiedJob {
  return testVerifiedJob({ arguments: { host: "local", command, env, stdin: "" } });
}

beforeAll(() => {
  mkdirSync(TEST_ROOT, { recursive: true });
  chmodSync(TEST_ROOT, 0o755);
  ws = mkdtempSync(join(TEST_ROOT, "runner-scrub-"));
  chmodSync(ws, 0o755);
  ctx = { hostId: "h", hostKey: generateKeyPairSync("ed25519").privateKey, ceiling: ceiling(8 * MiB), tier: "C", workerDigest: `sha256:${"2".repeat(64)}` };
  if (isRoot) buildNative({ quiet: true });
});

afterAll(() => rmSync(ws, { recursive: true, force: true }));

describe("runner: capture → scrub → cut", () => {
  it("the launcher captures twice what is returned (within the ceiling), or exactly the ceiling when it is smaller", () => {
    expect(outputLimits(ceiling(8 * MiB))).toEqual({ returned: MiB, capture: 2 * MiB });
    expect(sandboxPolicyFor(job("true"), ctx).stdout_max_bytes).toBe(2 * MiB);
    expect(sandboxPolicyFor(job("true"), ctx).stderr_max_bytes).toBe(2 * MiB);
    expect(outputLimits(ceiling(1536 * 1024))).toEqual({ returned: MiB, capture: 1536 * 1024 });
    expect(outputLimits(ceiling(MiB))).toEqual({ returned: MiB, capture: MiB });
  });

  it.skipIf(!isRoot)("a token straddling the 1 MiB returned size is not half-released (launched; needs root)", async () => {
    const t = FAKE.ghp;
    const r = await runJob(job(`head -c ${MiB - 10} /dev/zero | tr '\\0' a; printf ' %s%s and more\\n' "$A" "$B"`, { A: t.slice(0, 12), B: t.slice(12) }), ctx);
    expect(r.kind).toBe("ran");
    const out = r.streams.stdout.toString("latin1");
    expect(out.length).toBeLessThanOrEqual(MiB);
    expect(out.slice(-64)).not.toContain(t.slice(0, 6));
    const art = r.evidence.envelope.artifacts.find((a) => a.name === "stdout");
    expect(art?.truncated).toBe(true);
    expect(r.evidence.envelope.redactions).toEqual({ count: 1, kinds: ["github_token"] });
  });

  it.skipIf(!isRoot)("a token split between stdout and stderr, and an OSC 52 clipboard write: redacted, and terminal_controls says so (launched; needs root)", async () => {
    const t = FAKE.ghp;
    const r = await runJob(job(`printf 'token %s' "$A"; printf '%s\\n' "$B" >&2; printf 'x\\033]52;c;aGk=\\007\\n' >&2`, { A: t.slice(0, 15), B: t.slice(15) }), ctx);
    expect(r.kind).toBe("ran");
    expect(r.streams.stdout.toString("latin1")).toBe("token [REDACTED:github_token]");
    expect(r.streams.stderr.toString("latin1")).toBe("[REDACTED:github_token]\nx\x1b]52;c;aGk=\x07\n");
    expect((r.structured as { sandbox: { terminal_controls: boolean } }).sandbox.terminal_controls).toBe(true);
    const plain = await runJob(job("echo hello"), ctx);
    expect((plain.structured as { sandbox: { terminal_controls: boolean } }).sandbox.terminal_controls).toBe(false);
  });
});
